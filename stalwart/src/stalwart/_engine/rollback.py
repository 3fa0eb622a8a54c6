"""A failed run's rollback: its writes undone last first, each undo checked, recorded in
flight and sent with its retries; an undo failing every try stops the rollback (stuck).
Also the reply a stopped run ends with, and the rewind of its memory.

The run's state is not moved here: `runs.advance` moves it on what `undo_writes` found.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from .. import logs, texts
from ..errors import NotRecordable, UndoGaveUp
from ..labels import as_shown, step_label, step_labels, undo_labels
from ..policy.check import UndoPlan
from ..record.ledger import Ledger
from ..record.memory import rewind
from ..record.schema import TOOK_EFFECT, CallRow, CallStatus, RunRow, as_recorded, replace_row
from ..replies import Waiting
from ..tools import UndoSpec, closest_tool
from ..tools.current import sending
from .calls import (
    as_current,
    declares_undo,
    finish,
    typed_args,
    undo_id,
    undo_row,
    undo_to_send,
)
from .context import RunContext
from .doubt import in_doubt
from .failures import Cancelled, RunFailure, StuckWhy, cause_text, failure_of
from .history import PastCalls
from .keys import undo_key
from .retry import render_error, send_undo

log = logging.getLogger(logs.RUN)


@dataclass(frozen=True)
class Stuck:
    """An undo failed on every try: the rollback stopped, and a person is asked."""

    failure: RunFailure
    reply: str
    question: dict[str, Any]


@dataclass(frozen=True)
class Left:
    """This worker cannot send the next undo (its catalogue lacks the tool, which another
    agent of the project has); the run is left rolling back for a worker that can, and
    `reply` says so."""

    reply: str


def undo_writes(ledger: Ledger, context: RunContext, run: RunRow) -> Stuck | Left | None:
    """Undo the run's writes, last first; None when nothing remains to undo.

    The rollback stops at the first write it cannot undo now, whatever the reason: an
    undo that failed on every try of its round, an undo the check refused or could not
    bind, and an undo whose tool no agent of the project has. Undoing the writes below it
    first would undo them out of order.
    """
    for write in reversed(writes_to_undo(ledger, context, run)):
        undo = ledger.call(undo_id(write))
        declared: UndoSpec | None = None
        if undo is None or undo.status == CallStatus.REFUSED:
            # Never sent: bound and checked now.
            declared = undo_to_send(context, write)
            assert declared is not None  # writes_to_undo keeps only writes with an undo
            tool = declared.tool
        else:
            tool = undo.tool  # sent before: sent again as it was, under its key
        if tool not in context.tools:
            if tool in context.other_agents_tools:
                # This worker's agent.yaml lacks the undo, which another agent of the
                # project has (a deploy in progress): the run is left rolling back for a
                # worker that has it.
                write_label = _write_label(context, run, write)
                return Left(texts.undo_left_for_another_worker(write_label, tool))
            # No agent of the project has it (a misspelt name): no worker ever will, so
            # the rollback stops here, as for an undo that fails, and a person is asked.
            return _undo_missing(ledger, context, run, write, undo, tool)
        typed: dict[str, Any] | None = None  # the undo's arguments, when typed already
        if declared is not None:
            planned = _plan_undo(ledger, context, run, write, declared)
            if isinstance(planned, Stuck):
                return planned
            undo, typed = planned
        else:
            assert undo is not None
            if undo.status == CallStatus.IN_FLIGHT:
                # Found in flight: its process stopped while a try was being sent, so that
                # try may have taken effect. It is sent again under its key.
                undo = ledger.put_call(replace_row(undo, doubted=True))
            # else: an undo checked and recorded before, that failed: sent again.
        stuck = _send_undo(ledger, context, run, write, undo, typed)
        if stuck is not None:
            return stuck
    return None


def writes_to_undo(ledger: Ledger, context: RunContext, run: RunRow) -> list[CallRow]:
    """The run's writes that took effect, declare an undo, and were not undone (an undo
    the check refused or could not bind still needs undoing: the rollback stops there)."""
    return [
        call
        for call in ledger.run_calls(run.run_id)
        if call.kind == "write"
        and call.status in TOOK_EFFECT
        and call.undone_by is None
        and declares_undo(context, call)
    ]


def round_started_at(run: RunRow, undo: CallRow) -> int:
    """The undo's tries before its current round: 0, or its tries when a person answered
    `retry` (each answer gives it a new round). A round cut short by a stopped process
    goes on, counting the tries it made."""
    rounds = failure_of(run.failure).undo_rounds or {}
    started = rounds.get(undo.call_id, 0)
    return started if isinstance(started, int) else 0


def _plan_undo(
    ledger: Ledger, context: RunContext, run: RunRow, write: CallRow, declared: UndoSpec
) -> tuple[CallRow, dict[str, Any]] | Stuck:
    """Bind and check a write's undo, and record it in flight, with its arguments as its
    tool will receive them (typed as it declares them); Stuck when it is not sent."""
    plan = context.check.plan_undo(write, declared)
    if isinstance(plan, str):
        return _not_sent(ledger, context, run, write, declared, None, plan)
    verdict = context.check.undo(write, plan, PastCalls(ledger))
    if not verdict.allowed:
        return _not_sent(ledger, context, run, write, declared, plan, verdict.text)
    key = undo_key(write.key or write.call_id, plan.tool, plan.args)
    undo = ledger.put_call(undo_row(ledger, run, write, plan, key, "in_flight", verdict.text))
    shown = as_shown(context.tools, plan.tool, plan.args)  # as the undo will receive them
    ledger.add_message("assistant", texts.memory_call(plan.tool, shown), run.run_id)
    return undo, shown


def _not_sent(
    ledger: Ledger,
    context: RunContext,
    run: RunRow,
    write: CallRow,
    declared: UndoSpec,
    plan: UndoPlan | None,
    why: str,
) -> Stuck:
    """An undo the check refused or could not bind: recorded refused, never sent, and the
    rollback stops at it with its own question."""
    undo = _record_undo_refused(ledger, run, write, declared, plan, why)
    remaining = len(writes_to_undo(ledger, context, run))
    text = texts.undo_not_sent_question(
        _write_label(context, run, write), undo.tool, why, remaining
    )
    return _stuck_at(ledger, context, run, write, undo, text, {"undo_refused": why})


def _undo_missing(
    ledger: Ledger,
    context: RunContext,
    run: RunRow,
    write: CallRow,
    undo: CallRow | None,
    tool: str,
) -> Stuck:
    """The undo's tool is in no agent of the project: the rollback stops at it, stuck, and
    a person is asked. `retry` binds it again (it works once agent.yaml names a tool that
    exists and the process is restarted), `done by hand` goes on with the next write,
    `abandon` stops. An undo never sent is recorded refused; one sent before (by a worker
    that had its tool) is kept as it is, said perhaps done when a try got no answer."""
    if undo is None or undo.status == CallStatus.REFUSED:
        why = texts.undo_in_no_agent(tool)
        undo = _record_undo_refused(ledger, run, write, UndoSpec(tool=tool), None, why)
    elif undo.status == CallStatus.IN_FLIGHT and not undo.doubted:
        undo = ledger.put_call(replace_row(undo, doubted=True))
    remaining = len(writes_to_undo(ledger, context, run))
    text = texts.undo_missing_question(
        _write_label(context, run, write),
        tool,
        remaining,
        closest=closest_tool(tool, (name for name in context.tools if name != write.tool)),
        maybe_done=undo.doubted,
    )
    return _stuck_at(ledger, context, run, write, undo, text, {"undo_missing": tool})


def _send_undo(
    ledger: Ledger,
    context: RunContext,
    run: RunRow,
    write: CallRow,
    undo: CallRow,
    typed: dict[str, Any] | None = None,
) -> Stuck | None:
    """Send a recorded undo with its retries, each try committed first; None when it ran.

    Each failure is committed before the wait, so a process stopped during a wait leaves
    the tries it made counted, and the round goes on from there when resumed. `typed`:
    its arguments typed as its tool declares them, when they were just bound and recorded
    (`_plan_undo`); else typed back from the record, which keeps a typed value exactly.
    """
    spec = context.tools[undo.tool]
    args = typed if typed is not None else typed_args(spec, undo.args)
    done = undo.tries - round_started_at(run, undo)
    backoff = context.undo_backoff

    def send(_try: int) -> Any:
        nonlocal undo
        undo = ledger.put_call(replace_row(undo, status=CallStatus.IN_FLIGHT, tries=undo.tries + 1))
        ledger.commit()
        log.info(texts.UNDO_SENT, run.session, run.run_id, write.tool, undo.tool, undo.tries)
        try:
            with sending(as_current(run, undo, ledger.lease_token)):
                return spec.call(args, undo.key)
        except Exception as error:
            undo = ledger.put_call(
                replace_row(
                    undo,
                    status=CallStatus.FAILED,
                    error=render_error(error),
                    doubted=undo.doubted or in_doubt(error),
                )
            )
            ledger.commit()
            raise

    if done >= backoff.tries:
        # Every try of the round was made before its process stopped (the last one
        # perhaps cut off): nothing is sent, and a person is asked.
        return _stuck(ledger, context, run, write, undo, undo.error or texts.UNDO_CUT_OFF)
    try:
        result = send_undo(send, backoff, ledger.clock, done=max(done, 0))
    except UndoGaveUp as gave_up:
        error = render_error(gave_up.error)
        log.info(texts.UNDO_GAVE_UP, run.session, run.run_id, undo.tool, undo.tries, error)
        return _stuck(ledger, context, run, write, undo, error)
    try:
        recorded, error_text = as_recorded(result), None
    except NotRecordable as error:  # it ran; only what it returned cannot be kept
        recorded, error_text = None, render_error(error)
    undo = ledger.put_call(finish(ledger, undo, CallStatus.RAN, result=recorded, error=error_text))
    ledger.put_call(replace_row(write, undone_by=undo.call_id))
    ledger.add_message("tool", texts.memory_result(undo.result), run.run_id)
    return None


def _stuck(
    ledger: Ledger,
    context: RunContext,
    run: RunRow,
    write: CallRow,
    undo: CallRow,
    error: str,
) -> Stuck:
    """An undo that failed on every try of its round: the rollback stops, a person is asked."""
    undo = ledger.put_call(finish(ledger, undo, CallStatus.FAILED, error=error))
    remaining = len(writes_to_undo(ledger, context, run))
    doubted = undo_labels(context.tools, ledger.run_calls(run.run_id))[undo.call_id]
    text = texts.undo_question(
        _write_label(context, run, write),
        undo.tries,
        error,
        remaining,
        maybe_done=doubted if undo.doubted else None,
    )
    return _stuck_at(
        ledger, context, run, write, undo, text, {"undo_error": error, "tries": undo.tries}
    )


def _write_label(context: RunContext, run: RunRow, write: CallRow) -> str:
    """How the questions and replies name a write: apart from the run's other calls of its
    tool (`labels.step_labels`)."""
    return step_label(run, step_labels(context.tools, run), write.step, write.tool)


def _stuck_at(
    ledger: Ledger,
    context: RunContext,
    run: RunRow,
    write: CallRow,
    undo: CallRow,
    text: str,
    why: StuckWhy,
) -> Stuck:
    """The rollback stopped at `undo`: the person is asked `text`, and the run's failure
    says which undo and `why` (`RunFailure`'s fields of it: `undo_refused`, ...)."""
    waiting = Waiting(
        kind="undo",
        tool=undo.tool,
        args=dict(undo.args),
        text=text,
        answers=texts.UNDO_ANSWERS,
        run=run.run_id,
        step=write.step,
        call=undo.call_id,
    )
    failure = replace(failure_of(run.failure), undo=undo.tool, **why)
    return Stuck(
        failure=failure,
        reply=texts.stuck_reply(_cause(ledger, context, run), text),
        question=waiting.to_record(),
    )


def _record_undo_refused(
    ledger: Ledger,
    run: RunRow,
    write: CallRow,
    declared: UndoSpec,
    plan: UndoPlan | None,
    why: str,
) -> CallRow:
    bound = plan or UndoPlan(tool=declared.tool, args={}, sources={})
    row = undo_row(ledger, run, write, bound, None, "refused", None)
    return ledger.put_call(replace_row(row, error=why, finished=ledger.clock.now()))


def rewind_run(ledger: Ledger, run: RunRow, reply: str) -> None:
    """Rewind the run's memory; a run with nothing left to hide still leaves its reply."""
    if not rewind(ledger, run, reply):
        ledger.add_message("assistant", reply, None)


# --- the reply of a stopped run ---


def _cause(
    ledger: Ledger,
    context: RunContext,
    run: RunRow,
    failure: RunFailure | None = None,
    labels: Mapping[int, str] | None = None,
) -> str:
    """Why the run stopped; `failure` (the run's, read back) and `labels` (its steps'
    `step_labels`), when the caller has them already."""
    failure = failure_of(run.failure) if failure is None else failure
    cause = failure.cause

    def named(tool: str) -> str:
        """How the reply names the step the run failed at: a cancelled step waited at the
        cursor; any other is the run's latest call of that tool."""
        step = run.cursor + 1 if isinstance(cause, Cancelled) else _failed_step(ledger, run, tool)
        shown = labels if labels is not None else step_labels(context.tools, run)
        return step_label(run, shown, step, tool)

    earlier = cause_text(cause, named) if cause is not None else None
    if failure.ended is not None:
        # Ended by an operator: why it was failing before, if it was, then the ending.
        return texts.operator_ended_because(failure.ended.by, failure.ended.reason, earlier)
    return earlier if earlier is not None else texts.failed_because("?", "?")


def _failed_step(ledger: Ledger, run: RunRow, tool: str) -> int | None:
    for call in sorted(ledger.run_calls(run.run_id), key=lambda c: c.seq, reverse=True):
        if call.kind in ("read", "write") and call.tool == tool:
            return call.step
    return None


def stopped_reply(ledger: Ledger, context: RunContext, run: RunRow) -> str:
    """Why the run stopped, and what became of each of its writes, latest first."""
    calls = ledger.run_calls(run.run_id)
    by_id = {call.call_id: call for call in calls}
    refused_undo = {
        c.undoes: c for c in calls if c.kind == "undo" and c.status == CallStatus.REFUSED
    }
    pending = {write.call_id for write in writes_to_undo(ledger, context, run)}
    failure = failure_of(run.failure)
    ended = failure.ended
    undone: list[tuple[str, str | None]] = []
    not_undoable: list[str] = []
    not_undone: list[tuple[str, str]] = []
    abandoned: list[str] = []
    maybe_done: list[str] = []
    left: list[str] = []  # an operator ended the run: still to be undone by hand
    # Each write named apart from the run's other calls of its tool, each undo from its
    # other undos of the same tool (a tool called once is named alone, as the chapter does).
    steps = step_labels(context.tools, run)
    undos = undo_labels(context.tools, calls)

    def named(call: CallRow) -> str:
        return step_label(run, steps, call.step, call.tool)

    in_doubt = [named(c) for c in calls if c.kind == "write" and c.status == CallStatus.IN_DOUBT]
    writes = [c for c in calls if c.kind == "write" and c.status in TOOK_EFFECT]
    for write in sorted(writes, key=lambda c: c.seq, reverse=True):
        if write.undone_by is not None:
            undo = by_id[write.undone_by]
            undone.append((named(write), None if undo.status == CallStatus.BY_HAND else undo.tool))
        elif write.call_id in refused_undo:
            not_undone.append((named(write), refused_undo[write.call_id].error or ""))
        elif write.call_id in pending:
            (left if ended is not None else abandoned).append(named(write))
            tried = by_id.get(undo_id(write))
            if tried is not None and tried.doubted:
                maybe_done.append(undos.get(tried.call_id, tried.tool))
        else:
            not_undoable.append(named(write))
    not_run = ended.not_run if ended is not None else None
    return texts.stopped_reply(
        _cause(ledger, context, run, failure, steps),
        undone,
        not_undoable,
        not_undone,
        abandoned,
        maybe_done,
        left=left,
        in_doubt=in_doubt,
        not_run=step_label(run, steps, run.cursor + 1, not_run) if not_run else None,
    )
