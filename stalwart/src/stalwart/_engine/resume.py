"""A run taken up from outside its own steps: one a stopped process left mid-way, and an
ended one an operator undoes (an operator's ending is `ending.py`)."""

from __future__ import annotations

import logging

from .. import logs, texts
from ..record.ledger import Ledger
from ..record.schema import CallStatus, RunRow, replace_row
from ..states import Event, State
from .context import RunContext
from .ending import finish_ending
from .failures import OperatorUndo, RunFailure
from .runs import advance, ask_outcome, move, try_call

log = logging.getLogger(logs.RUN)


def resume(ledger: Ledger, context: RunContext, run: RunRow) -> RunRow:
    """Take up a run its process left mid-way (found `running` or `rolling_back`).

    A call left in flight is sent again under its key when it is a read or a retry-safe
    write (a guarded run's, by its framework when it takes the run up again); any other
    write becomes the question "Did <tool> take effect? It was being
    sent when the run stopped." A rollback goes on where it stopped, and an undo left in
    flight is sent again under its own key. The check is not run again for a call the
    record shows it allowed.
    """
    log.info(texts.RUN_RESUMED, run.session, run.run_id, run.state)
    if run.state == State.ENDING:
        # An operator's ending its process left mid-way: finished by the ending's rules
        # (an undo it left in flight is not sent again).
        return finish_ending(ledger, context, run)
    if run.state == State.RUNNING:
        # An ask of the model left in flight is asked again by `advance`: it changes nothing.
        flying = [
            call
            for call in ledger.run_calls(run.run_id)
            if call.status == CallStatus.IN_FLIGHT and call.kind in ("read", "write")
        ]
        if flying:
            call = flying[-1]
            spec = context.tools.get(call.tool)
            if spec is None:
                # This worker's agent.yaml lacks the tool (a deploy in progress): nothing
                # is decided here; the call stays in flight, the run running, for a
                # worker that has the tool.
                left = texts.call_left_for_another_worker(call.tool)
                if run.reply != left:  # said once, not recommitted at every touch
                    run = ledger.put_run(replace_row(run, reply=left))
                    ledger.commit()
                return run
            if spec.writes and not spec.retry_safe:
                run = ask_outcome(ledger, run, call, stopped=True, context=context)
            elif run.framework is None:
                run = try_call(ledger, context, run, call)
            # else: a guarded run's call is sent again by its framework, through its guard,
            # under the same key (`stalwart.guarded`): it stays in flight until then.
    return advance(ledger, context, run)


def operator_undo(ledger: Ledger, context: RunContext, run: RunRow) -> RunRow:
    """Undo an ended run's writes that are not undone yet, last first, and rewind it."""
    # Every undo the operator's rollback sends gets a new round of tries.
    rounds = {c.call_id: c.tries for c in ledger.run_calls(run.run_id) if c.kind == "undo"}
    before = RunFailure.from_record(run.failure) if run.failure is not None else None
    failure = RunFailure(OperatorUndo(before), undo_rounds=rounds).to_record()
    run = move(ledger, run, Event.OPERATOR_UNDO, failure=failure, question=None)
    return advance(ledger, context, run)
