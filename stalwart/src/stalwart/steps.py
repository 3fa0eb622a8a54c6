"""A planned step: one call a run is to make, the one type every step is read as.

The selector reads a turn's clauses into planned steps; the model loop makes one of each
tool call the model asks for, and a guarded run one of each call its framework makes.
The engine reads a run's steps only as this type.

The record keeps a run's steps as JSON (`RunRow.steps`, a list of objects): `to_record`
gives a step's form there, the one it has always had, and `from_record` reads that form
back, whenever it was written. The record's encoder (`stalwart.codec`) renders it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PlannedStep:
    """One call a run is to make: its tool and arguments, and where it came from.

    `clause` is the clause of the turn the selector read it from (None for a model's or a
    framework's step). `model_call` is the id of the model's ask that chose it, and
    `tool_call_id` the model's (or the framework's) id of the call, by which its result
    is given back (or the step found again). `sources` says where each argument came from
    (`policy/provenance.py`), recorded for a model's or a framework's step; None for the
    selector's, whose arguments all come from the turn. `approved` is the id of the
    question a person approved a guarded run's step with (its framework sends it).
    """

    tool: str  # the ToolSpec name
    args: dict[str, Any]  # bound arguments, converted to the parameter's type hint
    clause: str | None = None  # the clause text as written in the turn
    model_call: str | None = None
    tool_call_id: str | None = None
    sources: dict[str, str] | None = None
    approved: str | None = None

    def to_record(self) -> dict[str, Any]:
        """The step as the record keeps it: tool, args and clause, and each of the others
        only when it is set (a selector's step has none of them)."""
        recorded: dict[str, Any] = {"tool": self.tool, "args": self.args, "clause": self.clause}
        if self.model_call is not None:
            recorded["model_call"] = self.model_call
        if self.tool_call_id is not None:
            recorded["tool_call_id"] = self.tool_call_id
        if self.sources is not None:
            recorded["sources"] = self.sources
        if self.approved is not None:
            recorded["approved"] = self.approved
        return recorded

    @classmethod
    def from_record(cls, recorded: Mapping[str, Any]) -> PlannedStep:
        """The step the record's form `recorded` holds (its values as recorded).

        Built as the record's rows are (`record.schema.from_values`): the engine reads a
        run's steps back on every call, and the frozen `__init__` sets each of its fields
        through `object.__setattr__`; there is no `__post_init__` to skip."""
        step = object.__new__(cls)
        step.__dict__.update(
            tool=recorded["tool"],
            args=recorded["args"],
            clause=recorded.get("clause"),
            model_call=recorded.get("model_call"),
            tool_call_id=recorded.get("tool_call_id"),
            sources=recorded.get("sources"),
            approved=recorded.get("approved"),
        )
        return step


def recorded_steps(steps: Sequence[PlannedStep]) -> list[dict[str, Any]]:
    """Steps as the record keeps them (`RunRow.steps`)."""
    return [step.to_record() for step in steps]


def planned_steps(recorded: Sequence[Mapping[str, Any]]) -> list[PlannedStep]:
    """A run's recorded steps (`RunRow.steps`), read back."""
    return [PlannedStep.from_record(step) for step in recorded]


def step_calls(recorded: Sequence[Mapping[str, Any]]) -> list[tuple[str, Mapping[str, Any]]]:
    """Each recorded step's tool and arguments (as recorded), the rest of it not read:
    what naming a run's calls and weighing its later steps need, on every call."""
    return [(step["tool"], step["args"]) for step in recorded]


def step_tool(recorded: Mapping[str, Any]) -> str:
    """A recorded step's tool, the rest of it not read."""
    tool: str = recorded["tool"]
    return tool
