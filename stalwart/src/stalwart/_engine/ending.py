"""An operator ends a run that cannot go on (chapter 34: the operator acts from outside the
run, with the operator token; issue 10: "an operator can always end a run that cannot go
on"): stuck on an undo that keeps failing, waiting on a question nobody will answer, left
mid-way by a worker whose agent.yaml lacks a tool, or in flight with an outcome that could
not be recorded.

Ending never sends a step forward, and never sends again what was sent before, so it does
not depend on whatever made the run unable to go on:

- a step waiting for its confirmation is not run (nobody confirmed it);
- a call found in flight is not sent again: a write's outcome is left in doubt, for a
  person to decide; an undo's try is said to be perhaps done; a read or an ask of a model
  changed nothing and is failed;
- a write in doubt stays in doubt: nothing below it is undone (its undo would come first);
- otherwise the writes that took effect are undone last first, as a failed run's are
  (each undo bound, checked, recorded in flight and sent with its round of tries), but
  only with undos never tried before. The rollback stops at the first write it cannot
  undo now (its undo tried before, as a stuck run's was; missing from this worker's
  agent.yaml; refused by the check; failing its round), and that write and every write
  below it are left for a person to undo by hand.

The run moves to `ending` before its first undo is sent (a process stopped there leaves it
`ending`, and whoever takes it up finishes the ending, by the same rules), then to
`ended_by_operator`: memory is rewound as a failed run's, and its one reply says who ended
it and why, what was undone, what is left as it is, and what a person must do by hand.
Who ended it, when, why, and the state it was in are kept on the run (its failure's `ended`);
every call stays in the record as it was, with the outcome it came to.

A worker that hangs keeps the session's lock; the operator's ending then takes the session
without it once that worker's lease has expired (`Store.take_over`), fencing it: nothing it
commits from then on is written. The ending's `taken_from` names the lease's holder
it was taken from, and the operator's reply says so (`Agent.operator_end`).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from .. import logs, texts
from ..record.ledger import Ledger
from ..record.schema import CallStatus, RunRow, replace_row
from ..states import Event, State
from .calls import finish, undo_id
from .context import RunContext
from .failures import Ending, failure_of
from .rollback import rewind_run, stopped_reply, undo_writes, writes_to_undo
from .runs import move

log = logging.getLogger(logs.RUN)


def end(ledger: Ledger, context: RunContext, run: RunRow, *, by: str | None, reason: str) -> RunRow:
    """End `run` (waiting, stuck, or left running or rolling back) for the operator `by`."""
    taken_from = None
    lease = ledger.lease
    if lease is not None and lease.taken_over:  # from a worker that hangs, now fenced
        taken_from = lease.taken_from
        log.info(texts.SESSION_TAKEN_OVER, run.session, run.run_id, lease.taken_from, lease.token)
    question = run.question or {}
    not_run = None
    if run.state == State.WAITING and question.get("kind") == "confirm":
        not_run = question.get("tool")
    ended = Ending(by, ledger.clock.now(), reason, run.state, taken_from, not_run)
    failure = replace(failure_of(run.failure), ended=ended).to_record()
    run = move(ledger, run, Event.OPERATOR_END, failure=failure, question=None)
    return finish_ending(ledger, context, run)


def finish_ending(ledger: Ledger, context: RunContext, run: RunRow) -> RunRow:
    """Settle what was in flight, undo what may be undone now, rewind, reply; the run is
    `ended_by_operator`. Also what takes up a run found `ending` (its process stopped)."""
    _settle_in_flight(ledger, run)
    if not _in_doubt(ledger, run) and not _head_tried(ledger, context, run):
        # Where it stops (Stuck, Left), what remains is left for a person: not asked again.
        undo_writes(ledger, context, run)
    reply = stopped_reply(ledger, context, run)
    run = move(ledger, run, Event.ENDED, reply=reply)
    rewind_run(ledger, run, reply)
    ledger.commit()
    return run


def _settle_in_flight(ledger: Ledger, run: RunRow) -> None:
    """Every call of the run found in flight gets the outcome that is known of it."""
    for call in ledger.run_calls(run.run_id):
        if call.status != CallStatus.IN_FLIGHT:
            continue
        if call.kind == "write":
            # Sent, perhaps taken effect: a person decides, outside the run.
            ledger.put_call(replace_row(call, status=CallStatus.IN_DOUBT, doubted=True))
        elif call.kind == "undo":
            error = call.error or texts.UNDO_CUT_OFF
            ledger.put_call(finish(ledger, call, CallStatus.FAILED, error=error, doubted=True))
        else:  # a read, or an ask of a model: it changed nothing
            ledger.put_call(finish(ledger, call, CallStatus.FAILED, error=texts.ENDED_IN_FLIGHT))


def _in_doubt(ledger: Ledger, run: RunRow) -> bool:
    """Whether a write of the run is in doubt (it is then the run's latest write)."""
    return any(
        call.kind == "write" and call.status == CallStatus.IN_DOUBT
        for call in ledger.run_calls(run.run_id)
    )


def _head_tried(ledger: Ledger, context: RunContext, run: RunRow) -> bool:
    """Whether the undo of the next write to undo was tried before (failed, cut off,
    refused): ending does not send it again, and stops there."""
    pending = writes_to_undo(ledger, context, run)
    return bool(pending) and ledger.call(undo_id(pending[-1])) is not None
