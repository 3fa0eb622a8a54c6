"""A run: its states and transitions as one table, its steps, its rollback, its rewind.

A run lives in the record (`RunRow`): its state, its steps, the cursor of the next
step, the question a person is asked, and why it is failing. Each function here takes
the session's `Ledger`, advances the run as far as it can go without a person, and
leaves every change in the ledger; the driver commits:

- before every send, in ONE commit: the call in flight with what the check allowed,
  together with everything that happened since the previous commit (the outcome of the
  call before, a message, the run's new cursor);
- at the end, in ONE commit: the last outcome and where the run now stands.

So a write step costs at most two durable commits: in flight, and outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from enum import StrEnum
from typing import Any

from . import texts
from .check import Check, UndoPlan
from .errors import StalwartError
from .keys import idempotency_key, undo_key
from .ledger import Ledger
from .memory import rewind
from .record.schema import CallRow, RunRow, as_recorded
from .replies import Waiting
from .retry import UndoBackoff, UndoGaveUp, render_error, send_undo
from .tools import ToolSpec


class State(StrEnum):
    NEW = "new"  # not yet recorded
    RUNNING = "running"  # steps are being sent
    WAITING = "waiting"  # a question waits for a person
    ROLLING_BACK = "rolling_back"  # the run failed; its writes are being undone
    DONE = "done"  # every step ran or was skipped
    ROLLED_BACK = "rolled_back"  # failed, undone as far as it can be, and rewound
    STUCK = "stuck"  # an undo failed on every try; the rollback stopped
    UNREAD = "unread"  # nothing could be read from the turn; nothing ran


class Event(StrEnum):
    READ = "read"  # the turn was read into steps
    NOT_READ = "not_read"  # a clause could not be read (on_unread: refuse)
    ASK = "ask"  # a write waits for its confirmation
    APPROVE = "approve"
    SKIP = "skip"
    CANCEL_ALL = "cancel all"
    STEP_FAILED = "step_failed"  # a tool raised
    REFUSED = "refused"  # the check refused a step
    FINISHED = "finished"  # no step remains
    UNDONE = "undone"  # nothing remains to undo
    UNDO_FAILED = "undo_failed"  # an undo failed on every try


TRANSITIONS: Mapping[tuple[State, Event], State] = {
    (State.NEW, Event.READ): State.RUNNING,
    (State.NEW, Event.NOT_READ): State.UNREAD,
    (State.RUNNING, Event.ASK): State.WAITING,
    (State.WAITING, Event.APPROVE): State.RUNNING,
    (State.WAITING, Event.SKIP): State.RUNNING,
    (State.WAITING, Event.CANCEL_ALL): State.ROLLING_BACK,
    (State.RUNNING, Event.STEP_FAILED): State.ROLLING_BACK,
    (State.RUNNING, Event.REFUSED): State.ROLLING_BACK,
    (State.RUNNING, Event.FINISHED): State.DONE,
    (State.ROLLING_BACK, Event.UNDONE): State.ROLLED_BACK,
    (State.ROLLING_BACK, Event.UNDO_FAILED): State.STUCK,
}

# A run in one of these states takes no further step; STUCK is not among them: it still
# has writes to undo, and a rewind waits for them.
ENDED = frozenset({State.DONE, State.ROLLED_BACK, State.UNREAD})


class RunStateError(StalwartError):
    """A transition the table does not allow: the record and the code disagree."""

    code = "run_state"


class RunUnfinished(StalwartError):
    """The session's latest run stopped mid-way (its process died): it must be resumed first.

    Resuming such a run (a call in flight, a rollback half done) comes with issue #3; until
    then a new turn is refused rather than started over writes nobody has settled.
    """

    code = "run_unfinished"


# States a run is in only while a process is advancing it; found under the session's lock,
# they mean that process stopped mid-way.
INTERRUPTED = frozenset({State.RUNNING, State.ROLLING_BACK})


def transition(state: str, event: Event) -> State:
    try:
        return TRANSITIONS[(State(state), event)]
    except KeyError:
        raise RunStateError(f"a run in state {state!r} cannot take {event.value!r}") from None


def move(ledger: Ledger, run: RunRow, event: Event, **changes: Any) -> RunRow:
    return ledger.put_run(replace(run, state=transition(run.state, event).value, **changes))


@dataclass(frozen=True)
class Agentry:
    """What a run needs of its agent: its name, its tools, its check, and the clock's schedule."""

    name: str
    tools: Mapping[str, ToolSpec]
    check: Check
    confirms: Callable[[ToolSpec], bool]  # whether a person confirms the tool's calls
    undo_backoff: UndoBackoff


# --- starting ---


def start(ledger: Ledger, agentry: Agentry, turn: str, steps: list[dict[str, Any]]) -> RunRow:
    """Record a new run of these steps and advance it as far as it goes."""
    run = _new_run(ledger, turn, steps)
    run = move(ledger, run, Event.READ)
    return advance(ledger, agentry, run)


def start_unread(ledger: Ledger, turn: str, clause: str | None, reason: str | None) -> RunRow:
    """Record a turn nothing could be read from: nothing runs, the reply says which clause."""
    run = _new_run(ledger, turn, [])
    reply = texts.unread_reply(clause, reason)
    ledger.add_message("assistant", reply, run.run_id)
    run = move(ledger, run, Event.NOT_READ, reply=reply)
    ledger.commit()
    return run


def _new_run(ledger: Ledger, turn: str, steps: list[dict[str, Any]]) -> RunRow:
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
        steps=steps,
        cursor=0,
        question=None,
        failure=None,
        reply=None,
        turn_seq=message.seq,
        created=now,
        updated=now,
    )


# --- answering a confirmation ---


def confirm(ledger: Ledger, agentry: Agentry, run: RunRow, answer: str) -> RunRow:
    """Take a person's answer to the confirmation the run waits on, and go on."""
    question = run.question or {}
    index = run.cursor
    step = run.steps[index]
    if answer == texts.APPROVE:
        run = move(ledger, run, Event.APPROVE, question=None)
        run = _send(ledger, agentry, run, index, step)
    elif answer == texts.SKIP:
        run = move(ledger, run, Event.SKIP, question=None)
        _record_declined(ledger, agentry, run, index, step)
        run = ledger.put_run(replace(run, cursor=index + 1))
    elif answer == texts.CANCEL_ALL:
        failure = {"cause": "cancelled", "tool": question.get("tool", step["tool"])}
        run = move(ledger, run, Event.CANCEL_ALL, question=None, failure=failure)
    else:
        raise RunStateError(f"{answer!r} is not a confirmation's answer")
    return advance(ledger, agentry, run)


# --- going forward ---


def advance(ledger: Ledger, agentry: Agentry, run: RunRow) -> RunRow:
    """Send steps until one waits for a person, the run ends, or it fails and rolls back."""
    while run.state == State.RUNNING:
        if run.cursor >= len(run.steps):
            reply = texts.done_reply(_outcomes(ledger, run))
            ledger.add_message("assistant", reply, run.run_id)
            run = move(ledger, run, Event.FINISHED, reply=reply)
            break
        index = run.cursor
        step = run.steps[index]
        spec = agentry.tools[step["tool"]]
        if agentry.confirms(spec):
            verdict = agentry.check.call(step["tool"], step["args"], ledger.history())
            if not verdict.allowed:
                run = _refuse(ledger, agentry, run, index, step, verdict.text)
                break
            waiting = _confirmation(ledger, agentry, run, index, step)
            run = move(ledger, run, Event.ASK, question=waiting.to_record())
            break
        run = _send(ledger, agentry, run, index, step)
    if run.state == State.ROLLING_BACK:
        run = roll_back(ledger, agentry, run)
    ledger.commit()
    return run


def _confirmation(
    ledger: Ledger, agentry: Agentry, run: RunRow, index: int, step: dict[str, Any]
) -> Waiting:
    spec = agentry.tools[step["tool"]]
    return Waiting(
        kind="confirm",
        tool=step["tool"],
        args=dict(step["args"]),
        text=texts.confirm_question(
            step["tool"],
            step["args"],
            irreversible=spec.irreversible,
            in_atomic_run=_others_would_be_undone(ledger, agentry, run, index),
        ),
        answers=texts.CONFIRM_ANSWERS,
        run=run.run_id,
        step=index + 1,
    )


def _others_would_be_undone(ledger: Ledger, agentry: Agentry, run: RunRow, index: int) -> bool:
    """Whether a failure after this step would undo other writes of the run, but not this."""
    earlier = any(
        call.kind == "write" and call.status == "ran" and _undo_of(agentry, call.tool)
        for call in ledger.run_calls(run.run_id)
    )
    later = any(agentry.tools[s["tool"]].writes for s in run.steps[index + 1 :])
    return earlier or later


def _send(
    ledger: Ledger, agentry: Agentry, run: RunRow, index: int, step: dict[str, Any]
) -> RunRow:
    """Check a step, record it in flight (one commit), send it, keep its outcome."""
    tool = step["tool"]
    spec = agentry.tools[tool]
    args = typed_args(spec, step["args"])
    verdict = agentry.check.call(tool, args, ledger.history())
    if not verdict.allowed:
        return _refuse(ledger, agentry, run, index, step, verdict.text)
    key = idempotency_key(ledger.session.session, f"{run.number}.{index + 1}", tool, args)
    call = ledger.put_call(
        _call_row(ledger, agentry, run, index, tool, args, key, "in_flight", verdict.text)
    )
    ledger.add_message("assistant", texts.memory_call(tool, args), run.run_id)
    ledger.commit()
    try:
        result = spec.call(args, key)
    except Exception as error:
        ledger.put_call(_finish(ledger, call, "failed", error=render_error(error)))
        ledger.add_message("tool", texts.memory_error(type(error).__name__, str(error)), run.run_id)
        failure = {"cause": "failed", "tool": tool, "error": type(error).__name__}
        return move(ledger, run, Event.STEP_FAILED, failure=failure)
    call = ledger.put_call(_finish(ledger, call, "ran", result=_as_recorded(result)))
    ledger.add_message("tool", texts.memory_result(call.result), run.run_id)
    return ledger.put_run(replace(run, cursor=index + 1))


def _refuse(
    ledger: Ledger, agentry: Agentry, run: RunRow, index: int, step: dict[str, Any], why: str
) -> RunRow:
    tool, args = step["tool"], dict(step["args"])
    refused = _call_row(ledger, agentry, run, index, tool, args, None, "refused", None)
    ledger.put_call(replace(refused, error=why, finished=ledger.clock.now()))
    failure = {"cause": "refused", "tool": tool, "reason": why}
    return move(ledger, run, Event.REFUSED, failure=failure)


def _record_declined(
    ledger: Ledger, agentry: Agentry, run: RunRow, index: int, step: dict[str, Any]
) -> None:
    tool, args = step["tool"], dict(step["args"])
    declined = _call_row(ledger, agentry, run, index, tool, args, None, "declined", None)
    ledger.put_call(replace(declined, result=texts.DECLINED_RESULT, finished=ledger.clock.now()))
    ledger.add_message("assistant", texts.memory_call(tool, args), run.run_id)
    ledger.add_message("tool", texts.DECLINED_RESULT, run.run_id)


# --- rolling back ---


def roll_back(ledger: Ledger, agentry: Agentry, run: RunRow) -> RunRow:
    """Undo the run's writes, last first; then rewind and reply (or stop, stuck)."""
    for write in reversed(writes_to_undo(ledger, agentry, run)):
        plan = agentry.check.plan_undo(write)
        if isinstance(plan, str):
            _record_undo_refused(ledger, agentry, run, write, None, plan)
            continue
        verdict = agentry.check.undo(write, plan, ledger.history())
        if not verdict.allowed:
            _record_undo_refused(ledger, agentry, run, write, plan, verdict.text)
            continue
        stuck = _send_undo(ledger, agentry, run, write, plan, verdict.text)
        if stuck is not None:
            return stuck
    reply = _stopped_reply(ledger, agentry, run)
    run = move(ledger, run, Event.UNDONE, reply=reply)
    rewind(ledger, run, reply)
    return run


def writes_to_undo(ledger: Ledger, agentry: Agentry, run: RunRow) -> list[CallRow]:
    """The run's writes that ran, declare an undo, and were neither undone nor given up on."""
    given_up = {
        c.undoes for c in ledger.run_calls(run.run_id) if c.kind == "undo" and c.status == "refused"
    }
    return [
        call
        for call in ledger.run_calls(run.run_id)
        if call.kind == "write"
        and call.status == "ran"
        and call.undone_by is None
        and call.call_id not in given_up
        and _undo_of(agentry, call.tool) is not None
    ]


def _send_undo(
    ledger: Ledger, agentry: Agentry, run: RunRow, write: CallRow, plan: UndoPlan, allowed: str
) -> RunRow | None:
    """Record an undo in flight (one commit), send it with its retries; None when it ran."""
    spec = agentry.tools[plan.tool]
    key = undo_key(write.key or write.call_id, plan.tool, plan.args)
    undo = ledger.put_call(_undo_row(ledger, agentry, run, write, plan, key, "in_flight", allowed))
    ledger.add_message("assistant", texts.memory_call(plan.tool, plan.args), run.run_id)
    ledger.commit()
    try:
        result = send_undo(
            lambda _try: spec.call(typed_args(spec, plan.args), key),
            agentry.undo_backoff,
            ledger.clock,
        )
    except UndoGaveUp as gave_up:
        error = render_error(gave_up.error)
        ledger.put_call(_finish(ledger, undo, "failed", error=error))
        remaining = len(writes_to_undo(ledger, agentry, run))
        failure = dict(run.failure or {})
        failure.update({"undo": plan.tool, "undo_error": error, "tries": gave_up.tries})
        reply = texts.stuck_reply(_cause(run), plan.tool, gave_up.tries, error, remaining)
        return move(ledger, run, Event.UNDO_FAILED, failure=failure, reply=reply)
    undo = ledger.put_call(_finish(ledger, undo, "ran", result=_as_recorded(result)))
    ledger.put_call(replace(write, undone_by=undo.call_id))
    ledger.add_message("tool", texts.memory_result(undo.result), run.run_id)
    return None


def _record_undo_refused(
    ledger: Ledger,
    agentry: Agentry,
    run: RunRow,
    write: CallRow,
    plan: UndoPlan | None,
    why: str,
) -> None:
    spec = agentry.tools[write.tool]
    undo_tool = spec.undo.tool if spec.undo is not None else ""
    bound = plan or UndoPlan(tool=undo_tool, args={}, sources={})
    row = _undo_row(ledger, agentry, run, write, bound, None, "refused", None)
    ledger.put_call(replace(row, error=why, finished=ledger.clock.now()))


# --- the replies ---


def _cause(run: RunRow) -> str:
    failure = run.failure or {}
    cause = failure.get("cause")
    if cause == "cancelled":
        return texts.cancelled_because(failure["tool"])
    if cause == "refused":
        return texts.refused_because(failure["tool"], failure["reason"])
    return texts.failed_because(failure.get("tool", "?"), failure.get("error", "?"))


def _stopped_reply(ledger: Ledger, agentry: Agentry, run: RunRow) -> str:
    calls = ledger.run_calls(run.run_id)
    by_id = {call.call_id: call for call in calls}
    refused_undo = {c.undoes: c for c in calls if c.kind == "undo" and c.status == "refused"}
    undone: list[tuple[str, str]] = []
    not_undoable: list[str] = []
    not_undone: list[tuple[str, str]] = []
    writes = [c for c in calls if c.kind == "write" and c.status == "ran"]
    for write in sorted(writes, key=lambda c: c.seq, reverse=True):
        if write.undone_by is not None:
            undone.append((write.tool, by_id[write.undone_by].tool))
        elif write.call_id in refused_undo:
            not_undone.append((write.tool, refused_undo[write.call_id].error or ""))
        else:
            not_undoable.append(write.tool)
    return texts.stopped_reply(_cause(run), undone, not_undoable, not_undone)


def _outcomes(ledger: Ledger, run: RunRow) -> list[tuple[str, Any, bool]]:
    return [
        (call.tool, call.result, call.status == "declined")
        for call in ledger.run_calls(run.run_id)
        if call.kind in ("read", "write")
    ]


# --- rows ---


def _undo_of(agentry: Agentry, tool: str) -> str | None:
    spec = agentry.tools.get(tool)
    return spec.undo.tool if spec is not None and spec.undo is not None else None


def _call_row(
    ledger: Ledger,
    agentry: Agentry,
    run: RunRow,
    index: int,
    tool: str,
    args: dict[str, Any],
    key: str | None,
    status: str,
    allowed: str | None,
) -> CallRow:
    return CallRow(
        call_id=f"{run.run_id}:{index + 1}",
        run_id=run.run_id,
        session=run.session,
        agent=agentry.name,
        seq=ledger.next_call_seq(),
        step=index + 1,
        kind="write" if agentry.tools[tool].writes else "read",
        tool=tool,
        args=_as_recorded(args),
        key=key,
        status=status,
        allowed=allowed,
        result=None,
        error=None,
        undoes=None,
        undone_by=None,
        bindings=None,
        created=ledger.clock.now(),
        finished=None,
    )


def _undo_row(
    ledger: Ledger,
    agentry: Agentry,
    run: RunRow,
    write: CallRow,
    plan: UndoPlan,
    key: str | None,
    status: str,
    allowed: str | None,
) -> CallRow:
    return CallRow(
        call_id=f"{write.call_id}:undo",
        run_id=run.run_id,
        session=run.session,
        agent=write.agent,
        seq=ledger.next_call_seq(),
        step=write.step,
        kind="undo",
        tool=plan.tool,
        args=_as_recorded(plan.args),
        key=key,
        status=status,
        allowed=allowed,
        result=None,
        error=None,
        undoes=write.call_id,
        undone_by=None,
        bindings=dict(plan.sources),
        created=ledger.clock.now(),
        finished=None,
    )


def _finish(ledger: Ledger, call: CallRow, status: str, **changes: Any) -> CallRow:
    return replace(call, status=status, finished=ledger.clock.now(), **changes)


def typed_args(spec: ToolSpec, args: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments as the tool's hints declare them, whichever process reads them back.

    The record keeps JSON, where a Decimal is its text; the tool, and the key computed
    from the arguments, see the Decimal again.
    """
    typed = dict(args)
    for name, value in args.items():
        param = spec.param(name)
        if param is not None and param.base_type is Decimal and isinstance(value, str | int):
            typed[name] = Decimal(value)
    return typed


def _as_recorded(value: Any) -> Any:
    """The value as the record keeps it (JSON), so every process binds the same values."""
    return as_recorded(value)
