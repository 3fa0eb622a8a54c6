"""Pydantic AI, guarded by stalwart (`pip install stalwart[pydantic-ai]`).

Add the capability to an agent you already have, and run it through its driver:

    desk = stalwart.Agent.from_file("agent.yaml")        # tool facts, rulebook, record
    agent = Agent(model, tools=[charge_card, update_crm], capabilities=[StalwartGuard(desk)])
    with StalwartDriver(agent) as driver:
        result = driver.run_sync("charge order 4411 40.00", user="u-17")
        while result.waiting:                             # a person answers each question
            result = driver.answer_sync("u-17", ask(result.waiting[0]),
                                        question=result.waiting[0])
    print(result.text)

What the capability does, on Pydantic AI's own hooks:

- `prepare_tools`: every tool runs alone, in the model's order (`sequential=True`), so
  "undone last write first" has one order; a write with a framework timeout is refused
  (`UnsafeSetup`: a timed-out write becomes a retry prompt, and the model sends it again);
  an `idempotency_key` parameter is hidden from the model (stalwart fills it).
- `after_model_request`: the history, ending on the model's calls, is kept in the record
  beside the run, before any of them is sent: a run whose process stops is taken up from
  there, on any worker, and its model is not asked again for those calls.
- `wrap_tool_execute`: each call is a step of a guarded run (`stalwart.guarded`): a step
  a person has not approved is deferred (`ApprovalRequired`, whatever the run's
  `tool_call_approved` says: Pydantic AI's approval flag is never read); a step recorded
  already is replayed, never sent again; any other is sent by stalwart's rules (in flight
  before the send, its key as `idempotency_key` and `stalwart.current_call()`, retried
  only when retry-safe and in doubt, a write in doubt asked about); a failed one rolls
  the run back, last write first, the undos sent by stalwart itself, with no model and
  no Pydantic AI loop, and the run ends with one reply.
- `wrap_run`: a guarded agent runs only through its driver; `agent.run` alone is refused
  before anything is asked or sent (so is an approval forged into `deferred_tool_results`).

The driver turns each `DeferredToolRequests` into stalwart's one question (`Waiting`),
answered only by `answer` / `confirm` (bound to the user and the question: stalwart's
`NotYourSession`, `StaleAnswer`), and the answer into the next Pydantic AI run: approve
and skip go on from the kept history (a skipped call is denied with stalwart's declined
text); cancel all, and "did not happen", roll the run back with no further model request.

Refused when the driver is built (`UnsafeSetup`, each saying why): a framework timeout on
a write (`Tool(timeout=)`, `Agent(tool_timeout=)`); a durable engine around guarded
writes (`TemporalDurability`, `DBOSDurability`, `PrefectDurability`, or an agent wrapped
by one): it re-runs a write left in flight with no key, retries it on its own, and runs
the hooks where record I/O is not allowed; an inline deferred-call handler
(`HandleDeferredToolCalls`), which approves with no person's bound answer and may approve
with `ToolApproved(override_args=...)`, sending arguments nobody was shown. A call whose
arguments come back changed is `CallChanged`, and nothing is sent.

Memory: the record is stalwart's, the message history the app's. A result carries the
history to pass as `message_history` next: after a failed run, the rewound one (the
history before the turn, the turn, and the run's one reply), as stalwart's own memory is
rewound. Provider-side tools (web search, code execution run by the provider) never reach
a hook: nothing guards them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .. import texts
from ..agent import Agent as StalwartAgent
from ..config import confirms
from ..errors import RunStateError, RunStopped, StalwartError, UnsafeSetup
from ..guarded import FrameworkTool, Guard, GuardedRun, GuardedStep, StepAction
from ..record.schema import CallStatus
from ..replies import Reply, Waiting
from ..tools import IDEMPOTENCY_KEY_PARAM
from ._answers import ContinuesAnswered
from ._bound import Bound, OwnLoop, Replied, opened, rewind, rewound

try:
    from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolDenied
    from pydantic_ai.agent import AbstractAgent
    from pydantic_ai.capabilities import (
        AbstractCapability,
        CapabilityOrdering,
        HandleDeferredToolCalls,
        WrapRunHandler,
        WrapToolExecuteHandler,
    )
    from pydantic_ai.capabilities.abstract import leaf_capabilities
    from pydantic_ai.exceptions import ApprovalRequired
    from pydantic_ai.messages import (
        ModelMessage,
        ModelMessagesTypeAdapter,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        UserPromptPart,
    )
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.run import AgentRunResult
    from pydantic_ai.tools import RunContext, ToolDefinition
    from pydantic_ai.toolsets import FunctionToolset
except ImportError as missing:  # pragma: no cover - the extra is installed for the tests
    raise ImportError(texts.PYDANTIC_AI_MISSING) from missing

__all__ = ["FRAMEWORK", "GuardedResult", "StalwartDriver", "StalwartGuard", "unsafe_setups"]

FRAMEWORK = "pydantic-ai"

OutputT = TypeVar("OutputT")

# Pydantic AI runs the driver starts for one turn or answer, at most: each one either
# waits for a person, ends the run, or sends a step that waited behind another.
_ROUNDS = 64


@dataclass(kw_only=True)
class _Bound(Bound):
    """A guarded run, open on a thread of its own, for the Pydantic AI run(s) the driver
    makes (`Bound`)."""

    capability: StalwartGuard
    # A checkpoint to keep before the run's next call: kept on the run's thread then, so
    # with the commit of that call (a step's, before it is sent), not in a hop of its own.
    unkept: dict[str, Any] | None = None

    async def call(self, work: Callable[..., _R], *args: Any) -> _R:
        """`work(run, *args)`, on the run's thread (the checkpoint left to keep, first)."""
        unkept, self.unkept = self.unkept, None
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self.executor, functools.partial(_keeping, unkept, work, self.run, *args)
        )

    def checkpoint(
        self, messages: Sequence[ModelMessage], deferred: list[str] | None
    ) -> dict[str, Any]:
        """What the record keeps beside the run: the history, where this run's turn starts
        in it, the turn, and the calls deferred for a person (their ids)."""
        self.kept = {
            "messages": _dump(messages),
            "before": self.kept.get("before", 0),
            "turn": self.kept.get("turn", ""),
            "deferred": deferred,
        }
        return self.kept


_R = TypeVar("_R")


def _keeping(
    unkept: dict[str, Any] | None, work: Callable[..., _R], run: GuardedRun, *args: Any
) -> _R:
    if unkept is not None:
        run.keep(unkept)
    return work(run, *args)


# The guarded run the driver's Pydantic AI run belongs to (None: run without its driver).
_BOUND: ContextVar[_Bound | None] = ContextVar("stalwart_pydantic_ai_run", default=None)


@dataclass(frozen=True)
class GuardedResult(Replied, Generic[OutputT]):
    """What a guarded Pydantic AI turn or answer came to.

    `reply` is stalwart's (`text`, `waiting`, `state`); `output` the agent's output when
    the run finished (else None); `messages` the history to pass as `message_history`
    next (after a failed run, the rewound one: see the module).
    """

    reply: Reply
    output: OutputT | None
    messages: list[ModelMessage]


class StalwartGuard(AbstractCapability[Any]):
    """The Pydantic AI capability that guards an agent's tool calls with a stalwart agent's
    rules and record (`desk`: its agent.yaml's tool facts, rulebook and record). Run the
    agent through `StalwartDriver`."""

    def __init__(self, desk: StalwartAgent) -> None:
        self.guard = Guard(desk, framework=FRAMEWORK)
        # Tools whose function takes `idempotency_key`: stalwart gives it, the model never.
        self._keyed: set[str] = set()

    def get_ordering(self) -> CapabilityOrdering | None:
        # Innermost: a capability that retries or wraps tool calls goes through the guard,
        # which replays what the record holds instead of sending again.
        return CapabilityOrdering(position="innermost")

    def for_agent(self, agent: AbstractAgent[Any, Any]) -> AbstractCapability[Any]:
        """Refuse, as the agent is built, the set-ups its constructor already shows."""
        if isinstance(agent, Agent):
            _refuse(unsafe_setups(agent, self))
        return self

    async def wrap_run(
        self, ctx: RunContext[Any], *, handler: WrapRunHandler
    ) -> AgentRunResult[Any]:
        bound = _BOUND.get()
        if bound is None or bound.capability is not self:
            raise UnsafeSetup(texts.GUARD_WITHOUT_DRIVER)
        return await handler()

    async def prepare_tools(
        self, ctx: RunContext[Any], tool_defs: list[ToolDefinition]
    ) -> list[ToolDefinition]:
        self.guard.declare(
            FrameworkTool(d.name, d.description or "", d.parameters_json_schema) for d in tool_defs
        )
        prepared = []
        for tool_def in tool_defs:
            if tool_def.timeout is not None and self.guard.is_write(tool_def.name):
                raise UnsafeSetup(texts.write_timeout_refused(tool_def.name, tool_def.timeout))
            if tool_def.kind == "unapproved" and not _confirmed(self.guard, tool_def.name):
                raise UnsafeSetup(texts.requires_approval_refused(tool_def.name))
            schema = tool_def.parameters_json_schema
            if IDEMPOTENCY_KEY_PARAM in (schema.get("properties") or {}):
                self._keyed.add(tool_def.name)
                schema = _without_key(schema)
            prepared.append(
                dataclasses.replace(tool_def, sequential=True, parameters_json_schema=schema)
            )
        return prepared

    async def after_model_request(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        response: ModelResponse,
    ) -> ModelResponse:
        bound = self._bound()
        # Kept with the next commit: the first call's, before it is sent.
        bound.unkept = bound.checkpoint([*ctx.messages, response], deferred=None)
        return response

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: WrapToolExecuteHandler,
    ) -> Any:
        bound = self._bound()
        given = {name: value for name, value in args.items() if name != IDEMPOTENCY_KEY_PARAM}
        send = self._sender(call.tool_name, given, handler, asyncio.get_running_loop())
        step = await bound.call(_step_and_send, call.tool_call_id, call.tool_name, given, send)
        return _act(step)

    def _sender(
        self,
        tool: str,
        given: dict[str, Any],
        handler: WrapToolExecuteHandler,
        loop: asyncio.AbstractEventLoop,
    ) -> Callable[[Mapping[str, Any], str | None], Any]:
        """How a try is sent, from the guarded run's thread: the tool's own lifecycle
        (`handler`), on the run's event loop, with the arguments it validated and the key."""
        keyed = tool in self._keyed

        def send(_typed: Mapping[str, Any], key: str | None) -> Any:
            kwargs = {**given, IDEMPOTENCY_KEY_PARAM: key} if keyed else given
            return asyncio.run_coroutine_threadsafe(_awaited(handler(kwargs)), loop).result()

        return send

    def _bound(self) -> _Bound:
        bound = _BOUND.get()
        if bound is None or bound.capability is not self:
            raise UnsafeSetup(texts.GUARD_WITHOUT_DRIVER)
        return bound


def _step_and_send(
    run: GuardedRun,
    call_id: str,
    tool: str,
    args: dict[str, Any],
    send: Callable[[Mapping[str, Any], str | None], Any],
) -> GuardedStep:
    """The call's step, sent when it may be: one hop to the run's thread, not two."""
    step = run.step(call_id, tool, args)
    return run.send(step, send) if step.action is StepAction.SEND else step


def _find_all(run: GuardedRun, call_ids: Sequence[str]) -> list[GuardedStep | None]:
    return [run.find(call_id) for call_id in call_ids]


async def _awaited(work: Awaitable[Any]) -> Any:
    return await work


def _act(step: GuardedStep) -> Any:
    """What the framework does with a step: its result, a deferral, or the run's end."""
    if step.action is StepAction.REPLAY:
        return step.result
    if step.action is StepAction.WAIT:
        waiting = step.waiting
        metadata = {"stalwart": waiting.id if waiting is not None else None}
        raise ApprovalRequired(metadata=metadata)
    if step.action is StepAction.STOP:
        assert step.reply is not None
        raise RunStopped(step.reply)
    raise RunStateError(texts.guarded_not_sendable(step.run, step.number, str(step.action)))


class StalwartDriver(OwnLoop, ContinuesAnswered, Generic[OutputT]):
    """Runs a guarded Pydantic AI agent: each turn, each person's answer, each run taken up
    again, until a person is asked or the run ends (see the module).

    `agent` has a `StalwartGuard` among its capabilities (or give it as `guard`). The
    unsafe set-ups are refused here (`UnsafeSetup`). The `*_sync` methods run on an event
    loop of the driver's own (closed by `close`, or by leaving `with`).
    """

    def __init__(self, agent: Agent[Any, OutputT], *, guard: StalwartGuard | None = None):
        found = guard if guard is not None else _guard_of(agent)
        if found is None:
            raise UnsafeSetup(texts.NO_GUARD)
        _refuse(unsafe_setups(agent, found))
        self.agent = agent
        self.capability = found
        self.guard = found.guard
        self.guard.declare(_framework_tools(agent))

    # --- the person's turn, answers, and a run taken up again ---

    async def run(
        self,
        turn: str,
        *,
        user: str,
        session: str | None = None,
        message_history: Sequence[ModelMessage] | None = None,
        deps: Any = None,
    ) -> GuardedResult[OutputT]:
        """Start a run for the person's `turn` on the app's `message_history`, and drive it
        until a person is asked or it ends. `QuestionPending` while the session's run waits
        for a person; `RunStateError` while its run was left mid-way (`resume` it)."""
        history = list(message_history or [])
        async with self._open(user, session) as bound:
            bound.kept = {"before": len(history), "turn": turn}
            kept = bound.checkpoint(history, deferred=None)
            await bound.call(functools.partial(GuardedRun.begin, turn=turn, kept=kept))
            return await self._drive(bound, turn, history, None, deps)

    async def answer(
        self,
        user: str,
        answer: str,
        *,
        question: Waiting | str | None = None,
        session: str | None = None,
        deps: Any = None,
    ) -> GuardedResult[OutputT]:
        """A person's answer (`Guard.answer`: bound to the user, and with `question=` to the
        question), then the run driven on from the kept history as far as it goes."""
        reply = await self._blocking(
            lambda: self.guard.answer(user, answer, question=question, session=session)
        )
        return await self._after(reply, user, session, deps)

    async def confirm(
        self,
        user: str,
        answer: str,
        *,
        question: Waiting | str | None = None,
        session: str | None = None,
        deps: Any = None,
    ) -> GuardedResult[OutputT]:
        """`answer`, for a confirmation only (approve, skip, cancel all)."""
        reply = await self._blocking(
            lambda: self.guard.confirm(user, answer, question=question, session=session)
        )
        return await self._after(reply, user, session, deps)

    async def resume(
        self, user: str, *, session: str | None = None, deps: Any = None
    ) -> GuardedResult[OutputT]:
        """Take up the session's run where it stands, in this process: a run a stopped
        process left mid-way (its write in flight resolved first), or one an answer given
        elsewhere (the interface, `stalwart chat`) let go on. From the kept history: the
        calls of the model's last answer are not asked of the model again."""
        async with self._open(user, session) as bound:
            if not bound.run.running:
                reply = await bound.call(GuardedRun.reply)
                if reply is None:
                    raise RunStateError(texts.no_guarded_run(self.guard.agent.session_id(user)))
                return self._stopped(bound, reply)
            history = _load(bound.kept.get("messages"))
            fresh = len(history) == bound.kept.get("before")  # the model was never answered
            prompt = str(bound.kept.get("turn", "")) if fresh else None
            results = await self._results(bound, bound.kept.get("deferred"))
            return await self._drive(bound, prompt, history, results, deps)

    def run_sync(
        self,
        turn: str,
        *,
        user: str,
        session: str | None = None,
        message_history: Sequence[ModelMessage] | None = None,
        deps: Any = None,
    ) -> GuardedResult[OutputT]:
        """`run`, on the driver's own event loop."""
        return self._sync(
            self.run(turn, user=user, session=session, message_history=message_history, deps=deps)
        )

    def answer_sync(
        self,
        user: str,
        answer: str,
        *,
        question: Waiting | str | None = None,
        session: str | None = None,
        deps: Any = None,
    ) -> GuardedResult[OutputT]:
        """`answer`, on the driver's own event loop."""
        return self._sync(self.answer(user, answer, question=question, session=session, deps=deps))

    def confirm_sync(
        self,
        user: str,
        answer: str,
        *,
        question: Waiting | str | None = None,
        session: str | None = None,
        deps: Any = None,
    ) -> GuardedResult[OutputT]:
        """`confirm`, on the driver's own event loop."""
        return self._sync(self.confirm(user, answer, question=question, session=session, deps=deps))

    def resume_sync(
        self, user: str, *, session: str | None = None, deps: Any = None
    ) -> GuardedResult[OutputT]:
        """`resume`, on the driver's own event loop."""
        return self._sync(self.resume(user, session=session, deps=deps))

    # --- inside ---

    async def _after(
        self, reply: Reply, user: str, session: str | None, deps: Any
    ) -> GuardedResult[OutputT]:
        if reply.state == "running":  # approved, or skipped: the framework goes on
            return await self.resume(user, session=session, deps=deps)
        kept = await self._blocking(lambda: self.guard.kept(user, session=session))
        messages = _load(kept.get("messages") if isinstance(kept, Mapping) else None)
        if rewound(reply) and isinstance(kept, Mapping):
            messages = _rewind(messages, kept, reply)
        return GuardedResult(reply, None, messages)

    async def _drive(
        self,
        bound: _Bound,
        prompt: str | None,
        history: list[ModelMessage],
        results: DeferredToolResults | None,
        deps: Any,
    ) -> GuardedResult[OutputT]:
        for _ in range(_ROUNDS):
            token = _BOUND.set(bound)
            done: AgentRunResult[Any]
            try:
                done = await self.agent.run(
                    prompt,
                    message_history=history,
                    deferred_tool_results=results,
                    output_type=self._output_types(),
                    deps=deps,
                )
            except RunStopped as stopped:
                return self._stopped(bound, stopped.reply)
            except StalwartError:
                raise  # refused: nothing was sent, and the run stands as it was
            except Exception as error:  # the framework failed: stalwart rolls the run back
                stopped_reply = await bound.call(GuardedRun.fail, error)
                return self._stopped(bound, stopped_reply)
            finally:
                _BOUND.reset(token)
            messages = done.all_messages()
            output = done.output
            if isinstance(output, DeferredToolRequests):
                if output.calls:
                    names = [call.tool_name for call in output.calls]
                    raise UnsafeSetup(texts.external_calls_refused(names))
                deferred = [call.tool_call_id for call in output.approvals]
                kept = bound.checkpoint(messages, deferred=deferred)
                await bound.call(GuardedRun.keep, kept)
                reply = await bound.call(GuardedRun.reply)
                assert reply is not None
                if reply.state != "running":
                    return GuardedResult(reply, None, messages)
                # Nothing waits: a call deferred behind one sent since goes on at once.
                prompt, history = None, messages
                results = await self._results(bound, deferred)
                continue
            kept = bound.checkpoint(messages, deferred=None)
            await bound.call(GuardedRun.keep, kept)
            text = _text(output)
            reply = await bound.call(GuardedRun.finish, text)
            return GuardedResult(reply, output, messages)
        raise RunStateError(texts.driver_rounds(_ROUNDS))

    def _stopped(self, bound: _Bound, reply: Reply) -> GuardedResult[OutputT]:
        """A run that does not go on now (stopped, or waiting): its kept history, rewound
        when the run failed and nothing remains to undo."""
        messages = _load(bound.kept.get("messages"))
        if rewound(reply):
            messages = _rewind(messages, bound.kept, reply)
        return GuardedResult(reply, None, messages)

    async def _results(
        self, bound: _Bound, deferred: Sequence[str] | None
    ) -> DeferredToolResults | None:
        """The deferred calls' results for the next Pydantic AI run, from the record: a
        skipped call is denied with stalwart's declined text; every other goes to the guard
        again, which sends it, replays it or defers it again by what the record says."""
        if not deferred:
            return None
        ids = list(deferred)
        found = await bound.call(_find_all, ids)
        approvals: dict[str, Any] = {}
        for call_id, step in zip(ids, found, strict=True):
            declined = step is not None and step.status == CallStatus.DECLINED
            approvals[call_id] = ToolDenied(texts.DECLINED_RESULT) if declined else True
        return DeferredToolResults(approvals=approvals)

    def _output_types(self) -> list[Any]:
        spec = self.agent.output_type
        kinds = list(spec) if isinstance(spec, Sequence) and not isinstance(spec, str) else [spec]
        return kinds if DeferredToolRequests in kinds else [*kinds, DeferredToolRequests]

    def _open(self, user: str, session: str | None) -> AbstractAsyncContextManager[_Bound]:
        return opened(self.guard, user, session, self._bound)

    def _bound(self, run: GuardedRun, executor: ThreadPoolExecutor) -> _Bound:
        return _Bound(run, executor, capability=self.capability)


# --- the set-ups refused ---


def unsafe_setups(agent: Agent[Any, Any], capability: StalwartGuard) -> list[str]:
    """Why `agent`, guarded by `capability`, would break one of stalwart's guarantees: one
    sentence per set-up refused (none: it may run)."""
    found: list[str] = []
    if type(agent).__module__.startswith(_DURABLE):
        found.append(texts.durable_refused(type(agent).__name__))
    try:
        capabilities = leaf_capabilities(agent.root_capability)
    except AttributeError:  # still being built: its capabilities are bound after this one
        capabilities = []
    for other in capabilities:
        kind = type(other)
        if any(base.__module__.startswith(_DURABLE) for base in kind.__mro__):
            found.append(texts.durable_refused(kind.__name__))
        elif isinstance(other, HandleDeferredToolCalls) or (
            other is not capability
            and kind.handle_deferred_tool_calls is not AbstractCapability.handle_deferred_tool_calls
            and kind.__module__ != "pydantic_ai.capabilities.hooks"
        ):
            found.append(texts.inline_approvals_refused(kind.__name__))
    guard = capability.guard
    for tool in _function_tools(agent):
        timeout = tool[2]
        if timeout is not None and guard.is_write(tool[0].name):
            found.append(texts.write_timeout_refused(tool[0].name, timeout))
    for toolset in agent.toolsets:  # Pydantic AI's own approval flag, on a tool no one confirms
        if isinstance(toolset, FunctionToolset):
            for name, function_tool in toolset.tools.items():
                if function_tool.requires_approval and not _confirmed(guard, name):
                    found.append(texts.requires_approval_refused(name))
    return found


def _confirmed(guard: Guard, tool: str) -> bool:
    """Whether a person confirms the tool's calls (a tool agent.yaml does not know: yes)."""
    spec = guard.spec(tool)
    return spec is None or confirms(spec)


_DURABLE = "pydantic_ai.durable_exec"


def _refuse(found: list[str]) -> None:
    if found:
        raise UnsafeSetup(texts.unsafe_setups(found))


def _function_tools(agent: Agent[Any, Any]) -> list[tuple[FrameworkTool, bool, float | None]]:
    """The agent's function tools: each as stalwart reads it, whether its function takes
    Pydantic AI's run context, and the timeout it would run under."""
    found = []
    for toolset in agent.toolsets:
        if not isinstance(toolset, FunctionToolset):
            continue
        for name, tool in toolset.tools.items():
            described = FrameworkTool(
                name,
                tool.description or "",
                tool.function_schema.json_schema,
                None if tool.takes_ctx else tool.function,
            )
            timeout = tool.timeout if tool.timeout is not None else toolset.timeout
            found.append((described, tool.takes_ctx, timeout))
    return found


def _framework_tools(agent: Agent[Any, Any]) -> list[FrameworkTool]:
    return [tool for tool, _, _ in _function_tools(agent)]


def _guard_of(agent: Agent[Any, Any]) -> StalwartGuard | None:
    for capability in leaf_capabilities(agent.root_capability):
        if isinstance(capability, StalwartGuard):
            return capability
    return None


# --- histories ---


def _dump(messages: Sequence[ModelMessage]) -> Any:
    return ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")


def _load(kept: Any) -> list[ModelMessage]:
    if not kept:
        return []
    return list(ModelMessagesTypeAdapter.validate_python(kept))


def _rewind(
    messages: list[ModelMessage], kept: Mapping[str, Any], reply: Reply
) -> list[ModelMessage]:
    """The history as stalwart's memory is rewound (`rewind`), in Pydantic AI's messages."""
    return rewind(messages, kept, reply, _asked, _said)


def _asked(turn: str) -> ModelMessage:
    return ModelRequest(parts=[UserPromptPart(turn)])


def _said(text: str) -> ModelMessage:
    return ModelResponse(parts=[TextPart(text)])


def _text(output: Any) -> str:
    """The model's last word, as the run's reply: text as it is, else its JSON."""
    if isinstance(output, str):
        return output
    from pydantic_core import to_jsonable_python

    return json.dumps(to_jsonable_python(output), ensure_ascii=False, sort_keys=True)


def _without_key(schema: Mapping[str, Any]) -> dict[str, Any]:
    properties = {
        name: value
        for name, value in (schema.get("properties") or {}).items()
        if name != IDEMPOTENCY_KEY_PARAM
    }
    required = [name for name in schema.get("required") or () if name != IDEMPOTENCY_KEY_PARAM]
    return {**schema, "properties": properties, "required": required}
