"""The model loop: a turn the selector cannot read, handed to the agent's model.

The model is asked between steps, and each ask is a call the record keeps, like a tool's:
a row of kind "model" in the calls table, recorded in flight (committed) before it is
sent and finished with the model's answer (its text, its tool calls, the tokens it used
and their cost) after. The runner (`runs.py`) appends the answer's tool calls to the
run as steps, in the same commit, before any of them runs; from there they are steps
like the selector's. So a run resumed on another worker finds every answer the model
gave in the record and never asks for it again; only an ask left in flight is sent again
(asking a model changes nothing in the world).

What the model is sent is rebuilt from the record each time:

- the session's memory before this run (what `agent.memory(user)` returns, less this
  run's own messages): a person's turns as user messages, everything else as the
  assistant's words; so a failed run's rewind leaves its one summary there, and none
  of the failed run's calls or results;
- the person's turn that started this run;
- each earlier answer of the model in this run with its tool calls, each answered by
  what its step came to: its result, the person's skip, the check's refusal, or "a
  person said it took effect".
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .. import logs, texts
from ..errors import (
    ModelError,
    ModelReplyInvalid,
    ModelRequestRejected,
    ModelTimedOut,
    ModelUnavailable,
)
from ..models import (
    AssistantMessage,
    Message,
    ModelProgress,
    ModelResponse,
    Stop,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ..policy.provenance import SeenResult, sources_of
from ..record.ledger import Ledger
from ..record.schema import (
    MODEL_KIND,
    CallRow,
    CallStatus,
    MessageRow,
    RunRow,
    as_recorded,
    replace_row,
)
from ..steps import PlannedStep, planned_steps
from ..tools import ToolSpec
from .context import RunContext
from .failures import ModelCapped, ModelFailed, ModelFailure, ModelRefused
from .retry import render_error

log = logging.getLogger(logs.MODEL)


@dataclass(frozen=True)
class Answer:
    """The model answered: new steps to run (its tool calls, in order), or its last word."""

    text: str | None
    steps: list[PlannedStep]


def is_model_run(ledger: Ledger, run: RunRow) -> bool:
    return any(call.kind == MODEL_KIND for call in ledger.run_calls(run.run_id))


def model_calls(ledger: Ledger, run: RunRow) -> list[CallRow]:
    return [call for call in ledger.run_calls(run.run_id) if call.kind == MODEL_KIND]


def begin(ledger: Ledger, agent: str, run: RunRow, selector: str) -> None:
    """Record the run's first ask, in flight: the run is the model's from here on."""
    ledger.put_call(_ask_row(ledger, agent, run, selector, number=1))


def ask(ledger: Ledger, context: RunContext, run: RunRow) -> Answer | ModelFailure:
    """Ask the model for the run's next steps, recording the ask before and the answer after;
    or why the run fails: the model could not be asked, or would not stop.

    The caller appends the answer's steps to the run and commits them with the answer.
    `context.grammars` are the agent's languages, for where each argument came from.
    """
    model, tools, agent, grammars = context.model, context.tools, context.name, context.grammars
    max_calls = context.max_model_calls
    asked = model_calls(ledger, run)
    pending = asked[-1] if asked and asked[-1].status == CallStatus.IN_FLIGHT else None
    selector = model.selector if model is not None else (asked[-1].tool if asked else "")
    if model is None:
        return ModelFailed(selector, "no model is loaded")
    if pending is None:
        if len(asked) >= max_calls:
            return ModelCapped(selector, len(asked))
        pending = _ask_row(ledger, agent, run, selector, number=len(asked) + 1)
    number = int(pending.args.get("ask", len(asked)))
    # The last ask the cap allows: no ask is left to read a call's result and finish, so
    # the model is told to answer in words, and calls it asks for anyway never run (a write
    # sent now could only be undone by the cap's failure).
    last = number >= max_calls
    history = request_history(ledger, run)
    pending = ledger.put_call(
        replace_row(pending, status=CallStatus.IN_FLIGHT, tries=pending.tries + 1)
    )
    ledger.commit()
    log.info(texts.MODEL_ASKED, run.session, run.run_id, selector, number, max_calls)
    try:
        response = model.complete(
            history,
            tools=list(tools.values()),
            system=texts.model_system(agent, context.instructions),
            allow_calls=not last,
            on_text=_progress(context, run, number),
        )
    except ModelError as error:
        log.info(texts.MODEL_FAILED, run.session, run.run_id, selector, render_error(error))
        ledger.put_call(
            replace_row(
                pending,
                status=CallStatus.FAILED,
                error=render_error(error),
                finished=ledger.clock.now(),
            )
        )
        return ModelFailed(selector, _detail(error))
    ledger.put_call(
        replace_row(
            pending,
            status=CallStatus.RAN,
            result=_recorded_answer(response),
            finished=ledger.clock.now(),
        )
    )
    log.info(texts.MODEL_ANSWERED, run.session, run.run_id, selector, len(response.tool_calls))
    stopped = _stopped(response, selector)
    if stopped is not None:
        return stopped
    if last and response.tool_calls:
        not_run = [call.name for call in response.tool_calls]
        return ModelCapped(selector, number, not_run)
    seen = _seen_results(ledger, run)
    steps: list[PlannedStep] = []
    for call in response.tool_calls:
        args = _in_parameter_order(tools.get(call.name), as_recorded(call.arguments))
        steps.append(
            PlannedStep(
                tool=call.name,
                args=args,
                model_call=pending.call_id,
                tool_call_id=call.id,
                sources=sources_of(args, run.turn, seen, grammars),
            )
        )
    return Answer(text=response.text, steps=steps)


def _progress(context: RunContext, run: RunRow, number: int) -> Callable[[str], None] | None:
    """What a streamed answer's text so far is handed to: the agent's progress callback."""
    on_progress = context.on_progress
    if on_progress is None:
        return None

    def told(text: str) -> None:
        on_progress(ModelProgress(session=run.session, run=run.run_id, ask=number, text=text))

    return told


def _stopped(response: ModelResponse, selector: str) -> Answer | ModelFailure | None:
    """What a stop other than an answer or tool calls makes of the run, or None to go on.

    A refusal or a filtered answer fails the run (the model will not finish it); calls cut
    off at the token limit never run (the last one's arguments may be cut short), and
    the run fails rather than ask again under the same limit; a last word cut off is
    the reply, said to be cut off.
    """
    if response.stop is Stop.REFUSED:
        return ModelRefused(selector, response.text)
    if response.stop is Stop.FILTERED:
        return ModelFailed(selector, texts.MODEL_FILTERED)
    if response.stop is Stop.TRUNCATED:
        if response.tool_calls:
            detail = texts.model_cut_off_detail([call.name for call in response.tool_calls])
            return ModelFailed(selector, detail)
        return Answer(text=texts.model_truncated_reply(response.text), steps=[])
    return None


def _in_parameter_order(spec: ToolSpec | None, args: dict[str, Any]) -> dict[str, Any]:
    """The arguments in the order the tool declares them, as a confirmation shows them."""
    if spec is None:
        return args
    known = {p.name: args[p.name] for p in spec.params if p.name in args}
    return {**known, **{name: value for name, value in args.items() if name not in known}}


def request_history(ledger: Ledger, run: RunRow) -> list[Message]:
    """What the model is sent for the run's next ask (see the module's docstring)."""
    earlier = [m for m in ledger.messages if not m.rewound and m.run_id != run.run_id]
    history = as_model_messages(earlier)
    history.append(UserMessage(text=run.turn))
    for asked in model_calls(ledger, run):
        if asked.status != CallStatus.RAN or not isinstance(asked.result, Mapping):
            continue
        calls = tuple(ToolCall.model_validate(c) for c in asked.result.get("tool_calls", []))
        # Claude's thinking blocks go back with the answer they came with (the API wants
        # them on the assistant turn whose tool calls the next request answers).
        thinking = tuple(asked.result.get("thinking", ()))
        history.append(
            AssistantMessage(text=asked.result.get("text"), tool_calls=calls, thinking=thinking)
        )
        history.extend(_tool_result(ledger, run, asked.call_id, call.id) for call in calls)
    return history


def as_model_messages(messages: list[MessageRow]) -> list[Message]:
    """Memory as a model reads it: a person's turns, and the assistant's words between them.

    Calls and results of earlier runs are told as the assistant's text (their tool-call
    ids are not kept in memory, and the providers accept a result only with its call's).
    """
    history: list[Message] = []
    said: list[str] = []
    for message in messages:
        if message.role == "user":
            if said:
                history.append(AssistantMessage(text="\n".join(said)))
                said = []
            history.append(UserMessage(text=message.content))
        elif message.role == "tool":
            said.append(texts.model_history_result(message.content))
        else:
            said.append(message.content)
    if said:
        history.append(AssistantMessage(text="\n".join(said)))
    return history


def _tool_result(ledger: Ledger, run: RunRow, asked: str, tool_call_id: str) -> ToolResultMessage:
    index = next(
        (
            i
            for i, step in enumerate(planned_steps(run.steps))
            if step.model_call == asked and step.tool_call_id == tool_call_id
        ),
        None,
    )
    call = ledger.call(f"{run.run_id}:{index + 1}") if index is not None else None
    if call is None:
        return ToolResultMessage(call_id=tool_call_id, content=texts.MODEL_NOT_RUN, is_error=True)
    if call.status == CallStatus.REFUSED:
        return ToolResultMessage(call_id=tool_call_id, content=call.error or "", is_error=True)
    if call.status == CallStatus.DECLINED:
        said = call.result if isinstance(call.result, str) else texts.DECLINED_RESULT
        return ToolResultMessage(call_id=tool_call_id, content=said)
    if call.status == CallStatus.HAPPENED:
        return ToolResultMessage(call_id=tool_call_id, content=texts.MEMORY_HAPPENED)
    return ToolResultMessage(call_id=tool_call_id, content=texts.memory_result(call.result))


def _seen_results(ledger: Ledger, run: RunRow) -> list[SeenResult]:
    """The results the model has read: every step of this run that ran, in order."""
    return [
        SeenResult(step=call.step, tool=call.tool, result=call.result)
        for call in ledger.run_calls(run.run_id)
        if call.kind in ("read", "write") and call.status == CallStatus.RAN
    ]


def _ask_row(ledger: Ledger, agent: str, run: RunRow, selector: str, *, number: int) -> CallRow:
    now = ledger.clock.now()
    return CallRow(
        call_id=f"{run.run_id}:model{number}",
        run_id=run.run_id,
        session=run.session,
        agent=agent,
        seq=ledger.next_call_seq(),
        step=len(run.steps),  # the steps recorded before this ask
        kind=MODEL_KIND,
        tool=selector,
        args={"ask": number},
        key=None,
        status=CallStatus.IN_FLIGHT,
        allowed=None,
        result=None,
        error=None,
        undoes=None,
        undone_by=None,
        bindings=None,
        created=now,
        finished=None,
    )


def _recorded_answer(response: ModelResponse) -> dict[str, Any]:
    return {
        "text": response.text,
        "tool_calls": [call.model_dump() for call in response.tool_calls],
        "usage": response.usage.model_dump(),
        "cost_usd": _cost(response.cost_usd),
        "stop_reason": response.stop_reason,
        "stop": response.stop.value,
        "thinking": list(response.thinking),
    }


def _cost(cost: Decimal | None) -> str | None:
    return None if cost is None else str(cost)


def _detail(error: ModelError) -> str:
    if isinstance(error, ModelTimedOut):
        return texts.model_timed_out_detail(error.timeout, error.attempts)
    if isinstance(error, ModelUnavailable):
        return texts.model_unavailable_detail(error.attempts, error.last_status)
    if isinstance(error, ModelRequestRejected):
        return texts.model_rejected_detail(error.status)
    if isinstance(error, ModelReplyInvalid):
        return texts.MODEL_REPLY_UNREADABLE
    return render_error(error)
