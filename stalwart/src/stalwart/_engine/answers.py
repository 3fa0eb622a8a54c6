"""A person's answers: which event each answer to each kind of question is (one table),
and what taking it does to the run before it goes on."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from .. import texts
from ..errors import RunStateError
from ..policy.check import UndoPlan
from ..record.ledger import Ledger
from ..record.schema import CallRow, CallStatus, RunRow, replace_row
from ..replies import Waiting
from ..states import Event
from ..steps import PlannedStep
from .calls import finish, recorded_undo, undo_id, undo_row
from .context import RunContext
from .failures import Cancelled, DidNotHappen, failure_of, recorded_failure
from .rollback import rewind_run, stopped_reply, writes_to_undo
from .runs import advance, move, record_declined, send_step

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


def answer(
    ledger: Ledger,
    context: RunContext,
    run: RunRow,
    given: str,
    *,
    by: str | None = None,
    reason: str | None = None,
    question: Waiting | None = None,
) -> RunRow:
    """Take a person's answer to the question the run waits on, and go on.

    The answer is recorded on the run first (`RunRow.answers`): the question, the answer,
    who gave it (`by`), when, when the question was asked, and the person's `reason` (a
    skip's or a cancel all's; None for none), in the same commit as what it does.
    `question`: the run's question, when the caller read it already (`Waiting.from_record`
    of `run.question`); else it is read here."""
    if question is None:
        question = Waiting.from_record(run.question or {})
    event = ANSWER_EVENTS.get((question.kind, given))
    if event is None:
        raise RunStateError(f"{given!r} is not an answer to a question of kind {question.kind!r}")
    entry = {
        "question": question.id,
        "kind": question.kind,
        "tool": question.tool,
        "step": question.step,
        "call": question.call,
        "text": question.text,
        "answer": given,
        "by": by,
        "at": ledger.clock.now(),
        "asked": run.updated,  # the run's last change was the asking
        "reason": reason or None,
    }
    run = ledger.put_run(replace_row(run, answers=[*(run.answers or []), entry]))
    run = _ANSWER_HANDLERS[event](ledger, context, run, question)
    return advance(ledger, context, run)


def _approve(ledger: Ledger, context: RunContext, run: RunRow, question: Waiting) -> RunRow:
    run = move(ledger, run, Event.APPROVE, question=None)
    if run.framework is not None:
        # A guarded run's step is sent by its framework, through its guard: the approval
        # (naming the question it answers) is recorded on the step, and nothing is sent here.
        steps = list(run.steps)
        approved = replace(PlannedStep.from_record(steps[run.cursor]), approved=question.id)
        steps[run.cursor] = approved.to_record()
        return ledger.put_run(replace_row(run, steps=steps))
    return send_step(
        ledger, context, run, run.cursor, PlannedStep.from_record(run.steps[run.cursor])
    )


def _skip(ledger: Ledger, context: RunContext, run: RunRow, question: Waiting) -> RunRow:
    run = move(ledger, run, Event.SKIP, question=None)
    step = PlannedStep.from_record(run.steps[run.cursor])
    record_declined(ledger, context, run, run.cursor, step, _reason(run))
    return ledger.put_run(replace_row(run, cursor=run.cursor + 1))


def _cancel_all(ledger: Ledger, context: RunContext, run: RunRow, question: Waiting) -> RunRow:
    failure = recorded_failure(Cancelled(question.tool, _reason(run)))
    return move(ledger, run, Event.CANCEL_ALL, question=None, failure=failure)


def _happened(ledger: Ledger, context: RunContext, run: RunRow, question: Waiting) -> RunRow:
    call = _asked_call(ledger, question)
    ledger.put_call(finish(ledger, call, CallStatus.HAPPENED))
    ledger.add_message("tool", texts.MEMORY_HAPPENED, run.run_id)
    return move(ledger, run, Event.HAPPENED, question=None, cursor=call.step)


def _did_not_happen(ledger: Ledger, context: RunContext, run: RunRow, question: Waiting) -> RunRow:
    call = _asked_call(ledger, question)
    ledger.put_call(finish(ledger, call, CallStatus.DID_NOT_HAPPEN))
    ledger.add_message("tool", texts.MEMORY_DID_NOT_HAPPEN, run.run_id)
    failure = recorded_failure(DidNotHappen(call.tool))
    return move(ledger, run, Event.DID_NOT_HAPPEN, question=None, failure=failure)


def _retry_undo(ledger: Ledger, context: RunContext, run: RunRow, question: Waiting) -> RunRow:
    # The rollback starts again at the failed undo, which is re-sent under its key with a
    # new round of tries (one the check refused is bound and checked again).
    undo = _asked_call(ledger, question)
    failing = failure_of(run.failure)
    rounds = {**(failing.undo_rounds or {}), undo.call_id: undo.tries}
    failure = replace(failing, undo_rounds=rounds).to_record()
    return move(ledger, run, Event.RETRY_UNDO, question=None, reply=None, failure=failure)


def _done_by_hand(ledger: Ledger, context: RunContext, run: RunRow, question: Waiting) -> RunRow:
    undo = _asked_call(ledger, question)
    undo = ledger.put_call(finish(ledger, undo, CallStatus.BY_HAND))
    write = ledger.call(undo.undoes or "")
    if write is None:
        raise RunStateError(f"{undo.call_id} undoes nothing the record holds")
    ledger.put_call(replace_row(write, undone_by=undo.call_id))
    ledger.add_message("tool", texts.MEMORY_UNDONE_BY_HAND, run.run_id)
    return move(ledger, run, Event.DONE_BY_HAND, question=None, reply=None)


def undone_by_hand(ledger: Ledger, context: RunContext, run: RunRow, write: CallRow) -> RunRow:
    """A person says a write their ended run left them (`writes_to_undo` of an abandoned
    rollback, or of an operator's ending) was undone by hand: recorded as the `done by
    hand` answer records it, so nothing undoes it again (an operator's undo included).
    The run's reply is said again, with the write among those undone."""
    undo = ledger.call(undo_id(write))
    if undo is None:  # never tried: its undo is recorded now, as done by hand
        declared = recorded_undo(context, write)
        assert declared is not None  # writes_to_undo keeps only writes with an undo
        plan = context.check.plan_undo(write, declared)
        if isinstance(plan, str):  # the arguments it would have had are not known
            plan = UndoPlan(tool=declared.tool, args={}, sources={})
        undo = undo_row(ledger, run, write, plan, None, CallStatus.BY_HAND, None)
    undo = ledger.put_call(finish(ledger, undo, CallStatus.BY_HAND))
    ledger.put_call(replace_row(write, undone_by=undo.call_id))
    run = ledger.put_run(replace_row(run, reply=stopped_reply(ledger, context, run)))
    ledger.commit()
    return run


def _abandon(ledger: Ledger, context: RunContext, run: RunRow, question: Waiting) -> RunRow:
    remaining = [write.call_id for write in writes_to_undo(ledger, context, run)]
    failure = replace(failure_of(run.failure), abandoned=remaining).to_record()
    run = replace_row(run, failure=failure)
    reply = stopped_reply(ledger, context, run)
    run = move(ledger, run, Event.ABANDON, question=None, reply=reply)
    rewind_run(ledger, run, reply)
    return run


_ANSWER_HANDLERS: Mapping[Event, Callable[[Ledger, RunContext, RunRow, Waiting], RunRow]] = {
    Event.APPROVE: _approve,
    Event.SKIP: _skip,
    Event.CANCEL_ALL: _cancel_all,
    Event.HAPPENED: _happened,
    Event.DID_NOT_HAPPEN: _did_not_happen,
    Event.RETRY_UNDO: _retry_undo,
    Event.DONE_BY_HAND: _done_by_hand,
    Event.ABANDON: _abandon,
}


def _reason(run: RunRow) -> str | None:
    """The reason the person gave with the answer being taken (recorded just before)."""
    given = (run.answers or [{}])[-1].get("reason")
    return given if isinstance(given, str) and given else None


def _asked_call(ledger: Ledger, question: Waiting) -> CallRow:
    call = ledger.call(question.call or "")
    if call is None:
        raise RunStateError(f"the question is about {question.call!r}, which the record lacks")
    return call
