"""Which call a reply means: each call shown one way (the tool's order, its typed values),
and named apart from the run's other calls of the same tool (`texts.call_labels`)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from . import texts
from .record.schema import CallRow, RunRow
from .steps import step_calls, step_tool
from .tools import ToolSpec

_K = TypeVar("_K", bound=Hashable)


def as_shown(tools: Mapping[str, ToolSpec], tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """A call's arguments as a person reads them wherever it is shown: typed back from the
    record and in the order of the tool's parameters (`ToolSpec.typed`); as recorded for a
    tool this catalogue lacks."""
    spec = tools.get(tool)
    return spec.typed(args) if spec is not None else dict(args)


def shown_call(tools: Mapping[str, ToolSpec], tool: str, args: Mapping[str, Any]) -> str:
    """The one rendering of a call: `pay_bill(bill=7, amount=30.00)`."""
    return texts.call_text(tool, as_shown(tools, tool, args))


def shown_args(
    tools: Mapping[str, ToolSpec], tool: str, args: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """A call's arguments as `shown_call` shows them: (name, value), for a table."""
    return texts.shown_args(as_shown(tools, tool, args))


def step_labels(tools: Mapping[str, ToolSpec], run: RunRow) -> dict[int, str]:
    """Step number -> how a reply names that step's call: its tool alone, or, where the run
    has more than one call of the tool, with the arguments that tell them apart."""
    calls = step_calls(run.steps)
    return texts.call_labels(
        _shown_where_named(
            [(number, tool, args, number) for number, (tool, args) in enumerate(calls, 1)], tools
        )
    )


def undo_labels(tools: Mapping[str, ToolSpec], calls: Iterable[CallRow]) -> dict[str, str]:
    """Undo call id -> how a reply names that undo, apart from the run's other undos."""
    undos = [
        (call.call_id, call.tool, call.args, call.step) for call in calls if call.kind == "undo"
    ]
    return texts.call_labels(_shown_where_named(undos, tools))


def _shown_where_named(
    calls: Sequence[tuple[_K, str, Mapping[str, Any], int]], tools: Mapping[str, ToolSpec]
) -> list[tuple[_K, str, Mapping[str, Any], int]]:
    """The calls with the arguments of each tool called more than once `as_shown`: those
    are the ones `texts.call_labels` names by their arguments (a tool called once is named
    alone, its arguments not read), so the others are not typed for nothing."""
    named = [tool for _, tool, _, _ in calls]
    # A run's few calls counted by list.count, in C (a Counter's update asks the Mapping ABC).
    return [
        (key, tool, as_shown(tools, tool, args) if named.count(tool) > 1 else args, step)
        for key, tool, args, step in calls
    ]


def step_label(run: RunRow, labels: Mapping[int, str], step: int | None, tool: str) -> str:
    """The label of the run's step `step` when it is a call of `tool`; else `tool` alone."""
    if step is None or not 0 < step <= len(run.steps):
        return tool
    if step_tool(run.steps[step - 1]) != tool:
        return tool
    return labels.get(step, tool)
