"""LangChain v1 / LangGraph, guarded by stalwart (`pip install stalwart[langgraph]`).

Add the middleware to an agent you already have, last (innermost), and run it through its
driver:

    desk = stalwart.Agent.from_file("agent.yaml")         # tool facts, rulebook, record
    guard = StalwartMiddleware(desk)
    graph = create_agent(model, [charge_card, update_crm], middleware=[..., guard],
                         checkpointer=SqliteSaver(sqlite3.connect("checkpoints.sqlite",
                                                                  check_same_thread=False)))
    with StalwartDriver(graph) as driver:
        result = driver.run_sync("charge order 4411 40.00", user="u-17")
        while result.waiting:                              # a person answers each question
            result = driver.answer_sync("u-17", ask(result.waiting[0]),
                                        question=result.waiting[0])
    print(result.text)

What the middleware does, in `wrap_tool_call` (and `awrap_tool_call`; a hand-built
graph gives the same to `ToolNode(wrap_tool_call=guard.wrap_tool_call)`):

- each call is a step of a guarded run (`stalwart.guarded`), recorded in the model's order
  (the calls before it in the same model message are recorded first: LangGraph runs each
  call of one message as a task of its own, at once, so the record, not the threads,
  orders them, and every write is sent alone, one after the other);
- a step a person has not approved is a LangGraph `interrupt()`; the run's checkpoint
  (durability "sync") holds the model's message, so the calls are never asked of the
  model again. The driver resumes the graph (`Command(resume=...)`) only after stalwart
  recorded a person's bound answer, and the value it resumes with is never read: the
  record says what the call does (send, replay, stop). An interrupt resumed by anyone
  else is refused before anything is sent: the middleware works only under its driver;
- a step recorded already is replayed as its `ToolMessage`, never sent again; any other is
  sent by stalwart's rules (in flight before the send, its key as `idempotency_key` to a
  tool whose function takes one, and as `stalwart.current_call()`; retried only when
  retry-safe and in doubt; a write in doubt asked about);
- a failed send rolls the run back inside the send, last write first, the undos sent by
  stalwart itself, with no model and no LangGraph step, and the middleware ends the graph
  by raising `RunStopped` (the driver returns its one reply).

LangGraph has no run-failure hook, so the driver sees a failure of the graph's own (its
model, another node) as the exception `graph.invoke` raises, and hands it to stalwart
(`GuardedRun.fail`): the run is rolled back, last write first, and replies once.

Each stalwart run is a LangGraph thread of its own (its id kept in the record beside the
run, with the turn); the history a result carries is the app's to give the next run (after
a failed run, the rewound one: the history before the turn, the turn and the one reply).

Refused when the driver is built (`UnsafeSetup`, each saying why): no checkpointer, or one
that keeps checkpoints in memory (`InMemorySaver`); a `ToolNode` whose `handle_tool_errors`
turns a write's failure into text for the model (anything but the default or False); a
node `RetryPolicy` on the tools node, or a `ToolRetryMiddleware`, around a write that is
not retry-safe, or a `ToolRetryMiddleware` that turns what it gives up on into text (the
guard's stop too, so the graph would go on after its run ended); a middleware that wraps
tool calls inside the guard; the human-in-the-loop middleware's `edit` decision (it changes
a call after the person approved it). The driver
always runs the graph with durability "sync"; a graph run any other way is not the driver's.
"""

from __future__ import annotations

import asyncio
import functools
import json
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .. import texts
from ..agent import Agent as StalwartAgent
from ..errors import RunStateError, RunStopped, StalwartError, UnsafeSetup
from ..guarded import FrameworkTool, Guard, GuardedRun, GuardedStep, StepAction
from ..replies import Reply, Waiting
from ..tools import IDEMPOTENCY_KEY_PARAM
from ._answers import ContinuesAnswered
from ._bound import Bound, Closing, Replied, opened, opened_sync, rewind, rewound

try:
    from langchain.agents.middleware import (
        AgentMiddleware,
        HumanInTheLoopMiddleware,
        ToolRetryMiddleware,
    )
    from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
    from langchain_core.tools import BaseTool
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt.tool_node import (
        ToolCallRequest,
        ToolNode,
        _default_handle_tool_errors,
        msg_content_output,
    )
    from langgraph.types import Command, interrupt
except ImportError as missing:  # pragma: no cover - the extra is installed for the tests
    raise ImportError(texts.LANGGRAPH_MISSING) from missing

__all__ = ["FRAMEWORK", "GuardedResult", "StalwartDriver", "StalwartMiddleware", "unsafe_setups"]

FRAMEWORK = "langgraph"

# What the driver resumes every pending interrupt with. Never read: the record says what a
# call does once its graph goes on.
RESUMED = "stalwart: see the record"

# LangGraph invocations the driver makes for one turn or answer, at most: each one either
# waits for a person, ends the run, or sends a step that waited behind another.
_ROUNDS = 64

_R = TypeVar("_R")
Handler = Callable[[ToolCallRequest], "ToolMessage | Command[Any]"]
AsyncHandler = Callable[[ToolCallRequest], Awaitable["ToolMessage | Command[Any]"]]


@dataclass(kw_only=True)
class _Bound(Bound):
    """A guarded run, open on a thread of its own, for the graph invocations the driver
    makes (`Bound`)."""

    middleware: StalwartMiddleware
    # What a send returned, by call id: handed back to LangGraph as it came (its artifact,
    # a Command), while the record keeps its content.
    sent: dict[str, Any] = field(default_factory=dict)


# The guarded run the driver's graph invocation belongs to (None: run without its driver).
_BOUND: ContextVar[_Bound | None] = ContextVar("stalwart_langgraph_run", default=None)


@dataclass(frozen=True)
class GuardedResult(Replied):
    """What a guarded LangGraph turn or answer came to.

    `reply` is stalwart's (`text`, `waiting`, `state`); `messages` the history to give the
    next run (after a failed run, the rewound one: see the module).
    """

    reply: Reply
    messages: list[AnyMessage]


class StalwartMiddleware(AgentMiddleware):
    """The LangChain v1 middleware that guards an agent's tool calls with a stalwart agent's
    rules and record (`desk`: its agent.yaml's tool facts, rulebook and record). Put it
    last in `create_agent(middleware=[...])` (innermost) and run the graph through
    `StalwartDriver`."""

    def __init__(self, desk: StalwartAgent) -> None:
        super().__init__()
        self.guard = Guard(desk, framework=FRAMEWORK)

    @property
    def name(self) -> str:
        return "StalwartMiddleware"

    def wrap_tool_call(self, request: ToolCallRequest, handler: Handler) -> Any:
        bound = self._bound()
        call_id, tool, args, earlier = self._call_of(request)
        send = self._sender(bound, request, handler)
        while True:
            step = bound.call_sync(_step_and_send, earlier, call_id, tool, args, send)
            if step.action is not StepAction.WAIT:
                return _act(bound, step)
            # A person is asked first: the graph stops here (the first time), and goes on
            # from this task's start when the driver resumes it; the record decides again.
            interrupt(_question(step))

    async def awrap_tool_call(self, request: ToolCallRequest, handler: AsyncHandler) -> Any:
        bound = self._bound()
        call_id, tool, args, earlier = self._call_of(request)
        loop = asyncio.get_running_loop()
        keyed = _keyed(request)

        def send(_typed: Mapping[str, Any], key: str | None) -> Any:
            work = _awaited(handler(_with_key(request, key) if keyed else request))
            return _recorded(bound, call_id, asyncio.run_coroutine_threadsafe(work, loop).result())

        while True:
            step = await bound.call(_step_and_send, earlier, call_id, tool, args, send)
            if step.action is not StepAction.WAIT:
                return _act(bound, step)
            interrupt(_question(step))

    def _sender(
        self, bound: _Bound, request: ToolCallRequest, handler: Handler
    ) -> Callable[[Mapping[str, Any], str | None], Any]:
        """How a try is sent, from the guarded run's thread: the tool's own execution
        (`handler`, inner to every other middleware), with the key for a tool that takes it."""
        keyed = _keyed(request)
        call_id = str(request.tool_call["id"])

        def send(_typed: Mapping[str, Any], key: str | None) -> Any:
            return _recorded(bound, call_id, handler(_with_key(request, key) if keyed else request))

        return send

    def _call_of(
        self, request: ToolCallRequest
    ) -> tuple[str, str, dict[str, Any], list[tuple[str, str, dict[str, Any]]]]:
        """The call, and the calls before it in its model message that run as tools (not a
        structured-output tool, which no tool node runs)."""
        call_id, tool, args, earlier = _call_of(request)
        known = [call for call in earlier if self.guard.spec(call[1]) is not None]
        return call_id, tool, args, known

    def _bound(self) -> _Bound:
        bound = _BOUND.get()
        if bound is None or bound.middleware is not self:
            raise UnsafeSetup(texts.MIDDLEWARE_WITHOUT_DRIVER)
        return bound


def _call_of(
    request: ToolCallRequest,
) -> tuple[str, str, dict[str, Any], list[tuple[str, str, dict[str, Any]]]]:
    """The call (id, tool, arguments without the key) and the calls before it in the same
    model message, in the model's order."""
    call = request.tool_call
    call_id = str(call["id"])
    earlier: list[tuple[str, str, dict[str, Any]]] = []
    state = request.state
    messages = state.get("messages", []) if isinstance(state, Mapping) else []
    for message in reversed(messages):
        if isinstance(message, AIMessage) and any(c["id"] == call_id for c in message.tool_calls):
            for other in message.tool_calls:
                if other["id"] == call_id:
                    break
                earlier.append((str(other["id"]), other["name"], _given(other["args"])))
            break
    return call_id, call["name"], _given(call["args"]), earlier


def _given(args: Mapping[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in args.items() if name != IDEMPOTENCY_KEY_PARAM}


def _keyed(request: ToolCallRequest) -> bool:
    tool = request.tool
    return tool is not None and IDEMPOTENCY_KEY_PARAM in (tool.args or {})


def _with_key(request: ToolCallRequest, key: str | None) -> ToolCallRequest:
    call = request.tool_call
    args = {**call["args"], IDEMPOTENCY_KEY_PARAM: key or ""}
    return request.override(tool_call={**call, "args": args})


async def _awaited(work: Awaitable[Any]) -> Any:
    return await work


def _recorded(bound: _Bound, call_id: str, out: Any) -> Any:
    """What the record keeps of a send's `ToolMessage`: its content, as the tool returned
    it when it is JSON (so `$result.<field>` binds an undo), else the text."""
    bound.sent[call_id] = out
    if isinstance(out, ToolMessage):
        content = out.content
        if isinstance(content, str):
            try:
                return json.loads(content)
            except ValueError:
                return content
        return content
    return None  # a Command: LangGraph's own update, handed back as it came


def _step_and_send(
    run: GuardedRun,
    earlier: list[tuple[str, str, dict[str, Any]]],
    call_id: str,
    tool: str,
    args: dict[str, Any],
    send: Callable[[Mapping[str, Any], str | None], Any],
) -> GuardedStep:
    """The call's step (the model's earlier calls recorded first), sent when it may be."""
    for other_id, other_tool, other_args in earlier:
        run.step(other_id, other_tool, other_args)
    step = run.step(call_id, tool, args)
    return run.send(step, send) if step.action is StepAction.SEND else step


def _question(step: GuardedStep) -> dict[str, Any]:
    """The interrupt's value: what a LangGraph client shows; answered only through stalwart."""
    waiting = step.waiting
    return {
        "stalwart": waiting.id if waiting is not None else None,
        "step": step.number,
        "tool": step.tool,
        "text": waiting.text if waiting is not None else None,
    }


def _act(bound: _Bound, step: GuardedStep) -> Any:
    """What LangGraph gets for a step: its message, or the run's end."""
    if step.action is StepAction.REPLAY:
        sent = bound.sent.pop(step.call_id, None)
        if sent is not None:
            return sent
        content: Any = msg_content_output(step.result)
        return ToolMessage(content=content, name=step.tool, tool_call_id=step.call_id)
    if step.action is StepAction.STOP:
        assert step.reply is not None
        raise RunStopped(step.reply)
    raise RunStateError(texts.guarded_not_sendable(step.run, step.number, str(step.action)))


class StalwartDriver(Closing, ContinuesAnswered):
    """Runs a guarded LangGraph agent: each turn, each person's answer, each run taken up
    again, until a person is asked or the run ends (see the module).

    `graph` is a compiled graph (`create_agent(...)`, or a hand-built one) whose tool calls
    go through a `StalwartMiddleware` (or give it as `guard`). The unsafe set-ups are
    refused here (`UnsafeSetup`). Every invocation runs with durability "sync". The
    `*_sync` methods invoke the graph (`graph.invoke`); `run`, `answer`, `confirm` and
    `resume` await it (`graph.ainvoke`, with an async checkpointer).
    """

    def __init__(self, graph: Any, *, guard: StalwartMiddleware | None = None) -> None:
        found = guard if guard is not None else _guard_of(graph)
        if found is None:
            raise UnsafeSetup(texts.NO_MIDDLEWARE)
        _refuse(unsafe_setups(graph, found))
        self.graph = graph
        self.middleware = found
        self.guard = found.guard
        self.guard.declare(_framework_tools(graph))

    # --- the person's turn, answers, and a run taken up again ---

    def run_sync(
        self,
        turn: str,
        *,
        user: str,
        session: str | None = None,
        messages: Sequence[AnyMessage] | None = None,
        context: Any = None,
    ) -> GuardedResult:
        """Start a run for the person's `turn` after the app's `messages`, and drive it until
        a person is asked or it ends. `QuestionPending` while the session's run waits for a
        person; `RunStateError` while its run was left mid-way (`resume_sync` it)."""
        history = list(messages or [])
        with self._open(user, session) as bound:
            thread = f"stalwart-{uuid.uuid4().hex}"
            bound.kept = {"thread": thread, "before": len(history), "turn": turn}
            bound.call_sync(functools.partial(GuardedRun.begin, turn=turn, kept=bound.kept))
            start = {"messages": [*history, HumanMessage(turn)]}
            return self._drive(bound, start, context)

    def answer_sync(
        self,
        user: str,
        answer: str,
        *,
        question: Waiting | str | None = None,
        session: str | None = None,
        context: Any = None,
    ) -> GuardedResult:
        """A person's answer (`Guard.answer`: bound to the user, and with `question=` to the
        question), then the run driven on from its checkpoint as far as it goes."""
        reply = self.guard.answer(user, answer, question=question, session=session)
        return self._after(reply, user, session, context)

    def confirm_sync(
        self,
        user: str,
        answer: str,
        *,
        question: Waiting | str | None = None,
        session: str | None = None,
        context: Any = None,
    ) -> GuardedResult:
        """`answer_sync`, for a confirmation only (approve, skip, cancel all)."""
        reply = self.guard.confirm(user, answer, question=question, session=session)
        return self._after(reply, user, session, context)

    def resume_sync(
        self, user: str, *, session: str | None = None, context: Any = None
    ) -> GuardedResult:
        """Take up the session's run where it stands, in this process: a run a stopped
        process left mid-way (its write in flight resolved first), or one an answer given
        elsewhere (the interface, `stalwart chat`) let go on. From the run's checkpoint: the
        calls of the model's last message are not asked of the model again."""
        with self._open(user, session) as bound:
            if not bound.run.running:
                reply = bound.call_sync(GuardedRun.reply)
                if reply is None:
                    raise RunStateError(texts.no_guarded_run(self.guard.agent.session_id(user)))
                return GuardedResult(reply, self._messages(bound))
            return self._drive(bound, self._resumed(bound), context)

    # --- the same, for a graph run on an event loop (graph.ainvoke; an async checkpointer) ---

    async def run(
        self,
        turn: str,
        *,
        user: str,
        session: str | None = None,
        messages: Sequence[AnyMessage] | None = None,
        context: Any = None,
    ) -> GuardedResult:
        """`run_sync`, with `graph.ainvoke`: the middleware's `awrap_tool_call` guards the
        calls (an async checkpointer: AsyncSqliteSaver, AsyncPostgresSaver)."""
        history = list(messages or [])
        async with self._aopen(user, session) as bound:
            thread = f"stalwart-{uuid.uuid4().hex}"
            bound.kept = {"thread": thread, "before": len(history), "turn": turn}
            await bound.call(functools.partial(GuardedRun.begin, turn=turn, kept=bound.kept))
            start = {"messages": [*history, HumanMessage(turn)]}
            return await self._adrive(bound, start, context)

    async def answer(
        self,
        user: str,
        answer: str,
        *,
        question: Waiting | str | None = None,
        session: str | None = None,
        context: Any = None,
    ) -> GuardedResult:
        """`answer_sync`, with `graph.ainvoke`."""
        reply = await asyncio.to_thread(
            self.guard.answer, user, answer, question=question, session=session
        )
        return await self._aafter(reply, user, session, context)

    async def confirm(
        self,
        user: str,
        answer: str,
        *,
        question: Waiting | str | None = None,
        session: str | None = None,
        context: Any = None,
    ) -> GuardedResult:
        """`confirm_sync`, with `graph.ainvoke`."""
        reply = await asyncio.to_thread(
            self.guard.confirm, user, answer, question=question, session=session
        )
        return await self._aafter(reply, user, session, context)

    async def resume(
        self, user: str, *, session: str | None = None, context: Any = None
    ) -> GuardedResult:
        """`resume_sync`, with `graph.ainvoke`."""
        async with self._aopen(user, session) as bound:
            if not bound.run.running:
                reply = await bound.call(GuardedRun.reply)
                if reply is None:
                    raise RunStateError(texts.no_guarded_run(self.guard.agent.session_id(user)))
                return GuardedResult(reply, await self._athread_messages(bound.kept))
            return await self._adrive(bound, await self._aresumed(bound), context)

    # --- inside ---

    def _after(self, reply: Reply, user: str, session: str | None, context: Any) -> GuardedResult:
        if reply.state == "running":  # approved, skipped or happened: the graph goes on
            return self.resume_sync(user, session=session, context=context)
        kept = self.guard.kept(user, session=session)
        messages = self._thread_messages(kept)
        if rewound(reply) and isinstance(kept, Mapping):
            messages = _rewind(messages, kept, reply)
        return GuardedResult(reply, messages)

    def _drive(self, bound: _Bound, start: Any, context: Any) -> GuardedResult:
        config = {"configurable": {"thread_id": bound.kept["thread"]}}
        for _ in range(_ROUNDS):
            token = _BOUND.set(bound)
            try:
                state = self.graph.invoke(start, config, context=context, durability="sync")
            except RunStopped as stopped:
                return self._stopped(bound, stopped.reply)
            except StalwartError:
                raise  # refused: nothing was sent, and the run stands as it was
            except Exception as error:  # the graph failed: stalwart rolls the run back
                return self._stopped(bound, bound.call_sync(GuardedRun.fail, error))
            finally:
                _BOUND.reset(token)
            messages = list(state.get("messages", []))
            if state.get("__interrupt__"):
                reply = bound.call_sync(GuardedRun.reply)
                assert reply is not None
                if reply.state != "running":
                    return GuardedResult(reply, messages)
                # Nothing waits: a call behind one sent since goes on at once.
                start = self._resumed(bound)
                continue
            reply = bound.call_sync(GuardedRun.finish, _text(messages))
            return GuardedResult(reply, messages)
        raise RunStateError(texts.driver_rounds(_ROUNDS))

    def _resumed(self, bound: _Bound) -> Any:
        """How the run's graph goes on: every pending interrupt resumed (the value is never
        read), or, with none pending (its process stopped mid-task), from its checkpoint."""
        config = {"configurable": {"thread_id": bound.kept["thread"]}}
        pending = self.graph.get_state(config).interrupts
        if pending:
            return Command(resume={found.id: RESUMED for found in pending})
        return None

    def _stopped(self, bound: _Bound, reply: Reply) -> GuardedResult:
        messages = self._messages(bound)
        if rewound(reply):
            messages = _rewind(messages, bound.kept, reply)
        return GuardedResult(reply, messages)

    def _messages(self, bound: _Bound) -> list[AnyMessage]:
        return self._thread_messages(bound.kept)

    def _thread_messages(self, kept: Any) -> list[AnyMessage]:
        if not isinstance(kept, Mapping) or "thread" not in kept:
            return []
        config = {"configurable": {"thread_id": kept["thread"]}}
        values = self.graph.get_state(config).values
        return list(values.get("messages", [])) if isinstance(values, Mapping) else []

    async def _aafter(
        self, reply: Reply, user: str, session: str | None, context: Any
    ) -> GuardedResult:
        if reply.state == "running":
            return await self.resume(user, session=session, context=context)
        kept = await asyncio.to_thread(self.guard.kept, user, session=session)
        messages = await self._athread_messages(kept)
        if rewound(reply) and isinstance(kept, Mapping):
            messages = _rewind(messages, kept, reply)
        return GuardedResult(reply, messages)

    async def _adrive(self, bound: _Bound, start: Any, context: Any) -> GuardedResult:
        config = {"configurable": {"thread_id": bound.kept["thread"]}}
        for _ in range(_ROUNDS):
            token = _BOUND.set(bound)
            try:
                state = await self.graph.ainvoke(start, config, context=context, durability="sync")
            except RunStopped as stopped:
                return await self._astopped(bound, stopped.reply)
            except StalwartError:
                raise
            except Exception as error:
                return await self._astopped(bound, await bound.call(GuardedRun.fail, error))
            finally:
                _BOUND.reset(token)
            messages = list(state.get("messages", []))
            if state.get("__interrupt__"):
                now = await bound.call(GuardedRun.reply)
                assert now is not None
                if now.state != "running":
                    return GuardedResult(now, messages)
                start = await self._aresumed(bound)
                continue
            reply = await bound.call(GuardedRun.finish, _text(messages))
            return GuardedResult(reply, messages)
        raise RunStateError(texts.driver_rounds(_ROUNDS))

    async def _aresumed(self, bound: _Bound) -> Any:
        config = {"configurable": {"thread_id": bound.kept["thread"]}}
        pending = (await self.graph.aget_state(config)).interrupts
        if pending:
            return Command(resume={found.id: RESUMED for found in pending})
        return None

    async def _astopped(self, bound: _Bound, reply: Reply) -> GuardedResult:
        messages = await self._athread_messages(bound.kept)
        if rewound(reply):
            messages = _rewind(messages, bound.kept, reply)
        return GuardedResult(reply, messages)

    async def _athread_messages(self, kept: Any) -> list[AnyMessage]:
        if not isinstance(kept, Mapping) or "thread" not in kept:
            return []
        config = {"configurable": {"thread_id": kept["thread"]}}
        values = (await self.graph.aget_state(config)).values
        return list(values.get("messages", [])) if isinstance(values, Mapping) else []

    def _aopen(self, user: str, session: str | None) -> AbstractAsyncContextManager[_Bound]:
        return opened(self.guard, user, session, self._bound)

    def _open(self, user: str, session: str | None) -> AbstractContextManager[_Bound]:
        return opened_sync(self.guard, user, session, self._bound)

    def _bound(self, run: GuardedRun, executor: ThreadPoolExecutor) -> _Bound:
        return _Bound(run, executor, middleware=self.middleware)


# --- the set-ups refused ---


def unsafe_setups(graph: Any, guard: StalwartMiddleware) -> list[str]:
    """Why `graph`, guarded by `guard`, would break one of stalwart's guarantees: one
    sentence per set-up refused (none: it may run)."""
    found: list[str] = []
    checkpointer = getattr(graph, "checkpointer", None)
    if checkpointer is None or checkpointer is True or checkpointer is False:
        found.append(texts.LANGGRAPH_NO_CHECKPOINTER)
    elif isinstance(checkpointer, InMemorySaver):
        found.append(texts.checkpointer_refused(type(checkpointer).__name__))
    stalwart = guard.guard
    for name, node, retry in _nodes(graph):
        if isinstance(node, ToolNode):
            handling = node._handle_tool_errors
            if handling is not _default_handle_tool_errors and handling is not False:
                found.append(texts.tool_errors_refused(name, _described(handling)))
            tools = list(node.tools_by_name)
            unsafe = [t for t in tools if _not_retry_safe(stalwart, t)]
            if retry and unsafe:
                found.append(texts.retry_policy_refused(name, unsafe))
            chain = _middleware(node._wrap_tool_call) or _middleware(node._awrap_tool_call)
            if guard in chain:
                inner = [type(m).__name__ for m in chain[chain.index(guard) + 1 :]]
                if inner:
                    found.append(texts.guard_not_innermost(inner))
            for other in chain:
                if isinstance(other, ToolRetryMiddleware):
                    covered = other._tool_filter if other._tool_filter is not None else tools
                    retried = [t for t in covered if _not_retry_safe(stalwart, t)]
                    if retried:
                        found.append(texts.tool_retry_refused(retried))
                    elif covered and other.on_failure not in ("error", "raise"):
                        found.append(texts.tool_retry_as_text_refused(list(covered)))
        for other in _middleware(node):
            if isinstance(other, HumanInTheLoopMiddleware):
                edited = [
                    tool
                    for tool, config in other.interrupt_on.items()
                    if "edit" in config.get("allowed_decisions", [])
                ]
                if edited:
                    found.append(texts.hitl_edit_refused(edited))
    return list(dict.fromkeys(found))


def _not_retry_safe(guard: Guard, tool: str) -> bool:
    spec = guard.spec(tool)
    return spec is None or (spec.writes and not spec.retry_safe)


def _described(handling: Any) -> str:
    if isinstance(handling, (bool, str)):
        return repr(handling)
    if isinstance(handling, tuple):
        return "(" + ", ".join(kind.__name__ for kind in handling) + ")"
    return getattr(handling, "__name__", type(handling).__name__)


def _nodes(graph: Any) -> list[tuple[str, Any, bool]]:
    """The graph's nodes: name, what runs, whether it has a RetryPolicy."""
    builder = getattr(graph, "builder", None)
    nodes = getattr(builder, "nodes", None) or {}
    found = []
    for name, spec in nodes.items():
        runnable = getattr(spec, "runnable", None)
        retry = getattr(spec, "retry_policy", None)
        found.append((name, runnable, bool(retry)))
    return found


def _middleware(function: Any) -> list[AgentMiddleware]:
    """The middleware a composed tool-call wrapper (or a middleware's node) calls, outermost
    first, read from how create_agent composes them (`outer` around `inner`)."""
    found: list[AgentMiddleware] = []
    seen: set[int] = set()

    def walk(item: Any, depth: int) -> None:
        if item is None or id(item) in seen or depth > 64:
            return
        seen.add(id(item))
        owner = getattr(item, "__self__", None)
        if isinstance(owner, AgentMiddleware):
            if owner not in found:
                found.append(owner)
            return
        for attribute in ("__wrapped__", "func", "afunc"):
            inner = getattr(item, attribute, None)
            if inner is not None and not isinstance(item, type):
                walk(inner, depth + 1)
        code = getattr(item, "__code__", None)
        cells = getattr(item, "__closure__", None)
        if code is None or not cells:
            return
        named = dict(zip(code.co_freevars, cells, strict=False))
        ordered = [named.pop(n) for n in ("outer", "inner") if n in named] + list(named.values())
        for cell in ordered:
            try:
                walk(cell.cell_contents, depth + 1)
            except ValueError:  # an empty cell
                continue

    walk(function, 0)
    return found


def _guard_of(graph: Any) -> StalwartMiddleware | None:
    for _, node, _ in _nodes(graph):
        if isinstance(node, ToolNode):
            for found in _middleware(node._wrap_tool_call) or _middleware(node._awrap_tool_call):
                if isinstance(found, StalwartMiddleware):
                    return found
    return None


def _framework_tools(graph: Any) -> list[FrameworkTool]:
    found = []
    for _, node, _ in _nodes(graph):
        if isinstance(node, ToolNode):
            for name, tool in node.tools_by_name.items():
                found.append(_described_tool(name, tool))
    return found


def _described_tool(name: str, tool: BaseTool) -> FrameworkTool:
    schema: Any = tool.tool_call_schema
    parameters = schema if isinstance(schema, dict) else schema.model_json_schema()
    return FrameworkTool(name, tool.description or "", parameters, getattr(tool, "func", None))


def _refuse(found: list[str]) -> None:
    if found:
        raise UnsafeSetup(texts.unsafe_setups(found))


# --- histories ---


def _rewind(messages: list[AnyMessage], kept: Mapping[str, Any], reply: Reply) -> list[AnyMessage]:
    """The history as stalwart's memory is rewound (`rewind`), in LangChain's messages."""
    return rewind(messages, kept, reply, HumanMessage, AIMessage)


def _text(messages: Sequence[AnyMessage]) -> str:
    """The model's last word, as the run's reply."""
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            content = message.content
            if isinstance(content, str):
                return content
            return "".join(
                part if isinstance(part, str) else str(part.get("text", "")) for part in content
            )
    return ""
