"""A plan file (`radian arc plan load FILE`): one TOML file holding a plan and its tasks.

Read and checked whole here, before `commands.load_plan_file` writes anything.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from radian.arc import texts
from radian.arc.config import validate_model
from radian.arc.errors import ConfigError, UsageError
from radian.arc.record_format import FixLevel
from radian.arc.records import Switch


class TaskEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    brief: str | None = None  # inline text
    brief_file: str | None = None  # a path relative to the plan file
    max_attempts: int | None = Field(default=None, ge=0)
    max_cost_usd: float | None = Field(default=None, ge=0)
    fix_level: FixLevel | None = None

    @model_validator(mode="after")
    def _one_brief(self) -> TaskEntry:
        if (self.brief is None) == (self.brief_file is None):
            raise ValueError("exactly one of brief (inline text) or brief_file (a path)")
        return self


class PlanEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    auto: Switch = "on"
    max_cost_usd: float | None = Field(default=None, ge=0)
    merge_main: bool = True
    auto_rework: int = Field(default=1, ge=0)
    fix_level: FixLevel | None = None


class PlanFile(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    plan: PlanEntry
    tasks: list[TaskEntry] = Field(default_factory=list, alias="task")


def read_plan_file(path: Path) -> PlanFile:
    """The plan file at `path`, parsed and validated; a UsageError or ConfigError otherwise."""
    label = str(path)
    try:
        data: dict[str, Any] = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise ConfigError(texts.not_utf8(label, error)) from None
    except OSError as error:
        raise UsageError(texts.unreadable_file(label, error.strerror)) from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(texts.not_valid_toml(label, error)) from None
    return validate_model(PlanFile, data, label)


def brief_text(plan_file: Path, index: int, item: TaskEntry) -> str:
    """The task's brief: inline, or read from brief_file (relative to the plan file)."""
    if item.brief is not None:
        return item.brief
    return _read_brief(plan_file, index, item)


def _read_brief(plan_file: Path, index: int, item: TaskEntry) -> str:
    brief_path = Path(plan_file).parent / str(item.brief_file)
    try:
        return brief_path.read_text(encoding="utf-8")
    except OSError:
        raise ConfigError(
            texts.unreadable_brief_file(
                str(plan_file), index, str(item.brief_file), str(brief_path)
            )
        ) from None
