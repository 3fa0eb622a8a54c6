"""The records arc keeps in its files: Plan and Task (pydantic), and the name rule."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from radian.arc.clock import Clock, format_utc, parse_utc
from radian.arc.errors import IllegalTransition, UsageError
from radian.arc.record_format import FIX_LEVELS as FIX_LEVELS
from radian.arc.record_format import FORMAT_VERSION as FORMAT_VERSION
from radian.arc.states import State, is_allowed
from radian.arc.texts import bad_fix_level, bad_name, illegal_transition

# A name is a path segment and part of a git branch (arc/<task>): letters, digits, ".", "_"
# and "-", starting with a letter or digit; no "..", no ".lock" or "." at the end.
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_name(kind: str, name: str) -> str:
    if (
        not NAME_PATTERN.fullmatch(name)
        or ".." in name
        or name.endswith(".lock")
        or name.endswith(".")
    ):
        raise UsageError(bad_name(kind, name))
    return name


Switch = Literal["on", "off"]

# FORMAT_VERSION and FIX_LEVELS (imported above, read from here by most of arc) are defined in
# radian.arc.record_format, where a reader that needs no typed record finds them.


def check_fix_level(level: str | None) -> str | None:
    """`level` when it is one of FIX_LEVELS (or None); a UsageError naming them otherwise."""
    if level is not None and level not in FIX_LEVELS:
        raise UsageError(bad_fix_level(level, FIX_LEVELS))
    return level


class Plan(BaseModel):
    model_config = ConfigDict(extra="allow", validate_assignment=True, allow_inf_nan=False)

    format_version: int = 0
    name: str
    auto: Switch = "on"
    confirmed: bool = False
    max_cost_usd: float | None = None
    merge_main: bool = True
    auto_rework: int = 1
    fix_level: str | None = None
    tasks: list[str] = Field(default_factory=list)
    # True while `plan load` writes the plan's tasks: such a plan is not there yet for any
    # command, and one left so by an interrupted load is undone (discard_unfinished_loads).
    loading: bool = False


class Task(BaseModel):
    # model_wait_streak is the chapter's own name, not a pydantic method: pydantic before
    # 2.10 warned about any field starting with "model_" unless told it is no namespace.
    model_config = ConfigDict(
        extra="allow", validate_assignment=True, protected_namespaces=(), allow_inf_nan=False
    )

    format_version: int = 0
    name: str
    plan: str
    state: State = State.READY
    retry_count: int = 0
    retry_at: str | None = None
    model_wait_streak: int = 0
    remote_wait_streak: int = 0  # infrastructure waits on an unreachable remote, in a row
    cost_usd: float = 0.0
    total_cost_usd: float = 0.0
    # Not saved: the plan's running total right after this task's latest cost was added to
    # it (Store.spend), which the budget check that follows reads (radian.arc.budget).
    _plan_spent_usd: float | None = PrivateAttr(default=None)
    max_attempts: int | None = None
    max_cost_usd: float | None = None
    fix_level: str | None = None
    rework_reason: str | None = None
    rework_count: int = 0
    auto_rework_used: int = 0
    conflict_rework_run: int = 0
    auto_reverify_count: int = 0
    base_sha: str | None = None
    head_sha: str | None = None
    branch: str
    session_id: str | None = None
    # The session total the worker last reported for session_id: the base of the next
    # resumed attempt's cost.
    session_cost_usd: float | None = None
    last_attempt_id: str | None = None
    merge_pending: bool = False
    attempts: list[str] = Field(default_factory=list)
    created_at: str
    updated_at: str

    @field_validator("retry_at", "created_at", "updated_at")
    @classmethod
    def _a_utc_time(cls, value: str | None) -> str | None:
        if value is not None:
            parse_utc(value)  # a ValueError names what is wrong
        return value


def transition(task: Task, to_state: State | str, clock: Clock, **fields: Any) -> Task:
    """Move `task` to `to_state` and set `fields` on it, or raise IllegalTransition (the
    table of allowed moves is radian.arc.states').

    The caller holds the task's lock and saves the task afterwards.
    """
    target = State(to_state)
    if not is_allowed(task.state, target):
        raise IllegalTransition(illegal_transition(task.name, str(task.state), str(target)))
    for name, value in fields.items():
        if name not in type(task).model_fields:
            raise TypeError(f"a task has no field {name!r}")
        setattr(task, name, value)
    task.state = target
    task.updated_at = format_utc(clock.now())
    return task


def branch_for(task: str) -> str:
    return f"arc/{task}"
