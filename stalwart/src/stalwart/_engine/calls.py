"""A run's calls as the record keeps them: a step's row, an undo's row, a finished row,
the arguments typed back as the tool declares them, and the call as its tool reads it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..policy.check import UndoPlan
from ..policy.provenance import all_from_turn
from ..record.ledger import Ledger
from ..record.schema import CallRow, RunRow, as_recorded, replace_row
from ..steps import PlannedStep
from ..tools import ToolSpec, UndoSpec
from ..tools.current import CurrentCall
from .context import RunContext


def step_sources(step: PlannedStep) -> dict[str, str]:
    """Where each argument of a step came from: as recorded for a model's step, and every
    value from the turn for a step the selector read."""
    recorded = step.sources
    return dict(recorded) if recorded is not None else all_from_turn(step.args)


def undo_tool_of(context: RunContext, tool: str) -> str | None:
    """The tool that undoes `tool` as this agent declares it now, or None."""
    spec = context.tools.get(tool)
    return spec.undo.tool if spec is not None and spec.undo is not None else None


def declared_undo(spec: ToolSpec | None) -> dict[str, Any]:
    """A write's undo as the record keeps it with the write: {} when it declares none."""
    if spec is None or spec.undo is None:
        return {}
    args = dict(spec.undo.args) if spec.undo.args is not None else None
    return {"tool": spec.undo.tool, "args": args}


def recorded_undo(context: RunContext, write: CallRow) -> UndoSpec | None:
    """The undo the write declared when it ran (today's declaration for a write recorded
    before declarations were kept); None when it declared none."""
    declared = _declared(context, write)
    if not declared:
        return None
    return UndoSpec(tool=declared["tool"], args=declared.get("args"))


def declares_undo(context: RunContext, write: CallRow) -> bool:
    """Whether `recorded_undo` finds an undo for the write, the UndoSpec not built (a
    rollback and its reply ask it of every write of the run)."""
    return bool(_declared(context, write))


def _declared(context: RunContext, write: CallRow) -> dict[str, Any]:
    if write.undo is not None:
        return write.undo
    return declared_undo(context.tools.get(write.tool))


def undo_to_send(context: RunContext, write: CallRow) -> UndoSpec | None:
    """The undo a rollback binds for `write`, never sent before: the one recorded with the
    write; but when no agent of the project has that tool (a misspelt name, fixed in
    agent.yaml since the write ran), the one the write's tool declares now, if this agent
    has it. None when the write declared no undo."""
    recorded = recorded_undo(context, write)
    if recorded is None or _held(context, recorded.tool):
        return recorded
    spec = context.tools.get(write.tool)
    today = spec.undo if spec is not None else None
    if today is not None and today.tool in context.tools:
        return today
    return recorded


def _held(context: RunContext, tool: str) -> bool:
    """Whether this agent or another agent of the project has `tool`."""
    return tool in context.tools or tool in context.other_agents_tools


def step_row(
    ledger: Ledger,
    context: RunContext,
    run: RunRow,
    index: int,
    tool: str,
    args: dict[str, Any],
    key: str | None,
    status: str,
    allowed: str | None,
    sources: dict[str, str] | None = None,
) -> CallRow:
    """The row of the run's step `index` (0-based) as a call of `tool` with `args`;
    `sources`, where each argument came from when the caller has it (`step_sources` of
    the step), is kept as the call's bindings."""
    spec = context.tools.get(tool)
    if sources is None:
        sources = step_sources(PlannedStep.from_record(run.steps[index]))
    return _call_row(
        call_id=f"{run.run_id}:{index + 1}",
        run_id=run.run_id,
        session=run.session,
        agent=context.name,
        seq=ledger.next_call_seq(),
        step=index + 1,
        kind="write" if spec is not None and spec.writes else "read",
        tool=tool,
        args=as_recorded(args),
        key=key,
        status=status,
        allowed=allowed,
        result=None,
        error=None,
        undoes=None,
        undone_by=None,
        # Where each argument came from (provenance.py), kept with the call.
        bindings=sources,
        created=ledger.clock.now(),
        finished=None,
        tries=0,
        doubted=False,
        undo=declared_undo(spec) if spec is not None and spec.writes else None,
    )


def undo_id(write: CallRow) -> str:
    return f"{write.call_id}:undo"


def undo_row(
    ledger: Ledger,
    run: RunRow,
    write: CallRow,
    plan: UndoPlan,
    key: str | None,
    status: str,
    allowed: str | None,
) -> CallRow:
    return _call_row(
        call_id=undo_id(write),
        run_id=run.run_id,
        session=run.session,
        agent=write.agent,
        seq=ledger.next_call_seq(),
        step=write.step,
        kind="undo",
        tool=plan.tool,
        args=as_recorded(plan.args),
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
        tries=0,
        doubted=False,
        undo=None,
    )


def _call_row(**fields: Any) -> CallRow:
    """A new call's row of every field, given in the class's order: built as the record
    builds its rows (`record.schema.replace_row`), without the frozen `__init__`'s
    `object.__setattr__` for each of its 22 fields (a row for every step and undo sent;
    `CallRow` has no `__post_init__` to skip)."""
    row = object.__new__(CallRow)
    row.__dict__.update(fields)
    return row


def finish(ledger: Ledger, call: CallRow, status: str, **changes: Any) -> CallRow:
    return replace_row(call, status=status, finished=ledger.clock.now(), **changes)


def as_current(run: RunRow, call: CallRow, lease: int | None = None) -> CurrentCall:
    """The call about to be sent, as its tool reads it through `stalwart.current_call()`;
    `lease`, the fencing token of the lease it is sent under. Built, for every try sent,
    without the frozen `__init__`'s setattr per field (it has no `__post_init__`)."""
    current = object.__new__(CurrentCall)
    current.__dict__.update(
        key=call.key or "",
        session=run.session,
        run=run.run_id,
        step=call.step,
        tool=call.tool,
        kind=call.kind,
        try_number=call.tries,
        lease=lease,
    )
    return current


def typed_args(spec: ToolSpec, args: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments as the tool's hints declare them, whichever process reads them back.

    The record keeps JSON, where a Decimal is its text and a datetime its ISO text; the
    tool, and the key computed from the arguments, see the typed values again (see
    `ToolSpec.typed`). The arguments come in the order of the tool's parameters, as a
    confirmation shows them.
    """
    return spec.typed(args)
