"""The OpenAI Agents SDK, guarded by stalwart (`pip install stalwart[openai-agents]`).

Build the agent's tools with stalwart's factory, and run the agent through its driver:

    desk = stalwart.Agent.from_file("agent.yaml")         # tool facts, rulebook, record
    tools = StalwartTools(desk)
    agent = Agent(name="desk", model=model, tools=tools.tools(charge_card, update_crm))
    with StalwartDriver(agent, tools) as driver:
        result = driver.run_sync("charge order 4411 40.00", user="u-17")
        while result.waiting:                              # a person answers each question
            result = driver.answer_sync("u-17", ask(result.waiting[0]),
                                        question=result.waiting[0])
    print(result.text)

What the factory builds, for each function: `function_tool(fn,
failure_error_function=None, needs_approval=..., timeout=None)` with a guarded
`on_invoke_tool`, so a tool's exception (and a timeout) reaches stalwart, never the model
as text:

- `needs_approval`: the call is a step of a guarded run (`stalwart.guarded`), recorded in
  the order the SDK presents the model's calls; a step a person has not approved is an
  interruption of the SDK's run. The driver keeps the run's `RunState` JSON in the record
  at every interruption, so each write's approval is also the run's checkpoint;
- `on_invoke_tool`: a step recorded already is replayed (its recorded result), never sent
  again; any other is sent by stalwart's rules (in flight before the send, its key as
  `idempotency_key` to a function that takes one, hidden from the model, and as
  `stalwart.current_call()`; retried only when retry-safe and in doubt; a write in doubt
  asked about); a failed send rolls the run back, last write first, the undos sent by
  stalwart itself, and the SDK's run ends (`RunStopped`). A step that must wait for a
  person after all (a call of the same model answer behind a write not yet sent) ends
  the SDK's run too, and the driver takes it up from the kept `RunState`.

The driver answers the SDK's interruptions from the record only, after a person's bound
answer (`answer`, `confirm`: stalwart's `NotYourSession`, `StaleAnswer`):
`RunState.approve(item)` (never `always_approve`) for a call stalwart approved,
`RunState.reject(item, rejection_message=...)` with stalwart's declined text for a skipped
one; cancel all and "did not happen" roll the run back with no further model request. A
run given an approval by anyone else sends nothing: the tools work only under the driver.

Crash resume is partial here: the SDK checkpoints nothing mid-turn, so a run whose process
stops is taken up from the last `RunState` kept, the one of the last interruption: the
write left in flight is resolved by the record (the question "... It was being sent when
the run stopped.", or sent again under its key when retry-safe), and the model turns and
reads after that interruption are made again (they cost tokens; the model may choose
differently).

Refused when the driver is built (`UnsafeSetup`, each saying why): a function tool the
factory did not build; hosted tools (web search, file search, code interpreter, hosted
MCP, image generation, computer, shell, apply patch) beside guarded writes: they run where
stalwart cannot key, record or undo them; an agent's `mcp_servers`. Handoffs are not
followed: the driver guards the agent it is given.
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
from typing import Any, TypeVar

from .. import texts
from ..agent import Agent as StalwartAgent
from ..errors import CallLeftForAPerson, RunStateError, RunStopped, StalwartError, UnsafeSetup
from ..guarded import FrameworkTool, Guard, GuardedRun, GuardedStep, StepAction
from ..record.schema import CallStatus
from ..replies import Reply, Waiting
from ..tools import IDEMPOTENCY_KEY_PARAM
from ._answers import ContinuesAnswered
from ._bound import Bound, OwnLoop, Replied, opened, rewound

try:
    from agents import (
        Agent,
        FunctionTool,
        RunContextWrapper,
        Runner,
        RunState,
        Tool,
        function_tool,
    )
    from agents.items import ToolApprovalItem
    from agents.tool_context import ToolContext
except ImportError as missing:  # pragma: no cover - the extra is installed for the tests
    raise ImportError(texts.OPENAI_AGENTS_MISSING) from missing

__all__ = ["FRAMEWORK", "GuardedResult", "StalwartDriver", "StalwartTools", "unsafe_setups"]

FRAMEWORK = "openai-agents"

# SDK runs the driver starts for one turn or answer, at most.
_ROUNDS = 64

_R = TypeVar("_R")


@dataclass(kw_only=True)
class _Bound(Bound):
    """A guarded run, open on a thread of its own, for the SDK runs the driver makes
    (`Bound`)."""

    tools: StalwartTools


_BOUND: ContextVar[_Bound | None] = ContextVar("stalwart_openai_agents_run", default=None)


@dataclass(frozen=True)
class GuardedResult(Replied):
    """What a guarded SDK turn or answer came to: stalwart's `reply`, the agent's `output`
    when the run finished (else None), and `items`, the input list to give the next run
    (after a failed run, the rewound one)."""

    reply: Reply
    output: Any
    items: list[Any]


class StalwartTools:
    """stalwart's tool factory for the OpenAI Agents SDK: each tool is built by it, guarded
    by a stalwart agent's rules and record (`desk`)."""

    def __init__(self, desk: StalwartAgent) -> None:
        self.guard = Guard(desk, framework=FRAMEWORK)
        self.built: dict[str, FunctionTool] = {}

    def tools(self, *functions: Callable[..., Any]) -> list[Tool]:
        return [self.tool(function) for function in functions]

    def tool(self, function: Callable[..., Any]) -> FunctionTool:
        """`function` as a guarded SDK tool (see the module)."""
        base = function_tool(function, failure_error_function=None, timeout=None)
        name = base.name
        schema = dict(base.params_json_schema)
        keyed = IDEMPOTENCY_KEY_PARAM in (schema.get("properties") or {})
        if keyed:
            schema = _without_key(schema)
        self.guard.declare([FrameworkTool(name, base.description, schema, function)])
        invoke = base.on_invoke_tool

        async def needs_approval(
            ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str
        ) -> bool:
            bound = self._bound()
            step = await bound.call(GuardedRun.step, call_id, name, _given(params))
            return step.action is StepAction.WAIT

        async def on_invoke(ctx: ToolContext[Any], arguments: str) -> Any:
            bound = self._bound()
            params = _given(json.loads(arguments or "{}"))
            loop = asyncio.get_running_loop()

            def send(_typed: Mapping[str, Any], key: str | None) -> Any:
                given = (
                    json.dumps({**params, IDEMPOTENCY_KEY_PARAM: key or ""}) if keyed else arguments
                )
                return asyncio.run_coroutine_threadsafe(_awaited(invoke(ctx, given)), loop).result()

            step = await bound.call(_step_and_send, ctx.tool_call_id, name, params, send)
            return _act(step)

        built = dataclasses.replace(
            base,
            on_invoke_tool=on_invoke,
            needs_approval=needs_approval,
            params_json_schema=schema,
        )
        self.built[name] = built
        return built

    def _bound(self) -> _Bound:
        bound = _BOUND.get()
        if bound is None or bound.tools is not self:
            raise UnsafeSetup(texts.AGENTS_WITHOUT_DRIVER)
        return bound


async def _awaited(work: Awaitable[Any]) -> Any:
    return await work


def _given(params: Mapping[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in params.items() if name != IDEMPOTENCY_KEY_PARAM}


def _without_key(schema: Mapping[str, Any]) -> dict[str, Any]:
    properties = {
        name: value
        for name, value in (schema.get("properties") or {}).items()
        if name != IDEMPOTENCY_KEY_PARAM
    }
    required = [name for name in schema.get("required") or () if name != IDEMPOTENCY_KEY_PARAM]
    return {**schema, "properties": properties, "required": required}


def _step_and_send(
    run: GuardedRun,
    call_id: str,
    tool: str,
    args: dict[str, Any],
    send: Callable[[Mapping[str, Any], str | None], Any],
) -> GuardedStep:
    step = run.step(call_id, tool, args)
    return run.send(step, send) if step.action is StepAction.SEND else step


def _act(step: GuardedStep) -> Any:
    if step.action is StepAction.REPLAY:
        result = step.result  # what the model reads: JSON for what JSON can say
        return json.dumps(result) if isinstance(result, (dict, list)) else result
    if step.action is StepAction.STOP:
        assert step.reply is not None
        raise RunStopped(step.reply)
    if step.action is StepAction.WAIT:
        raise CallLeftForAPerson(step.call_id)
    raise RunStateError(texts.guarded_not_sendable(step.run, step.number, str(step.action)))


def _guards(error: BaseException) -> BaseException:
    """The guard's own exception `error` was raised for (its cause), else `error`."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, (StalwartError, CallLeftForAPerson)):
            return seen
        seen = seen.__cause__
    return error


def _find_all(run: GuardedRun, call_ids: Sequence[str]) -> list[GuardedStep | None]:
    return [run.find(call_id) for call_id in call_ids]


class StalwartDriver(OwnLoop, ContinuesAnswered):
    """Runs an OpenAI Agents SDK agent whose tools `tools` built: each turn, each person's
    answer, each run taken up again, until a person is asked or the run ends (see the
    module). The unsafe set-ups are refused here (`UnsafeSetup`). The `*_sync` methods run
    on an event loop of the driver's own (closed by `close`, or by leaving `with`)."""

    def __init__(self, agent: Agent[Any], tools: StalwartTools) -> None:
        found = unsafe_setups(agent, tools)
        if found:
            raise UnsafeSetup(texts.unsafe_setups(found))
        self.agent = agent
        self.tools = tools
        self.guard = tools.guard

    async def run(
        self,
        turn: str,
        *,
        user: str,
        session: str | None = None,
        items: Sequence[Any] | None = None,
        context: Any = None,
    ) -> GuardedResult:
        """Start a run for the person's `turn` after the app's input `items`, and drive it
        until a person is asked or it ends."""
        history = list(items or [])
        async with self._open(user, session) as bound:
            bound.kept = {"before": history, "turn": turn, "state": None}
            await bound.call(functools.partial(GuardedRun.begin, turn=turn, kept=bound.kept))
            start = [*history, {"role": "user", "content": turn}]
            return await self._drive(bound, start, context)

    async def answer(
        self,
        user: str,
        answer: str,
        *,
        question: Waiting | str | None = None,
        session: str | None = None,
        context: Any = None,
    ) -> GuardedResult:
        """A person's answer (`Guard.answer`), then the run driven on from the kept state."""
        reply = await self._blocking(
            lambda: self.guard.answer(user, answer, question=question, session=session)
        )
        return await self._after(reply, user, session, context)

    async def confirm(
        self,
        user: str,
        answer: str,
        *,
        question: Waiting | str | None = None,
        session: str | None = None,
        context: Any = None,
    ) -> GuardedResult:
        """`answer`, for a confirmation only (approve, skip, cancel all)."""
        reply = await self._blocking(
            lambda: self.guard.confirm(user, answer, question=question, session=session)
        )
        return await self._after(reply, user, session, context)

    async def resume(
        self, user: str, *, session: str | None = None, context: Any = None
    ) -> GuardedResult:
        """Take up the session's run where it stands, from the last RunState kept (see the
        module: the model turns after it are made again)."""
        async with self._open(user, session) as bound:
            if not bound.run.running:
                reply = await bound.call(GuardedRun.reply)
                if reply is None:
                    raise RunStateError(texts.no_guarded_run(self.guard.agent.session_id(user)))
                return GuardedResult(reply, None, self._items(bound.kept, reply))
            return await self._drive(bound, await self._start(bound), context)

    def run_sync(
        self,
        turn: str,
        *,
        user: str,
        session: str | None = None,
        items: Sequence[Any] | None = None,
        context: Any = None,
    ) -> GuardedResult:
        return self._sync(self.run(turn, user=user, session=session, items=items, context=context))

    def answer_sync(
        self,
        user: str,
        answer: str,
        *,
        question: Waiting | str | None = None,
        session: str | None = None,
        context: Any = None,
    ) -> GuardedResult:
        return self._sync(
            self.answer(user, answer, question=question, session=session, context=context)
        )

    def confirm_sync(
        self,
        user: str,
        answer: str,
        *,
        question: Waiting | str | None = None,
        session: str | None = None,
        context: Any = None,
    ) -> GuardedResult:
        return self._sync(
            self.confirm(user, answer, question=question, session=session, context=context)
        )

    def resume_sync(
        self, user: str, *, session: str | None = None, context: Any = None
    ) -> GuardedResult:
        return self._sync(self.resume(user, session=session, context=context))

    # --- inside ---

    async def _after(
        self, reply: Reply, user: str, session: str | None, context: Any
    ) -> GuardedResult:
        if reply.state == "running":
            return await self.resume(user, session=session, context=context)
        kept = await self._blocking(lambda: self.guard.kept(user, session=session))
        return GuardedResult(reply, None, self._items(kept, reply))

    async def _drive(self, bound: _Bound, start: Any, context: Any) -> GuardedResult:
        for _ in range(_ROUNDS):
            token = _BOUND.set(bound)
            try:
                result = await Runner.run(self.agent, start, context=context)
            except Exception as raised:
                # The SDK wraps what a tool raises (UserError "Error running tool ..."): the
                # guard's own stop, deferral or refusal is its cause.
                error = _guards(raised)
                if isinstance(error, RunStopped):
                    return GuardedResult(error.reply, None, self._items(bound.kept, error.reply))
                if isinstance(error, StalwartError):
                    raise error from raised  # refused: nothing was sent
                if not isinstance(error, CallLeftForAPerson):  # the SDK failed (model, code)
                    reply = await bound.call(GuardedRun.fail, raised)
                    return GuardedResult(reply, None, self._items(bound.kept, reply))
                result = None
            finally:
                _BOUND.reset(token)
            if result is not None and not result.interruptions:
                output = result.final_output
                text = output if isinstance(output, str) else json.dumps(output, default=str)
                reply = await bound.call(GuardedRun.finish, text)
                return GuardedResult(reply, output, list(result.to_input_list()))
            if result is not None:  # each write's approval is also the run's checkpoint
                bound.kept = {**bound.kept, "state": result.to_state().to_json()}
                await bound.call(GuardedRun.keep, bound.kept)
            now = await bound.call(GuardedRun.reply)
            assert now is not None
            if now.state != "running":
                return GuardedResult(now, None, self._items(bound.kept, now))
            start = await self._start(bound)
        raise RunStateError(texts.driver_rounds(_ROUNDS))

    async def _start(self, bound: _Bound) -> Any:
        """Where the SDK's run goes on: the kept RunState, its interruptions answered from
        the record; with none kept yet, the turn again."""
        kept_state = bound.kept.get("state")
        if not kept_state:
            return [*bound.kept.get("before", []), {"role": "user", "content": bound.kept["turn"]}]
        state: RunState[Any] = await RunState.from_json(self.agent, kept_state)
        items: list[ToolApprovalItem] = list(state.get_interruptions())
        ids = [str(getattr(item.raw_item, "call_id", "")) for item in items]
        found = await bound.call(_find_all, ids)
        for item, step in zip(items, found, strict=True):
            if step is not None and step.status == CallStatus.DECLINED:
                state.reject(item, rejection_message=texts.DECLINED_RESULT)
            else:
                state.approve(item)  # the record decides again when it is invoked
        return state

    def _items(self, kept: Any, reply: Reply) -> list[Any]:
        if not isinstance(kept, Mapping):
            return []
        before = list(kept.get("before") or [])
        turn = {"role": "user", "content": str(kept.get("turn", ""))}
        if rewound(reply):
            return [*before, turn, {"role": "assistant", "content": reply.text}]
        return [*before, turn]

    def _open(self, user: str, session: str | None) -> AbstractAsyncContextManager[_Bound]:
        return opened(self.guard, user, session, self._bound)

    def _bound(self, run: GuardedRun, executor: ThreadPoolExecutor) -> _Bound:
        return _Bound(run, executor, tools=self.tools)


def unsafe_setups(agent: Agent[Any], tools: StalwartTools) -> list[str]:
    """Why `agent`, its tools built by `tools`, would break one of stalwart's guarantees."""
    found: list[str] = []
    for tool in agent.tools:
        if isinstance(tool, FunctionTool):
            if tools.built.get(tool.name) is not tool:
                found.append(texts.unguarded_tool_refused(tool.name))
        else:
            found.append(texts.hosted_tool_refused(type(tool).__name__))
    servers = list(getattr(agent, "mcp_servers", None) or [])
    if servers:
        found.append(texts.mcp_servers_refused([getattr(s, "name", str(s)) for s in servers]))
    return found
