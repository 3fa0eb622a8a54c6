"""The records arc keeps in its files: Plan and Task (pydantic), and the name rule."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from radian.arc.errors import UsageError
from radian.arc.states import State
from radian.arc.texts import bad_name

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


class Plan(BaseModel):
    model_config = ConfigDict(extra="allow", validate_assignment=True)

    name: str
    auto: Switch = "on"
    confirmed: bool = False
    max_cost_usd: float | None = None
    merge_main: bool = True
    auto_rework: int = 1
    fix_level: str | None = None
    tasks: list[str] = Field(default_factory=list)


class Task(BaseModel):
    # model_wait_streak is the chapter's own name, not a pydantic method: pydantic before
    # 2.10 warned about any field starting with "model_" unless told it is no namespace.
    model_config = ConfigDict(extra="allow", validate_assignment=True, protected_namespaces=())

    name: str
    plan: str
    state: State = State.READY
    retry_count: int = 0
    retry_at: str | None = None
    model_wait_streak: int = 0
    cost_usd: float = 0.0
    total_cost_usd: float = 0.0
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


def branch_for(task: str) -> str:
    return f"arc/{task}"
