"""A run: the step loop that advances it, through the table of `stalwart.states`.

A run lives in the record (`RunRow`): its state, its steps, the cursor of the next
step, the question a person is asked, and why it is failing. Each function here takes
the session's `Ledger`, advances the run as far as it can go without a person, and
leaves every change in the ledger; the driver commits:

- before every send (every try of a call, every try of an undo), in ONE commit: the call
  in flight with what the check allowed and its try number, together with everything
  that happened since the previous commit (the outcome of the call before, a message,
  the run's new cursor);
- at the end, in ONE commit: the last outcome and where the run now stands.

So a write step sent once costs two durable commits: in flight, and outcome.

A person's answers are taken in `answers.py`, a failed run's writes undone in
`rollback.py`, and a run a stopped process left mid-way resumed in `resume.py`; each
moves the run only through `move`, by the table of states and transitions in
`stalwart.states` (public: the engine's other modules, `Agent`, the interface and
`stalwart verify` each read it there).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .. import logs, texts
from ..errors import NotRecordable, UnkeyableArgument
from ..labels import step_label, step_labels
from ..policy.check import Verdict
from ..record.ledger import Ledger
from ..record.schema import TOOK_EFFECT, CallRow, CallStatus, RunRow, as_recorded, replace_row
from ..replies import Waiting
from ..states import Event, State, others_would_be_undone, transition
from ..steps import PlannedStep, recorded_steps, step_tool
from ..tools.current import sending
from ..tools.mcp import destructive
from . import model_loop
from .calls import as_current, finish, step_row, step_sources, typed_args
from .context import RunContext
from .doubt import in_doubt
from .failures import Failed, Refused, Unrecordable, recorded_failure
from .history import PastCalls
from .keys import idempotency_key
from .probe import ask_probe
from .retry import AfterFailure, after_call_failure, error_message, render_error
from .rollback import Left, rewind_run, stopped_reply, undo_writes

log = logging.getLogger(logs.RUN)


def move(ledger: Ledger, run: RunRow, event: Event, **changes: Any) -> RunRow:
    state = transition(run.state, event)
    if log.isEnabledFor(logging.INFO):  # its arguments made only for a line that is shown
        log.info(texts.RUN_MOVED, run.session, run.run_id, run.state, state.value, event.value)
    return ledger.put_run(replace_row(run, state=state.value, **changes))


# --- starting ---


def start(ledger: Ledger, context: RunContext, turn: str, steps: Sequence[PlannedStep]) -> RunRow:
    """Record a new run of these steps and advance it as far as it goes."""
    run = _new_run(ledger, turn, steps)
    run = move(ledger, run, Event.READ)
    return advance(ledger, context, run)


def start_model(ledger: Ledger, context: RunContext, turn: str) -> RunRow:
    """Record a new run whose steps the model chooses, and advance it as far as it goes."""
    run = _new_run(ledger, turn, [])
    run = move(ledger, run, Event.TO_MODEL)
    selector = context.model.selector if context.model is not None else ""
    model_loop.begin(ledger, context.name, run, selector)
    return advance(ledger, context, run)


def start_unread(ledger: Ledger, turn: str, clause: str | None, reason: str | None) -> RunRow:
    """Record a turn nothing could be read from: nothing runs, the reply says which clause."""
    run = _new_run(ledger, turn, [])
    reply = texts.unread_reply(clause, reason)
    ledger.add_message("assistant", reply, run.run_id)
    run = move(ledger, run, Event.NOT_READ, reply=reply)
    ledger.commit()
    return run


def _new_run(ledger: Ledger, turn: str, steps: Sequence[PlannedStep]) -> RunRow:
    number = len(ledger.runs) + 1
    run_id = f"{ledger.session.session}#{number}"
    message = ledger.add_message("user", turn, run_id)
    now = ledger.clock.now()
    return RunRow(
        run_id=run_id,
        session=ledger.session.session,
        number=number,
        turn=turn,
        state=State.NEW.value,
        steps=recorded_steps(steps),
        cursor=0,
        question=None,
        failure=None,
        reply=None,
        turn_seq=message.seq,
        created=now,
        updated=now,
    )


# --- going forward ---


def advance(ledger: Ledger, context: RunContext, run: RunRow, *, commit: bool = True) -> RunRow:
    """Send steps until one waits for a person, the run ends, or it fails and rolls back.

    What is left is committed, unless `commit` is False (a guarded run's question, committed
    with its framework's checkpoint before anyone is shown it)."""
    # A run a foreign agent loop drives (`stalwart.guarded`): its framework sends each step
    # through its guard, and its own model chooses what comes next; here, its steps are
    # confirmed (or refused), and a failed one rolled back.
    guarded = run.framework is not None
    while run.state == State.RUNNING:
        if run.cursor >= len(run.steps):
            if guarded:
                break
            if model_loop.is_model_run(ledger, run):
                run = _ask_model(ledger, context, run)
                continue
            reply = texts.done_reply(_outcomes(ledger, context, run))
            ledger.add_message("assistant", reply, run.run_id)
            run = move(ledger, run, Event.FINISHED, reply=reply)
            break
        index = run.cursor
        step = PlannedStep.from_record(run.steps[index])
        spec = context.tools.get(step.tool)
        # "approved": a guarded run's step a person approved, for its framework to send.
        if spec is not None and context.confirms(spec) and not step.approved:
            history = PastCalls(ledger)
            verdict = context.check.call(step.tool, step.args, history, step_sources(step))
            if not verdict.allowed:
                run = _refuse(ledger, context, run, index, step, verdict)
                continue
            waiting = _confirmation(ledger, context, run, index, step)
            run = move(ledger, run, Event.ASK, question=waiting.to_record())
            break
        if guarded:
            break
        run = send_step(ledger, context, run, index, step)
    if run.state == State.ROLLING_BACK:
        run = _roll_back(ledger, context, run)
    if commit:
        ledger.commit()
    return run


def _roll_back(ledger: Ledger, context: RunContext, run: RunRow) -> RunRow:
    """Undo the run's writes, last first; then rewind and reply (or stop, stuck)."""
    stuck = undo_writes(ledger, context, run)
    if isinstance(stuck, Left):
        # Not moved: still rolling back, for a worker whose catalogue has the undo.
        return ledger.put_run(replace_row(run, reply=stuck.reply))
    if stuck is not None:
        return move(
            ledger,
            run,
            Event.UNDO_FAILED,
            failure=stuck.failure.to_record(),
            reply=stuck.reply,
            question=stuck.question,
        )
    reply = stopped_reply(ledger, context, run)
    run = move(ledger, run, Event.UNDONE, reply=reply)
    rewind_run(ledger, run, reply)
    return run


def _ask_model(ledger: Ledger, context: RunContext, run: RunRow) -> RunRow:
    """Ask the model for the run's next steps; its last word ends the run."""
    asked = model_loop.ask(ledger, context, run)
    if not isinstance(asked, model_loop.Answer):
        return move(ledger, run, Event.MODEL_FAILED, failure=recorded_failure(asked))
    if not asked.steps:
        reply = asked.text or texts.MODEL_NO_ANSWER
        ledger.add_message("assistant", reply, run.run_id)
        return move(ledger, run, Event.FINISHED, reply=reply)
    if asked.text:
        ledger.add_message("assistant", asked.text, run.run_id)
    run = ledger.put_run(replace_row(run, steps=[*run.steps, *recorded_steps(asked.steps)]))
    # The answer is durable before any of its steps runs: a run resumed on another worker
    # takes the steps from the record and never asks the model for this answer again.
    ledger.commit()
    return run


def _confirmation(
    ledger: Ledger, context: RunContext, run: RunRow, index: int, step: PlannedStep
) -> Waiting:
    spec = context.tools[step.tool]
    sources = step.sources  # shown for a model's step; the selector's are the turn's
    # Shown exactly as the approved call will receive them, whichever process asks.
    args = typed_args(spec, step.args)
    return Waiting(
        kind="confirm",
        tool=step.tool,
        args=args,
        text=texts.confirm_question(
            step.tool,
            args,
            irreversible=spec.irreversible,
            in_atomic_run=_others_would_be_undone(ledger, context, run, index),
            sources=sources,
            destructive=destructive(spec),
        ),
        answers=texts.CONFIRM_ANSWERS,
        run=run.run_id,
        step=index + 1,
        sources=dict(sources) if sources is not None else None,
    )


def _others_would_be_undone(ledger: Ledger, context: RunContext, run: RunRow, index: int) -> bool:
    """Whether a failure after this step would undo other writes of the run, but not this."""
    earlier = [
        spec
        for call in ledger.run_calls(run.run_id)
        if call.kind == "write"
        and call.status in TOOK_EFFECT
        and (spec := context.tools.get(call.tool)) is not None
    ]
    later = [spec for s in run.steps[index + 1 :] if (spec := context.tools.get(step_tool(s)))]
    # A foreign loop's model, like stalwart's own, may still choose more steps: asked of
    # the record only when the run's writes do not say so already.
    return others_would_be_undone(earlier, later, model_run=False) or (
        run.framework is not None or model_loop.is_model_run(ledger, run)
    )


# How a call is sent: (its arguments, typed; its key) -> what it returned. `ToolSpec.call`
# unless a guarded run's framework sends it (`stalwart.guarded`).
Sender = Callable[[Mapping[str, Any], str | None], Any]


def send_step(
    ledger: Ledger,
    context: RunContext,
    run: RunRow,
    index: int,
    step: PlannedStep,
    send: Sender | None = None,
) -> RunRow:
    """Check a step, record it in flight with its key, and send it (with its retries)."""
    tool = step.tool
    spec = context.tools.get(tool)
    args = typed_args(spec, step.args) if spec is not None else dict(step.args)
    sources = step_sources(step)
    verdict = context.check.call(tool, args, PastCalls(ledger), dict(sources))
    if not verdict.allowed:
        return _refuse(ledger, context, run, index, step, verdict)
    # The session's random identity, not its name: the same name in another record, or
    # after a reset, is another session, and its keys must differ.
    try:
        key = idempotency_key(ledger.identity, f"{run.number}.{index + 1}", tool, args)
    except UnkeyableArgument as error:
        # A value with no stable form (a model's NaN): never sent, refused with the reason.
        refusal = Verdict.refused(tool, texts.unkeyable_reason(error_message(error)))
        return _refuse(ledger, context, run, index, step, refusal)
    call = ledger.put_call(
        step_row(ledger, context, run, index, tool, args, key, "in_flight", verdict.text, sources)
    )
    ledger.add_message("assistant", texts.memory_call(tool, args), run.run_id)
    return try_call(ledger, context, run, call, send, args)


def try_call(
    ledger: Ledger,
    context: RunContext,
    run: RunRow,
    call: CallRow,
    send: Sender | None = None,
    typed: dict[str, Any] | None = None,
) -> RunRow:
    """Send a recorded call until it answers, fails, or leaves a person to say what happened.

    Each try is committed in flight, with its number, before it is sent, under the key
    the call was first recorded with. `send` sends each try (the tool's own function by
    default). `typed`: the call's arguments typed as its tool declares them, when the
    caller typed them to record the call (`send_step`); else they are typed back from the
    record (the record keeps a typed value exactly, or refuses it: `as_recorded`).
    """
    spec = context.tools[call.tool]
    sender = send or spec.call
    args = typed if typed is not None else typed_args(spec, call.args)
    # A try sent before this one (retried, or left in flight by a stopped process) may
    # have taken effect; a later try failing plainly does not settle that.
    earlier_in_doubt = call.tries > 0
    while True:
        call = ledger.put_call(replace_row(call, status=CallStatus.IN_FLIGHT, tries=call.tries + 1))
        ledger.commit()
        try:
            with sending(as_current(run, call, ledger.lease_token)):
                result = sender(args, call.key)
        except Exception as error:
            verdict = after_call_failure(
                writes=spec.writes, retry_safe=spec.retry_safe, error=error, tries=call.tries
            )
            if verdict is AfterFailure.RETRY:
                call = ledger.put_call(replace_row(call, error=render_error(error)))
                log.info(
                    texts.CALL_RETRIED, run.session, run.run_id, call.tool, call.tries, call.error
                )
                earlier_in_doubt = True
                continue
            ledger.add_message(
                "tool", texts.memory_error(type(error).__name__, error_message(error)), run.run_id
            )
            if spec.writes and (earlier_in_doubt or in_doubt(error)):
                # Not retry-safe, or still in doubt after its retries, or an earlier try
                # is in doubt: nobody knows whether it took effect.
                call = ledger.put_call(replace_row(call, error=render_error(error)))
                return ask_outcome(ledger, run, call, stopped=False, context=context)
            ledger.put_call(finish(ledger, call, CallStatus.FAILED, error=render_error(error)))
            # What the tool said, for the line under the reply (whose sentence names the
            # error's class only), with the call named as the reply names it.
            label = step_label(run, step_labels(context.tools, run), call.step, call.tool)
            said = texts.tool_said(label, error_message(error))
            failed = Failed(call.tool, type(error).__name__, said)
            return move(ledger, run, Event.STEP_FAILED, failure=recorded_failure(failed))
        try:
            recorded = as_recorded(result)
        except NotRecordable as error:
            # It ran (a write took effect), but what it returned cannot be kept exactly:
            # nothing may be bound to a stand-in for it, so the step fails with the run.
            ledger.put_call(finish(ledger, call, CallStatus.RAN, error=render_error(error)))
            detail = error_message(error)
            ledger.add_message("tool", texts.memory_error(type(error).__name__, detail), run.run_id)
            failure = recorded_failure(Unrecordable(call.tool, detail))
            return move(ledger, run, Event.STEP_FAILED, failure=failure)
        call = ledger.put_call(finish(ledger, call, CallStatus.RAN, result=recorded))
        ledger.add_message("tool", texts.memory_result(call.result), run.run_id)
        return ledger.put_run(replace_row(run, cursor=call.step))


def ask_outcome(
    ledger: Ledger,
    run: RunRow,
    call: CallRow,
    *,
    stopped: bool,
    context: RunContext | None = None,
) -> RunRow:
    """Ask a person whether a write in doubt took effect; nothing is sent again. With the
    run's `context`, the question names the call apart from the run's other calls of its
    tool (`labels.step_labels`), and the write's probe, if it declares one, is asked first:
    what it found is shown under the question (`probe.py`)."""
    call = ledger.put_call(replace_row(call, status=CallStatus.IN_DOUBT))
    evidence = ask_probe(ledger, context, run, call) if context is not None else None
    named = (
        step_label(run, step_labels(context.tools, run), call.step, call.tool)
        if context is not None
        else call.tool
    )
    waiting = Waiting(
        kind="outcome",
        tool=call.tool,
        args=dict(call.args),
        text=texts.outcome_question(named, stopped=stopped),
        answers=texts.OUTCOME_ANSWERS,
        run=run.run_id,
        step=call.step,
        call=call.call_id,
        evidence=evidence,
    )
    return move(ledger, run, Event.IN_DOUBT, question=waiting.to_record())


def _refuse(
    ledger: Ledger,
    context: RunContext,
    run: RunRow,
    index: int,
    step: PlannedStep,
    verdict: Verdict,
) -> RunRow:
    tool, args, why = step.tool, dict(step.args), verdict.text
    refused = step_row(ledger, context, run, index, tool, args, None, "refused", None)
    ledger.put_call(replace_row(refused, error=why, finished=ledger.clock.now()))
    if step.tool_call_id is not None and not _wrote(ledger, run):
        # A model's step refused before anything of its run was written: the model is
        # told why, as the step's result, and chooses again. Nothing needs undoing.
        ledger.add_message("assistant", _memory_call(context, tool, args), run.run_id)
        ledger.add_message("tool", texts.memory_refused(why), run.run_id)
        return ledger.put_run(replace_row(run, cursor=index + 1))
    failure = recorded_failure(Refused(tool, verdict.reason))
    return move(ledger, run, Event.REFUSED, failure=failure)


def _wrote(ledger: Ledger, run: RunRow) -> bool:
    """Whether a write of this run took effect (so a later refusal fails the run)."""
    return any(
        call.kind == "write" and call.status in TOOK_EFFECT for call in ledger.run_calls(run.run_id)
    )


def record_declined(
    ledger: Ledger,
    context: RunContext,
    run: RunRow,
    index: int,
    step: PlannedStep,
    reason: str | None = None,
) -> None:
    """A skipped step: its call recorded declined, never sent; its result (what a model
    reads) says so, with the person's reason when they gave one."""
    tool, args = step.tool, dict(step.args)
    declined = step_row(ledger, context, run, index, tool, args, None, "declined", None)
    result = texts.declined_result(reason)
    ledger.put_call(replace_row(declined, result=result, finished=ledger.clock.now()))
    ledger.add_message("assistant", _memory_call(context, tool, args), run.run_id)
    ledger.add_message("tool", result, run.run_id)


def _memory_call(context: RunContext, tool: str, args: Mapping[str, Any]) -> str:
    """A call that did not run, as memory keeps it: its arguments as they were shown."""
    spec = context.tools.get(tool)
    return texts.memory_call(tool, typed_args(spec, args) if spec is not None else args)


def _outcomes(ledger: Ledger, context: RunContext, run: RunRow) -> list[tuple[str, Any, str]]:
    """Each step's outcome, its call named apart from the run's other calls of its tool."""
    labels = step_labels(context.tools, run)
    return [
        (step_label(run, labels, call.step, call.tool), call.result, call.status)
        for call in ledger.run_calls(run.run_id)
        if call.kind in ("read", "write")
    ]
