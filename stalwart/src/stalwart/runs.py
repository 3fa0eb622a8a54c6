"""A run: its states and transitions as one table, its steps, its rollback, its rewind.

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

A run found `running` or `rolling_back` under the session's lock was left mid-way by a
process that stopped (only a lock holder advances a run, and a dead holder's lock is
released): `resume` takes it up from what the record shows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any

from . import model_loop, texts
from .check import Check, UndoPlan, Verdict
from .current import CurrentCall, sending
from .errors import StalwartError
from .keys import idempotency_key, undo_key
from .ledger import Ledger
from .memory import rewind
from .models import Model
from .provenance import all_from_turn
from .record.schema import TOOK_EFFECT, CallRow, CallStatus, RunRow, as_recorded, replace_row
from .replies import Waiting
from .retry import (
    AfterFailure,
    UndoBackoff,
    UndoGaveUp,
    after_call_failure,
    in_doubt,
    render_error,
    send_undo,
)
from .tools import ToolSpec


class State(StrEnum):
    NEW = "new"  # not yet recorded
    RUNNING = "running"  # steps are being sent
    WAITING = "waiting"  # a question waits for a person (a confirmation or an outcome)
    ROLLING_BACK = "rolling_back"  # the run failed; its writes are being undone
    DONE = "done"  # every step ran or was skipped
    ROLLED_BACK = "rolled_back"  # failed, undone as far as it can be, and rewound
    STUCK = "stuck"  # an undo failed on every try; the rollback stopped; a person is asked
    ABANDONED = "abandoned"  # a person abandoned a stuck rollback; rewound
    UNREAD = "unread"  # nothing could be read from the turn; nothing ran


class Event(StrEnum):
    READ = "read"  # the turn was read into steps
    NOT_READ = "not_read"  # a clause could not be read (on_unread: refuse)
    TO_MODEL = "to_model"  # a clause could not be read; the model chooses the steps
    ASK = "ask"  # a write waits for its confirmation
    APPROVE = "approve"
    SKIP = "skip"
    CANCEL_ALL = "cancel all"
    IN_DOUBT = "in_doubt"  # nobody knows whether a write took effect: a person is asked
    HAPPENED = "happened"
    DID_NOT_HAPPEN = "did not happen"
    STEP_FAILED = "step_failed"  # a tool raised
    REFUSED = "refused"  # the check refused a step
    MODEL_FAILED = "model_failed"  # the model could not answer, or would not stop
    FINISHED = "finished"  # no step remains
    UNDONE = "undone"  # nothing remains to undo
    UNDO_FAILED = "undo_failed"  # an undo failed on every try
    RETRY_UNDO = "retry"
    DONE_BY_HAND = "done by hand"
    ABANDON = "abandon"
    OPERATOR_UNDO = "operator_undo"  # an operator undoes an ended run from outside


TRANSITIONS: Mapping[tuple[State, Event], State] = {
    (State.NEW, Event.READ): State.RUNNING,
    (State.NEW, Event.NOT_READ): State.UNREAD,
    (State.NEW, Event.TO_MODEL): State.RUNNING,
    (State.RUNNING, Event.ASK): State.WAITING,
    (State.WAITING, Event.APPROVE): State.RUNNING,
    (State.WAITING, Event.SKIP): State.RUNNING,
    (State.WAITING, Event.CANCEL_ALL): State.ROLLING_BACK,
    (State.RUNNING, Event.IN_DOUBT): State.WAITING,
    (State.WAITING, Event.HAPPENED): State.RUNNING,
    (State.WAITING, Event.DID_NOT_HAPPEN): State.ROLLING_BACK,
    (State.RUNNING, Event.STEP_FAILED): State.ROLLING_BACK,
    (State.RUNNING, Event.REFUSED): State.ROLLING_BACK,
    (State.RUNNING, Event.MODEL_FAILED): State.ROLLING_BACK,
    (State.RUNNING, Event.FINISHED): State.DONE,
    (State.ROLLING_BACK, Event.UNDONE): State.ROLLED_BACK,
    (State.ROLLING_BACK, Event.UNDO_FAILED): State.STUCK,
    (State.STUCK, Event.RETRY_UNDO): State.ROLLING_BACK,
    (State.STUCK, Event.DONE_BY_HAND): State.ROLLING_BACK,
    (State.STUCK, Event.ABANDON): State.ABANDONED,
    (State.DONE, Event.OPERATOR_UNDO): State.ROLLING_BACK,
    (State.ROLLED_BACK, Event.OPERATOR_UNDO): State.ROLLING_BACK,
    (State.ABANDONED, Event.OPERATOR_UNDO): State.ROLLING_BACK,
}

# Each answer a person can give, by the kind of question it answers.
ANSWER_EVENTS: Mapping[tuple[str, str], Event] = {
    ("confirm", texts.APPROVE): Event.APPROVE,
    ("confirm", texts.SKIP): Event.SKIP,
    ("confirm", texts.CANCEL_ALL): Event.CANCEL_ALL,
    ("outcome", texts.HAPPENED): Event.HAPPENED,
    ("outcome", texts.DID_NOT_HAPPEN): Event.DID_NOT_HAPPEN,
    ("undo", texts.RETRY): Event.RETRY_UNDO,
    ("undo", texts.DONE_BY_HAND): Event.DONE_BY_HAND,
    ("undo", texts.ABANDON): Event.ABANDON,
}

# A run in one of these states takes no further step of its own; only an operator's undo
# moves it again. STUCK is not among them: it still has writes to undo, and a person is
# asked what to do.
ENDED = frozenset({State.DONE, State.ROLLED_BACK, State.ABANDONED, State.UNREAD})

# States a run is in only while a process is advancing it; found under the session's lock,
# they mean that process stopped mid-way, and the run is resumed.
INTERRUPTED = frozenset({State.RUNNING, State.ROLLING_BACK})

# States in which a run has a question waiting for a person.
ASKING = frozenset({State.WAITING, State.STUCK})


class RunStateError(StalwartError):
    """A transition the table does not allow: the record and the code disagree."""

    code = "run_state"


def transition(state: str, event: Event) -> State:
    """The state a run in `state` moves to on `event`; RunStateError if the table has none."""
    try:
        return TRANSITIONS[(State(state), event)]
    except (KeyError, ValueError):
        raise RunStateError(f"a run {state!r} cannot take {event.value!r}") from None


def move(ledger: Ledger, run: RunRow, event: Event, **changes: Any) -> RunRow:
    return ledger.put_run(replace_row(run, state=transition(run.state, event).value, **changes))


@dataclass(frozen=True)
class Agentry:
    """What a run needs of its agent: its name, its tools, its check, the clock's schedule,
    and the model a turn the selector cannot read goes to (on_unread: model)."""

    name: str
    tools: Mapping[str, ToolSpec]
    check: Check
    confirms: Callable[[ToolSpec], bool]  # whether a person confirms the tool's calls
    undo_backoff: UndoBackoff
    model: Model | None = None
    max_model_calls: int = model_loop.DEFAULT_MAX_MODEL_CALLS


# --- starting ---


def start(ledger: Ledger, agentry: Agentry, turn: str, steps: list[dict[str, Any]]) -> RunRow:
    """Record a new run of these steps and advance it as far as it goes."""
    run = _new_run(ledger, turn, steps)
    run = move(ledger, run, Event.READ)
    return advance(ledger, agentry, run)


def start_model(ledger: Ledger, agentry: Agentry, turn: str) -> RunRow:
    """Record a new run whose steps the model chooses, and advance it as far as it goes."""
    run = _new_run(ledger, turn, [])
    run = move(ledger, run, Event.TO_MODEL)
    selector = agentry.model.selector if agentry.model is not None else ""
    model_loop.begin(ledger, agentry.name, run, selector)
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


# --- a person's answers ---


def answer(ledger: Ledger, agentry: Agentry, run: RunRow, given: str) -> RunRow:
    """Take a person's answer to the question the run waits on, and go on."""
    question = Waiting.from_record(run.question or {})
    event = ANSWER_EVENTS.get((question.kind, given))
    if event is None:
        raise RunStateError(f"{given!r} is not an answer to a question of kind {question.kind!r}")
    run = _ANSWER_HANDLERS[event](ledger, agentry, run, question)
    return advance(ledger, agentry, run)


def _approve(ledger: Ledger, agentry: Agentry, run: RunRow, question: Waiting) -> RunRow:
    run = move(ledger, run, Event.APPROVE, question=None)
    return _send(ledger, agentry, run, run.cursor, run.steps[run.cursor])


def _skip(ledger: Ledger, agentry: Agentry, run: RunRow, question: Waiting) -> RunRow:
    run = move(ledger, run, Event.SKIP, question=None)
    _record_declined(ledger, agentry, run, run.cursor, run.steps[run.cursor])
    return ledger.put_run(replace_row(run, cursor=run.cursor + 1))


def _cancel_all(ledger: Ledger, agentry: Agentry, run: RunRow, question: Waiting) -> RunRow:
    failure = {"cause": "cancelled", "tool": question.tool}
    return move(ledger, run, Event.CANCEL_ALL, question=None, failure=failure)


def _happened(ledger: Ledger, agentry: Agentry, run: RunRow, question: Waiting) -> RunRow:
    call = _asked_call(ledger, question)
    ledger.put_call(_finish(ledger, call, CallStatus.HAPPENED))
    ledger.add_message("tool", texts.MEMORY_HAPPENED, run.run_id)
    return move(ledger, run, Event.HAPPENED, question=None, cursor=call.step)


def _did_not_happen(ledger: Ledger, agentry: Agentry, run: RunRow, question: Waiting) -> RunRow:
    call = _asked_call(ledger, question)
    ledger.put_call(_finish(ledger, call, CallStatus.DID_NOT_HAPPEN))
    ledger.add_message("tool", texts.MEMORY_DID_NOT_HAPPEN, run.run_id)
    failure = {"cause": "did_not_happen", "tool": call.tool}
    return move(ledger, run, Event.DID_NOT_HAPPEN, question=None, failure=failure)


def _retry_undo(ledger: Ledger, agentry: Agentry, run: RunRow, question: Waiting) -> RunRow:
    # The rollback starts again at the failed undo, which is re-sent under its key.
    return move(ledger, run, Event.RETRY_UNDO, question=None, reply=None)


def _done_by_hand(ledger: Ledger, agentry: Agentry, run: RunRow, question: Waiting) -> RunRow:
    undo = _asked_call(ledger, question)
    undo = ledger.put_call(_finish(ledger, undo, CallStatus.BY_HAND))
    write = ledger.call(undo.undoes or "")
    if write is None:
        raise RunStateError(f"{undo.call_id} undoes nothing the record holds")
    ledger.put_call(replace_row(write, undone_by=undo.call_id))
    ledger.add_message("tool", texts.MEMORY_UNDONE_BY_HAND, run.run_id)
    return move(ledger, run, Event.DONE_BY_HAND, question=None, reply=None)


def _abandon(ledger: Ledger, agentry: Agentry, run: RunRow, question: Waiting) -> RunRow:
    remaining = [write.call_id for write in writes_to_undo(ledger, agentry, run)]
    failure = {**(run.failure or {}), "abandoned": remaining}
    run = replace_row(run, failure=failure)
    reply = _stopped_reply(ledger, agentry, run)
    run = move(ledger, run, Event.ABANDON, question=None, reply=reply)
    _rewind(ledger, run, reply)
    return run


_ANSWER_HANDLERS: Mapping[Event, Callable[[Ledger, Agentry, RunRow, Waiting], RunRow]] = {
    Event.APPROVE: _approve,
    Event.SKIP: _skip,
    Event.CANCEL_ALL: _cancel_all,
    Event.HAPPENED: _happened,
    Event.DID_NOT_HAPPEN: _did_not_happen,
    Event.RETRY_UNDO: _retry_undo,
    Event.DONE_BY_HAND: _done_by_hand,
    Event.ABANDON: _abandon,
}


def _asked_call(ledger: Ledger, question: Waiting) -> CallRow:
    call = ledger.call(question.call or "")
    if call is None:
        raise RunStateError(f"the question is about {question.call!r}, which the record lacks")
    return call


# --- resuming a run whose process stopped, and the operator's undo ---


def resume(ledger: Ledger, agentry: Agentry, run: RunRow) -> RunRow:
    """Take up a run its process left mid-way (found `running` or `rolling_back`).

    A call left in flight is sent again under its key when it is a read or a retry-safe
    write; any other write becomes the question "Did <tool> take effect? It was being
    sent when the run stopped." A rollback goes on where it stopped, and an undo left in
    flight is sent again under its own key. The check is not run again for a call the
    record shows it allowed.
    """
    if run.state == State.RUNNING:
        # An ask of the model left in flight is asked again by `advance`: it changes nothing.
        flying = [
            call
            for call in ledger.run_calls(run.run_id)
            if call.status == CallStatus.IN_FLIGHT and call.kind in ("read", "write")
        ]
        if flying:
            call = flying[-1]
            spec = agentry.tools[call.tool]
            if spec.writes and not spec.retry_safe:
                run = _ask_outcome(ledger, run, call, stopped=True)
            else:
                run = _try_call(ledger, agentry, run, call)
    return advance(ledger, agentry, run)


def operator_undo(ledger: Ledger, agentry: Agentry, run: RunRow) -> RunRow:
    """Undo an ended run's writes that are not undone yet, last first, and rewind it."""
    failure = {"cause": "operator", "before": run.failure}
    run = move(ledger, run, Event.OPERATOR_UNDO, failure=failure, question=None)
    return advance(ledger, agentry, run)


# --- going forward ---


def advance(ledger: Ledger, agentry: Agentry, run: RunRow) -> RunRow:
    """Send steps until one waits for a person, the run ends, or it fails and rolls back."""
    while run.state == State.RUNNING:
        if run.cursor >= len(run.steps):
            if model_loop.is_model_run(ledger, run):
                run = _ask_model(ledger, agentry, run)
                continue
            reply = texts.done_reply(_outcomes(ledger, run))
            ledger.add_message("assistant", reply, run.run_id)
            run = move(ledger, run, Event.FINISHED, reply=reply)
            break
        index = run.cursor
        step = run.steps[index]
        spec = agentry.tools.get(step["tool"])
        if spec is not None and agentry.confirms(spec):
            verdict = agentry.check.call(
                step["tool"], step["args"], ledger.history(), step_sources(step)
            )
            if not verdict.allowed:
                run = _refuse(ledger, agentry, run, index, step, verdict)
                continue
            waiting = _confirmation(ledger, agentry, run, index, step)
            run = move(ledger, run, Event.ASK, question=waiting.to_record())
            break
        run = _send(ledger, agentry, run, index, step)
    if run.state == State.ROLLING_BACK:
        run = roll_back(ledger, agentry, run)
    ledger.commit()
    return run


def _ask_model(ledger: Ledger, agentry: Agentry, run: RunRow) -> RunRow:
    """Ask the model for the run's next steps; its last word ends the run."""
    asked = model_loop.ask(
        ledger, agentry.model, agentry.tools, agentry.name, run, agentry.max_model_calls
    )
    if isinstance(asked, model_loop.Failure):
        return move(ledger, run, Event.MODEL_FAILED, failure=asked.failure)
    if not asked.steps:
        reply = asked.text or texts.MODEL_NO_ANSWER
        ledger.add_message("assistant", reply, run.run_id)
        return move(ledger, run, Event.FINISHED, reply=reply)
    if asked.text:
        ledger.add_message("assistant", asked.text, run.run_id)
    run = ledger.put_run(replace_row(run, steps=[*run.steps, *asked.steps]))
    # The answer is durable before any of its steps runs: a run resumed on another worker
    # takes the steps from the record and never asks the model for this answer again.
    ledger.commit()
    return run


def step_sources(step: Mapping[str, Any]) -> dict[str, str]:
    """Where each argument of a step came from: as recorded for a model's step, and every
    value from the turn for a step the selector read."""
    recorded = step.get("sources")
    return dict(recorded) if recorded is not None else all_from_turn(step["args"])


def _confirmation(
    ledger: Ledger, agentry: Agentry, run: RunRow, index: int, step: dict[str, Any]
) -> Waiting:
    spec = agentry.tools[step["tool"]]
    sources = step.get("sources")  # shown for a model's step; the selector's are the turn's
    # Shown exactly as the approved call will receive them, whichever process asks.
    args = typed_args(spec, step["args"])
    return Waiting(
        kind="confirm",
        tool=step["tool"],
        args=args,
        text=texts.confirm_question(
            step["tool"],
            args,
            irreversible=spec.irreversible,
            in_atomic_run=_others_would_be_undone(ledger, agentry, run, index),
            sources=sources,
        ),
        answers=texts.CONFIRM_ANSWERS,
        run=run.run_id,
        step=index + 1,
        sources=dict(sources) if sources is not None else None,
    )


def _others_would_be_undone(ledger: Ledger, agentry: Agentry, run: RunRow, index: int) -> bool:
    """Whether a failure after this step would undo other writes of the run, but not this."""
    earlier = any(
        call.kind == "write" and call.status in TOOK_EFFECT and _undo_of(agentry, call.tool)
        for call in ledger.run_calls(run.run_id)
    )
    later = any(
        spec.writes for s in run.steps[index + 1 :] if (spec := agentry.tools.get(s["tool"]))
    )
    # A model may still choose more steps after this one.
    return earlier or later or model_loop.is_model_run(ledger, run)


def _send(
    ledger: Ledger, agentry: Agentry, run: RunRow, index: int, step: dict[str, Any]
) -> RunRow:
    """Check a step, record it in flight with its key, and send it (with its retries)."""
    tool = step["tool"]
    spec = agentry.tools.get(tool)
    args = typed_args(spec, step["args"]) if spec is not None else dict(step["args"])
    verdict = agentry.check.call(tool, args, ledger.history(), step_sources(step))
    if not verdict.allowed:
        return _refuse(ledger, agentry, run, index, step, verdict)
    key = idempotency_key(ledger.session.session, f"{run.number}.{index + 1}", tool, args)
    call = ledger.put_call(
        _call_row(ledger, agentry, run, index, tool, args, key, "in_flight", verdict.text)
    )
    ledger.add_message("assistant", texts.memory_call(tool, args), run.run_id)
    return _try_call(ledger, agentry, run, call)


def _try_call(ledger: Ledger, agentry: Agentry, run: RunRow, call: CallRow) -> RunRow:
    """Send a recorded call until it answers, fails, or leaves a person to say what happened.

    Each try is committed in flight, with its number, before it is sent, under the key
    the call was first recorded with.
    """
    spec = agentry.tools[call.tool]
    args = typed_args(spec, call.args)
    # A try sent before this one (retried, or left in flight by a stopped process) may
    # have taken effect; a later try failing plainly does not settle that.
    earlier_in_doubt = call.tries > 0
    while True:
        call = ledger.put_call(replace_row(call, status=CallStatus.IN_FLIGHT, tries=call.tries + 1))
        ledger.commit()
        try:
            with sending(_current(run, call)):
                result = spec.call(args, call.key)
        except Exception as error:
            verdict = after_call_failure(
                writes=spec.writes, retry_safe=spec.retry_safe, error=error, tries=call.tries
            )
            if verdict is AfterFailure.RETRY:
                call = ledger.put_call(replace_row(call, error=render_error(error)))
                earlier_in_doubt = True
                continue
            ledger.add_message(
                "tool", texts.memory_error(type(error).__name__, str(error)), run.run_id
            )
            if spec.writes and (earlier_in_doubt or in_doubt(error)):
                # Not retry-safe, or still in doubt after its retries, or an earlier try
                # is in doubt: nobody knows whether it took effect.
                call = ledger.put_call(replace_row(call, error=render_error(error)))
                return _ask_outcome(ledger, run, call, stopped=False)
            ledger.put_call(_finish(ledger, call, CallStatus.FAILED, error=render_error(error)))
            failure = {"cause": "failed", "tool": call.tool, "error": type(error).__name__}
            return move(ledger, run, Event.STEP_FAILED, failure=failure)
        call = ledger.put_call(_finish(ledger, call, CallStatus.RAN, result=_as_recorded(result)))
        ledger.add_message("tool", texts.memory_result(call.result), run.run_id)
        return ledger.put_run(replace_row(run, cursor=call.step))


def _ask_outcome(ledger: Ledger, run: RunRow, call: CallRow, *, stopped: bool) -> RunRow:
    """Ask a person whether a write in doubt took effect; nothing is sent again."""
    call = ledger.put_call(replace_row(call, status=CallStatus.IN_DOUBT))
    waiting = Waiting(
        kind="outcome",
        tool=call.tool,
        args=dict(call.args),
        text=texts.outcome_question(call.tool, stopped=stopped),
        answers=texts.OUTCOME_ANSWERS,
        run=run.run_id,
        step=call.step,
        call=call.call_id,
    )
    return move(ledger, run, Event.IN_DOUBT, question=waiting.to_record())


def _current(run: RunRow, call: CallRow) -> CurrentCall:
    return CurrentCall(
        key=call.key or "",
        session=run.session,
        run=run.run_id,
        step=call.step,
        tool=call.tool,
        kind=call.kind,
        try_number=call.tries,
    )


def _refuse(
    ledger: Ledger,
    agentry: Agentry,
    run: RunRow,
    index: int,
    step: dict[str, Any],
    verdict: Verdict,
) -> RunRow:
    tool, args, why = step["tool"], dict(step["args"]), verdict.text
    refused = _call_row(ledger, agentry, run, index, tool, args, None, "refused", None)
    ledger.put_call(replace_row(refused, error=why, finished=ledger.clock.now()))
    if step.get("tool_call_id") is not None and not _wrote(ledger, run):
        # A model's step refused before anything of its run was written: the model is
        # told why, as the step's result, and chooses again. Nothing needs undoing.
        ledger.add_message("assistant", _memory_call(agentry, tool, args), run.run_id)
        ledger.add_message("tool", texts.memory_refused(why), run.run_id)
        return ledger.put_run(replace_row(run, cursor=index + 1))
    failure = {"cause": "refused", "tool": tool, "reason": verdict.reason}
    return move(ledger, run, Event.REFUSED, failure=failure)


def _wrote(ledger: Ledger, run: RunRow) -> bool:
    """Whether a write of this run took effect (so a later refusal fails the run)."""
    return any(
        call.kind == "write" and call.status in TOOK_EFFECT for call in ledger.run_calls(run.run_id)
    )


def _record_declined(
    ledger: Ledger, agentry: Agentry, run: RunRow, index: int, step: dict[str, Any]
) -> None:
    tool, args = step["tool"], dict(step["args"])
    declined = _call_row(ledger, agentry, run, index, tool, args, None, "declined", None)
    ledger.put_call(
        replace_row(declined, result=texts.DECLINED_RESULT, finished=ledger.clock.now())
    )
    ledger.add_message("assistant", _memory_call(agentry, tool, args), run.run_id)
    ledger.add_message("tool", texts.DECLINED_RESULT, run.run_id)


def _memory_call(agentry: Agentry, tool: str, args: Mapping[str, Any]) -> str:
    """A call that did not run, as memory keeps it: its arguments as they were shown."""
    spec = agentry.tools.get(tool)
    return texts.memory_call(tool, typed_args(spec, args) if spec is not None else args)


# --- rolling back ---


def roll_back(ledger: Ledger, agentry: Agentry, run: RunRow) -> RunRow:
    """Undo the run's writes, last first; then rewind and reply (or stop, stuck)."""
    for write in reversed(writes_to_undo(ledger, agentry, run)):
        undo = ledger.call(_undo_id(write))
        if undo is None or undo.status not in (CallStatus.IN_FLIGHT, CallStatus.FAILED):
            planned = _plan_undo(ledger, agentry, run, write)
            if planned is None:
                continue
            undo = planned
        # else: an undo already checked and recorded, left in flight or failed: sent again.
        stuck = _send_undo(ledger, agentry, run, write, undo)
        if stuck is not None:
            return stuck
    reply = _stopped_reply(ledger, agentry, run)
    run = move(ledger, run, Event.UNDONE, reply=reply)
    _rewind(ledger, run, reply)
    return run


def writes_to_undo(ledger: Ledger, agentry: Agentry, run: RunRow) -> list[CallRow]:
    """The run's writes that took effect, declare an undo, and were neither undone nor
    given up on (an undo the check refused or could not bind)."""
    given_up = {
        c.undoes
        for c in ledger.run_calls(run.run_id)
        if c.kind == "undo" and c.status == CallStatus.REFUSED
    }
    return [
        call
        for call in ledger.run_calls(run.run_id)
        if call.kind == "write"
        and call.status in TOOK_EFFECT
        and call.undone_by is None
        and call.call_id not in given_up
        and _undo_of(agentry, call.tool) is not None
    ]


def _plan_undo(ledger: Ledger, agentry: Agentry, run: RunRow, write: CallRow) -> CallRow | None:
    """Bind and check a write's undo, and record it in flight; None when it is not sent."""
    plan = agentry.check.plan_undo(write)
    if isinstance(plan, str):
        _record_undo_refused(ledger, agentry, run, write, None, plan)
        return None
    verdict = agentry.check.undo(write, plan, ledger.history())
    if not verdict.allowed:
        _record_undo_refused(ledger, agentry, run, write, plan, verdict.text)
        return None
    key = undo_key(write.key or write.call_id, plan.tool, plan.args)
    undo = ledger.put_call(
        _undo_row(ledger, agentry, run, write, plan, key, "in_flight", verdict.text)
    )
    ledger.add_message("assistant", texts.memory_call(plan.tool, plan.args), run.run_id)
    return undo


def _send_undo(
    ledger: Ledger, agentry: Agentry, run: RunRow, write: CallRow, undo: CallRow
) -> RunRow | None:
    """Send a recorded undo with its retries, each try committed first; None when it ran."""
    spec = agentry.tools[undo.tool]
    args = typed_args(spec, undo.args)

    def send(_try: int) -> Any:
        nonlocal undo
        undo = ledger.put_call(replace_row(undo, status=CallStatus.IN_FLIGHT, tries=undo.tries + 1))
        ledger.commit()
        try:
            with sending(_current(run, undo)):
                return spec.call(args, undo.key)
        except Exception as error:
            undo = ledger.put_call(replace_row(undo, error=render_error(error)))
            raise

    try:
        result = send_undo(send, agentry.undo_backoff, ledger.clock)
    except UndoGaveUp as gave_up:
        error = render_error(gave_up.error)
        undo = ledger.put_call(_finish(ledger, undo, CallStatus.FAILED, error=error))
        remaining = len(writes_to_undo(ledger, agentry, run))
        waiting = Waiting(
            kind="undo",
            tool=undo.tool,
            args=dict(undo.args),
            text=texts.undo_question(undo.tool, undo.tries, error, remaining),
            answers=texts.UNDO_ANSWERS,
            run=run.run_id,
            step=write.step,
            call=undo.call_id,
        )
        failure = dict(run.failure or {})
        failure.update({"undo": undo.tool, "undo_error": error, "tries": undo.tries})
        reply = texts.stuck_reply(_cause(run), undo.tool, undo.tries, error, remaining)
        return move(
            ledger,
            run,
            Event.UNDO_FAILED,
            failure=failure,
            reply=reply,
            question=waiting.to_record(),
        )
    undo = ledger.put_call(_finish(ledger, undo, CallStatus.RAN, result=_as_recorded(result)))
    ledger.put_call(replace_row(write, undone_by=undo.call_id))
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
    ledger.put_call(replace_row(row, error=why, finished=ledger.clock.now()))


def _rewind(ledger: Ledger, run: RunRow, reply: str) -> None:
    """Rewind the run's memory; a run with nothing left to hide still leaves its reply."""
    if not rewind(ledger, run, reply):
        ledger.add_message("assistant", reply, None)


# --- the replies ---


def _cause(run: RunRow) -> str:
    failure = run.failure or {}
    cause = failure.get("cause")
    if cause == "cancelled":
        return texts.cancelled_because(failure["tool"])
    if cause == "refused":
        return texts.refused_because(failure["tool"], failure["reason"])
    if cause == "did_not_happen":
        return texts.did_not_happen_because(failure["tool"])
    if cause == "operator":
        return texts.operator_because()
    if cause == "model":
        return texts.model_failed_because(failure["model"], failure["detail"])
    if cause == "model_cap":
        return texts.model_cap_because(failure["model"], failure["calls"])
    return texts.failed_because(failure.get("tool", "?"), failure.get("error", "?"))


def _stopped_reply(ledger: Ledger, agentry: Agentry, run: RunRow) -> str:
    calls = ledger.run_calls(run.run_id)
    by_id = {call.call_id: call for call in calls}
    refused_undo = {
        c.undoes: c for c in calls if c.kind == "undo" and c.status == CallStatus.REFUSED
    }
    pending = {write.call_id for write in writes_to_undo(ledger, agentry, run)}
    undone: list[tuple[str, str | None]] = []
    not_undoable: list[str] = []
    not_undone: list[tuple[str, str]] = []
    abandoned: list[str] = []
    writes = [c for c in calls if c.kind == "write" and c.status in TOOK_EFFECT]
    for write in sorted(writes, key=lambda c: c.seq, reverse=True):
        if write.undone_by is not None:
            undo = by_id[write.undone_by]
            undone.append((write.tool, None if undo.status == CallStatus.BY_HAND else undo.tool))
        elif write.call_id in refused_undo:
            not_undone.append((write.tool, refused_undo[write.call_id].error or ""))
        elif write.call_id in pending:
            abandoned.append(write.tool)
        else:
            not_undoable.append(write.tool)
    return texts.stopped_reply(_cause(run), undone, not_undoable, not_undone, abandoned)


def _outcomes(ledger: Ledger, run: RunRow) -> list[tuple[str, Any, str]]:
    return [
        (call.tool, call.result, call.status)
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
    spec = agentry.tools.get(tool)
    return CallRow(
        call_id=f"{run.run_id}:{index + 1}",
        run_id=run.run_id,
        session=run.session,
        agent=agentry.name,
        seq=ledger.next_call_seq(),
        step=index + 1,
        kind="write" if spec is not None and spec.writes else "read",
        tool=tool,
        args=_as_recorded(args),
        key=key,
        status=status,
        allowed=allowed,
        result=None,
        error=None,
        undoes=None,
        undone_by=None,
        # Where each argument came from (provenance.py), kept with the call.
        bindings=step_sources(run.steps[index]),
        created=ledger.clock.now(),
        finished=None,
    )


def _undo_id(write: CallRow) -> str:
    return f"{write.call_id}:undo"


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
        call_id=_undo_id(write),
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
    return replace_row(call, status=status, finished=ledger.clock.now(), **changes)


def typed_args(spec: ToolSpec, args: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments as the tool's hints declare them, whichever process reads them back.

    The record keeps JSON, where a Decimal is its text; the tool, and the key computed
    from the arguments, see the Decimal again. The arguments come in the order of the
    tool's parameters, as a confirmation shows them.
    """
    order = {param.name: position for position, param in enumerate(spec.params)}
    typed: dict[str, Any] = {}
    for name in sorted(args, key=lambda name: order.get(name, len(order))):
        value = args[name]
        param = spec.param(name)
        if param is not None and param.base_type is Decimal and isinstance(value, str | int):
            value = Decimal(value)
        typed[name] = value
    return typed


def _as_recorded(value: Any) -> Any:
    """The value as the record keeps it (JSON), so every process binds the same values."""
    return as_recorded(value)
