"""Guarded runs: stalwart's guarantees for an agent loop stalwart does not drive.

A foreign framework (Pydantic AI, LangGraph, the OpenAI Agents SDK) keeps its own model
loop; stalwart keeps the record, the keys, the person's answers and the rollback. The
framework asks stalwart, per tool call, what to do with it, and sends it only through
stalwart. `stalwart.adapters` builds on this module, one adapter per framework; a loop
of your own can use it directly.

    guard = Guard(desk, framework="my-loop", tools=[FrameworkTool("charge_card")])
    with guard.open("u-17") as run:            # the session's lock and lease, held till exit
        run.begin("charge order 4411 40.00")  # a new run (refused while a question waits)
        step = run.step("call-1", "charge_card", {"order": 4411, "amount": 40.0})
        if step.action is StepAction.SEND:
            step = run.send(step, lambda args, key: charge_card(**args))
        ...                                    # WAIT: ask step.waiting; REPLAY: use step.result
    reply = guard.answer("u-17", "approve", question=step.waiting)   # a person's bound answer

What each call does:

- `Guard.open` takes the session's lock and lease (`SessionBusy` while another worker
  advances it) and resolves a run a stopped process left mid-way, by the engine's rules: a
  write left in flight that is not retry-safe becomes "Did <tool> take effect? It was
  being sent when the run stopped."; a read or a retry-safe write left in flight waits
  for its framework to send it again, under the same key. A stalwart run of the session's
  own is resumed as `Agent.chat` resumes it.
- `GuardedRun.step(call_id, tool, args)` finds the step the framework's call is, by its
  call id, or records it as the run's next step, in the model's order. The call id only
  locates the step: its idempotency key is stalwart's, SHA-256 over the session, the
  step, the tool and the arguments (`stalwart.current_call().key`), so a call re-made
  under a new id after a crash is never keyed apart. The step's `action` says what the
  framework does with it: `SEND` it now through `send`; `WAIT` (a person is asked: its
  confirmation, whether it took effect, or the step before it); `REPLAY` the recorded
  `result` (it ran, a person skipped it, the check refused it, or a person said it took
  effect: never send it again); `STOP` (the run failed or ended; `reply` says so, once).
  A call found again with another tool or other arguments than its step was recorded
  with is `CallChanged`: nothing is sent (an approval sends exactly what was shown).
- `GuardedRun.send(step, send)` sends a `SEND` step through `send(args, key)` by the
  engine's rules: checked, recorded in flight with its key before each try, a read or a
  retry-safe write tried again under the same key when in doubt, any other write in
  doubt asked about; a failure rolls the run back, last write first, undos sent by
  stalwart itself. It returns the step as it then stands.
- `GuardedRun.fail(error)` hands stalwart a failure of the framework's own (its model,
  its code): the run is rolled back and its one reply says so.
- `GuardedRun.finish(text)` ends the run with the framework's last word.
- `GuardedRun.keep(checkpoint)` keeps the framework's own checkpoint (its message history,
  a RunState's JSON) in the record beside the run, committed with the run's next commit;
  `kept` reads it back, in any process.
- `Guard.answer` / `Guard.confirm` are the only way a person's answer reaches a run:
  `Agent.answer` / `Agent.confirm`, bound to the session's user and, with `question=`, to
  the question asked (`NotYourSession`, `StaleAnswer`). An approval is recorded on its step
  and sends nothing: the framework sends it when it takes the run up again. A framework's
  own approval flag is never read.

Answered elsewhere: the interface (`stalwart serve`) and `stalwart chat` answer a guarded
run's question through the same record, and the framework's application takes the run up
again. `Guard.answered_runs()` names this framework's runs a person's answer let go on (or
a stopped process left mid-way); `Guard.continue_answered(go_on)` claims each one no worker
holds (the session's lock, taken at once, else skipped till the next round), resolves what
it left in flight, and hands it to `go_on` (an adapter's driver's `resume`) only while it
still runs: many workers may look at once, and each run is continued by one of them.
`Guard.serve_answers(go_on, stop=...)` does that round after round, waiting `every`
seconds between rounds on the agent's clock (injected). The adapters' drivers give both as
`driver.continue_answered()` and `driver.serve_answers(stop=...)`.

This module is the engine's second public face, as `stalwart.agent` is its first: `Agent`
drives stalwart's own runs, this module a foreign loop's, each over the private engine
(`stalwart._engine.guarded` moves the run); nothing else outside the engine imports it.

A tool the framework has and agent.yaml does not declare is taken as a write, confirmed,
with no undo, and linted (`undeclared_tool`). A `GuardedRun` is used on the thread that
opened it (its lease is that thread's); an async adapter runs every call on one thread of
its own.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import TracebackType
from typing import Any, Generic, TypeVar

from . import limits, logs, texts
from ._engine import guarded as engine
from ._engine import resume
from .agent import Agent, _left_for_another_worker, _reply
from .clock import Clock
from .errors import (
    CallChanged,
    NotYourSession,
    QuestionPending,
    RunStateError,
    SessionBusy,
    ToolUnavailable,
)
from .policy.check import Check
from .record.lease import Lease
from .record.ledger import Ledger
from .record.schema import CallRow, CallStatus, RunRow, as_recorded
from .record.sessions import split_session_id
from .replies import Reply, Waiting
from .states import ASKING, INTERRUPTED, State
from .steps import PlannedStep
from .tools import Param, ToolSpec
from .verify.lints import Lint

__all__ = [
    "AnsweredRun",
    "Continued",
    "FrameworkTool",
    "Guard",
    "GuardedRun",
    "GuardedStep",
    "StepAction",
]

log = logging.getLogger(logs.RUN)

_T = TypeVar("_T")

# `Guard.serve_answers`: seconds between two rounds, by default.
ANSWERS_EVERY_SECS = 1.0

# The sender `GuardedRun.send` takes: (the step's arguments, typed as the tool declares
# them; its idempotency key) -> what the tool returned. It raises what the tool raised.
Send = Callable[[Mapping[str, Any], str | None], Any]


class StepAction(StrEnum):
    """What a framework does with a call (`GuardedStep.action`)."""

    SEND = "send"  # send it now, through `GuardedRun.send`
    WAIT = "wait"  # a person is asked first: defer the call and end the framework's run
    REPLAY = "replay"  # recorded already: hand its model `result`; never send it again
    STOP = "stop"  # the run failed or ended: end the framework's run; `reply` says why


@dataclass(frozen=True)
class GuardedStep:
    """One call of the framework, as stalwart's record has it now.

    `number` is the step's number in its run; `args` the arguments as recorded (what a
    person is shown and approves); `key` the idempotency key once it is recorded in
    flight; `status` its call's recorded status (`None` before it is sent). `waiting`
    (WAIT) is the question that waits now (None: the step waits behind one before it);
    `result` (REPLAY) what the framework hands its model; `reply` (STOP) the run's reply.
    """

    call_id: str
    run: str
    number: int
    tool: str
    args: dict[str, Any]
    action: StepAction
    key: str | None = None
    status: str | None = None
    result: Any = None
    waiting: Waiting | None = None
    reply: Reply | None = None


@dataclass(frozen=True)
class FrameworkTool:
    """A tool as the framework declares it.

    `parameters` is the JSON schema (an object) of its arguments; `function`, when the
    tool is a plain function stalwart may call itself (as an undo, in a rollback), else
    None. A tool agent.yaml does not declare is taken from this as a write, confirmed,
    with no undo.
    """

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict)
    function: Callable[..., Any] | None = None


@dataclass(frozen=True)
class AnsweredRun:
    """A guarded run of this framework that waits for its framework to go on with it: a
    person's answer let it go on (given anywhere: the interface, `stalwart chat`, another
    process), or a stopped process left it mid-way. `session` is the record's id,
    `user` its owner, `name` the session's name among the user's (None: the user's
    default session), `run` the run's id."""

    session: str
    user: str
    name: str | None
    run: str


@dataclass(frozen=True)
class Continued(Generic[_T]):
    """One run `Guard.continue_answered` handed to its framework: what `go_on` returned,
    or the error it raised (logged; the round went on with the next run)."""

    run: AnsweredRun
    result: _T | None = None
    error: Exception | None = None


class Guard:
    """Guarded runs of one stalwart `Agent` for one foreign framework.

    `agent` gives the catalogue (agent.yaml's tool facts: writes, undo with `$args` /
    `$result` bindings, irreversible, retry_safe), the rulebook and the record; `tools`
    are the framework's tools: one agent.yaml does not declare is added to the agent's
    catalogue as a write, confirmed, with no undo (and linted), so the agent's own
    answers (`Agent.confirm`, the interface, `stalwart chat`) know it too.
    """

    def __init__(self, agent: Agent, *, framework: str, tools: Iterable[FrameworkTool] = ()):
        self.agent = agent
        self.framework = framework
        self._undeclared: dict[str, ToolSpec] = {}
        # Sessions `continue_answered` hands to its framework now (by id): whether each
        # `open` of the session meanwhile found the run still waiting for the framework.
        self._taking: dict[str, list[bool]] = {}
        self._taking_lock = threading.Lock()
        self.declare(tools)

    def declare(self, tools: Iterable[FrameworkTool]) -> None:
        """Add framework tools agent.yaml does not declare to the agent's catalogue, each
        as a write, confirmed, with no undo; a declared one keeps agent.yaml's facts."""
        added = {
            tool.name: _undeclared_spec(tool, self.framework)
            for tool in tools
            if tool.name not in self.agent.config.tools and tool.name not in self._undeclared
        }
        if not added:
            return
        self._undeclared.update(added)
        # The agent's catalogue as its runs see it: agent.yaml's tools and these, which
        # its answers (approve, skip, cancel all) and the rollback then know too.
        context = self.agent._context
        catalogue = {**context.tools, **added}
        self.agent._context = replace(
            context, tools=catalogue, check=Check(catalogue, self.agent.config.rulebook)
        )

    @property
    def undeclared(self) -> tuple[str, ...]:
        """The framework's tools agent.yaml does not declare, taken as writes."""
        return tuple(self._undeclared)

    @property
    def lints(self) -> list[Lint]:
        """The agent's lints (`Agent.lints`), then one `undeclared_tool` per tool above."""
        text = texts.EXTRA_LINT_TEXTS["undeclared_tool"].format(framework=self.framework)
        return [
            *self.agent.lints,
            *(Lint("undeclared_tool", None, name, text) for name in self._undeclared),
        ]

    def spec(self, tool: str) -> ToolSpec | None:
        """What stalwart knows of a tool: agent.yaml's facts, or an undeclared write's."""
        return self.agent._context.tools.get(tool)

    def is_write(self, tool: str) -> bool:
        """Whether a call of `tool` is a write (an unknown tool is one)."""
        spec = self.spec(tool)
        return spec is None or spec.writes

    def open(self, user: str, *, session: str | None = None, wait: bool = True) -> GuardedRun:
        """The user's session under its lock, its left-over run resolved (see the module).

        Use it as a context manager, on one thread; `SessionBusy` while another worker
        holds the session (at once with `wait=False`), `NotYourSession` for a session
        that is not the user's.
        """
        return GuardedRun(self, user, session, wait)

    def answer(
        self,
        user: str,
        answer: str,
        *,
        question: Waiting | str | None = None,
        session: str | None = None,
    ) -> Reply:
        """A person's answer to the question the session's run waits on (`Agent.answer`).

        An approval is recorded on its step for the framework to send; the reply's state
        is then "running": the framework takes the run up again (its adapter does).
        """
        return self.agent.answer(user, answer, question=question, session=session)

    def confirm(
        self,
        user: str,
        answer: str,
        *,
        question: Waiting | str | None = None,
        session: str | None = None,
    ) -> Reply:
        """`answer`, for a confirmation only (approve, skip, cancel all)."""
        return self.agent.confirm(user, answer, question=question, session=session)

    def answered_runs(self) -> list[AnsweredRun]:
        """This framework's runs that wait for it to go on (see `AnsweredRun`), by session,
        as committed (read, no lock): a worker may be driving one now."""
        store = self.agent.store
        found: list[AnsweredRun] = []
        for sid in store.sessions_with_runs_in([State.RUNNING.value]):
            record = store.load(sid)
            if record is None or record.session.agent != self.agent.name or not record.runs:
                continue
            latest = record.runs[-1]
            framework = latest.framework or {}
            if latest.state != State.RUNNING or framework.get("name") != self.framework:
                continue
            user, name = split_session_id(sid)
            if user == record.session.user:  # else not an id this agent made
                found.append(AnsweredRun(sid, user, name, latest.run_id))
        return found

    def continue_answered(self, go_on: Callable[[AnsweredRun], _T]) -> list[Continued[_T]]:
        """One round: each of `answered_runs` that no worker holds now is claimed (its
        session's lock, taken at once: one another worker holds is left to that worker),
        what it left in flight resolved by the record, and, when it still waits for its
        framework, handed to `go_on` (the driver's `resume`, which takes the lock again and
        goes on only while the run still waits: a run is continued once, whichever worker
        looks). Each run this worker went on with is in the list once; one another worker
        (or another thread here) went on with meanwhile is not. What `go_on` raises is
        logged and kept in its `Continued`; the round goes on.
        """
        done: list[Continued[_T]] = []
        for answered in self.answered_runs():
            with self._taking_lock:
                if answered.session in self._taking:
                    continue  # another thread of this process takes it up now
                found = self._taking[answered.session] = []
            try:
                continued = self._take_up(answered, found, go_on)
            finally:
                with self._taking_lock:
                    del self._taking[answered.session]
            if continued is not None:
                done.append(continued)
        return done

    def _take_up(
        self, answered: AnsweredRun, found: list[bool], go_on: Callable[[AnsweredRun], _T]
    ) -> Continued[_T] | None:
        """One answered run claimed and handed to `go_on`; None when another worker holds
        it, or went on with it before `go_on` had the session (`found`: what each `open`
        of the session found meanwhile, running or not)."""
        try:
            with self.open(answered.user, session=answered.name, wait=False) as run:
                waits = run.running
        except SessionBusy:
            return None  # a worker holds it: that worker goes on with it
        if not waits:
            return None  # resolved into a question, or taken up by another worker already
        del found[:]
        try:
            result = go_on(answered)
        except SessionBusy:
            return None  # taken meanwhile by another worker, which goes on with it
        except Exception as error:
            log.exception(texts.ANSWERED_RUN_FAILED, answered.session, answered.run)
            return Continued(answered, error=error)
        if not any(found):
            return None  # another worker went on with it between the claim and `go_on`
        return Continued(answered, result=result)

    def _opened(self, session: str, running: bool) -> None:
        """A `GuardedRun` of `session` opened, finding its run `running` or not."""
        with self._taking_lock:
            found = self._taking.get(session)
            if found is not None:
                found.append(running)

    def serve_answers(
        self,
        go_on: Callable[[AnsweredRun], _T],
        *,
        stop: Callable[[], bool],
        every: float = ANSWERS_EVERY_SECS,
        clock: Clock | None = None,
    ) -> int:
        """`continue_answered`, round after round, `every` seconds apart on `clock` (the
        agent's by default), until `stop()` says so (asked before each round and each
        wait); the number of rounds. Run it on a thread (or a process) of its own."""
        waits = clock if clock is not None else self.agent.clock
        rounds = 0
        while not stop():
            self.continue_answered(go_on)
            rounds += 1
            if stop():
                break
            waits.sleep(every)
        return rounds

    def kept(self, user: str, *, session: str | None = None) -> Any:
        """The checkpoint kept beside the session's latest guarded run (read, no lock)."""
        sid = self.agent.session_id(user, session)
        record = self.agent.store.load(sid)
        if record is None or not record.runs:
            return None
        if record.session.user != user or record.session.agent != self.agent.name:
            raise NotYourSession(texts.not_your_session(user, sid))
        framework = record.runs[-1].framework
        return framework.get("kept") if framework is not None else None


class GuardedRun(AbstractContextManager["GuardedRun"]):
    """A user's session under its lock, for one stretch of a framework's loop (see the
    module). Made by `Guard.open`; every call on the thread that opened it."""

    def __init__(self, guard: Guard, user: str, session: str | None, wait: bool) -> None:
        agent = guard.agent
        self._guard = guard
        self._thread = threading.get_ident()
        sid = agent.session_id(user, session)
        self._lock = agent.store.lock(sid, wait=wait, clock=agent.clock)
        lease: Lease = self._lock.__enter__()
        self._closed = False
        try:
            ledger = Ledger.open(agent.store, agent.clock, sid, user, agent.name, lease)
            if ledger.session.user != user or ledger.session.agent != agent.name:
                raise NotYourSession(texts.not_your_session(user, sid))
            self._ledger = ledger
            latest = ledger.latest_run()
            self.resumed = latest is not None and latest.state in INTERRUPTED
            if latest is not None and self.resumed:
                resume.resume(ledger, self._context, latest)
            guard._opened(sid, self.running)
        except BaseException as error:
            self._lock.__exit__(type(error), error, error.__traceback__)
            raise

    # --- where the session stands ---

    @property
    def session(self) -> str:
        """The record's id of the session (`Reply.session`)."""
        return self._ledger.session.session

    @property
    def kept(self) -> Any:
        """The checkpoint kept beside the latest run (None: none, or not a guarded run)."""
        run = self._ledger.latest_run()
        framework = run.framework if run is not None else None
        return framework.get("kept") if framework is not None else None

    @property
    def running(self) -> bool:
        """Whether the latest run is this framework's, waiting for it to go on (a step to
        send, or its model to ask): after an approval, or left mid-way by a stopped process."""
        run = self._ledger.latest_run()
        return run is not None and run.framework is not None and run.state == State.RUNNING

    def reply(self) -> Reply | None:
        """Where the session's latest run stands; None for a session with no run."""
        self._check()
        run = self._ledger.latest_run()
        return _reply(self._ledger, run) if run is not None else None

    # --- the run ---

    def begin(self, turn: str, *, kept: Any = None) -> Reply:
        """Start a new run for the person's `turn`, with the framework's checkpoint `kept`.

        `QuestionPending` while the latest run waits for a person; `RunStateError` while it
        was left mid-way (take it up with `step` / `send` first: see `running`).
        """
        self._check()
        limits.check_turn(turn)
        latest = self._ledger.latest_run()
        if latest is not None and latest.state in ASKING:
            question = (latest.question or {}).get("text", "")
            raise QuestionPending(texts.question_pending(self.session, question))
        if latest is not None and latest.state in INTERRUPTED:
            raise _left_for_another_worker(latest)
        run = engine.start(self._ledger, turn, self._guard.framework, kept)
        return _reply(self._ledger, run)

    def step(self, call_id: str, tool: str, args: Mapping[str, Any]) -> GuardedStep:
        """The step the framework's call `call_id` is (recorded now, the first time): what
        to do with it is its `action` (see the module)."""
        self._check()
        run = self._run()
        recorded = _as_recorded_args(self._context.tools.get(tool), args)
        index = engine.find(run, call_id)
        if index is None:
            if run.state not in (State.RUNNING, State.WAITING):
                return self._stopped(run, call_id, tool, recorded)
            run, index = engine.add_step(self._ledger, self._context, run, call_id, tool, recorded)
        else:
            step = PlannedStep.from_record(run.steps[index])
            if step.tool != tool or step.args != recorded:
                raise CallChanged(
                    texts.call_changed(call_id, index + 1, step.tool, tool, step.args)
                )
        return self._classify(self._run(), index)

    def find(self, call_id: str) -> GuardedStep | None:
        """The step the framework's call `call_id` is, as it stands; None when the latest
        run has no such step (nothing is recorded)."""
        self._check()
        run = self._run()
        index = engine.find(run, call_id)
        return self._classify(run, index) if index is not None else None

    def send(self, step: GuardedStep, send: Send) -> GuardedStep:
        """Send a `SEND` step through `send(args, key)` by stalwart's rules, and return it
        as it then stands: REPLAY (it ran: `result`), WAIT (did it take effect?) or STOP
        (it failed, and the run was rolled back; `reply`)."""
        self._check()
        run = self._run()
        index = step.number - 1
        if engine.find(run, step.call_id) != index:
            raise RunStateError(texts.guarded_not_sendable(run.run_id, step.number, run.state))
        run = engine.send(self._ledger, self._context, run, index, send)
        return self._classify(run, index)

    def fail(self, error: BaseException) -> Reply:
        """The framework failed: a running run fails, is rolled back last write first, and
        replies once; a run that waits for a person, or has ended, is left as it is."""
        self._check()
        run = engine.fail(self._ledger, self._context, self._run(), self._guard.framework, error)
        return _reply(self._ledger, run)

    def finish(self, text: str) -> Reply:
        """The framework's loop ended with its model's last word `text`: the run is done."""
        self._check()
        return _reply(self._ledger, engine.finish(self._ledger, self._run(), text))

    def keep(self, checkpoint: Any) -> None:
        """Keep the framework's checkpoint (JSON-shaped) beside the run; committed with the
        run's next commit, and by `close` at the latest."""
        self._check()
        engine.keep(self._ledger, self._run(), checkpoint)

    def close(self) -> None:
        """Commit what is left and give the session's lock back."""
        if self._closed:
            return
        self._check()
        self._closed = True
        try:
            self._ledger.commit()
        finally:
            self._lock.__exit__(None, None, None)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # --- inside ---

    @property
    def _context(self) -> Any:  # the agent's RunContext, with the framework's tools
        return self._guard.agent._context

    def _check(self) -> None:
        if threading.get_ident() != self._thread:
            raise RunStateError(texts.GUARDED_RUN_THREAD)
        if self._closed:
            raise RunStateError(texts.GUARDED_RUN_CLOSED)

    def _run(self) -> RunRow:
        run = self._ledger.latest_run()
        if run is None or run.framework is None:
            raise RunStateError(texts.no_guarded_run(self.session))
        return run

    def _stopped(self, run: RunRow, call_id: str, tool: str, args: dict[str, Any]) -> GuardedStep:
        return GuardedStep(
            call_id=call_id,
            run=run.run_id,
            number=len(run.steps) + 1,
            tool=tool,
            args=args,
            action=StepAction.STOP,
            reply=_reply(self._ledger, run),
        )

    def _classify(self, run: RunRow, index: int) -> GuardedStep:
        step = PlannedStep.from_record(run.steps[index])
        assert step.tool_call_id is not None  # a guarded run's step is its framework's call
        call = self._ledger.call(engine.call_id_of(run, index))
        found = GuardedStep(
            call_id=step.tool_call_id,
            run=run.run_id,
            number=index + 1,
            tool=step.tool,
            args=dict(step.args),
            action=StepAction.STOP,
            key=call.key if call is not None else None,
            status=call.status if call is not None else None,
        )
        if run.state not in (State.RUNNING, State.WAITING):
            return replace(found, reply=_reply(self._ledger, run))
        if call is not None and call.status in _REPLAYED:
            return replace(found, action=StepAction.REPLAY, result=_replayed(call))
        if run.state == State.WAITING:
            waiting = Waiting.from_record(run.question or {})
            return replace(found, action=StepAction.WAIT, waiting=waiting)
        if index == run.cursor and (call is None or call.status == CallStatus.IN_FLIGHT):
            return replace(found, action=StepAction.SEND)
        if index > run.cursor:
            return replace(found, action=StepAction.WAIT)  # behind a step not sent yet
        raise RunStateError(texts.guarded_not_sendable(run.run_id, index + 1, run.state))


# The statuses of a step recorded already, which the framework replays and never sends.
_REPLAYED = frozenset(
    {CallStatus.RAN, CallStatus.HAPPENED, CallStatus.DECLINED, CallStatus.REFUSED}
)


def _replayed(call: CallRow) -> Any:
    """What the framework's model is handed for a step recorded already: what it returned,
    or, for one that did not answer, what stalwart's own model would read."""
    if call.status == CallStatus.RAN:
        return call.result
    if call.status == CallStatus.HAPPENED:
        return texts.MEMORY_HAPPENED
    if call.status == CallStatus.DECLINED:
        return texts.DECLINED_RESULT
    return texts.memory_refused(call.error or "")


def _as_recorded_args(spec: ToolSpec | None, args: Mapping[str, Any]) -> dict[str, Any]:
    """A call's arguments as its step records them: typed as the tool declares them, in
    its parameters' order, then as the record keeps them."""
    typed = spec.typed(args) if spec is not None else dict(args)
    recorded: dict[str, Any] = as_recorded(typed) or {}
    return recorded


def _undeclared_spec(tool: FrameworkTool, framework: str) -> ToolSpec:
    """A framework tool agent.yaml does not declare: a write, confirmed, with no undo. Its
    parameters are its schema's (any value; the framework checks them)."""
    properties = tool.parameters.get("properties") or {}
    required = set(tool.parameters.get("required") or ())
    params = tuple(
        Param(name=name, annotation=Any, required=name in required) for name in properties
    )
    function = tool.function if tool.function is not None else _sent_by(tool.name, framework)
    return ToolSpec(
        name=tool.name, func=function, description=tool.description, params=params, writes=True
    )


def _sent_by(tool: str, framework: str) -> Callable[..., Any]:
    def only_through_the_framework(**_: Any) -> Any:
        raise ToolUnavailable(texts.sent_only_by_framework(tool, framework))

    return only_through_the_framework
