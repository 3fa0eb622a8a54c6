"""Review findings: levels, the reviewer's verdict JSON, and what fails.

A reviewer prints one JSON object (the last JSON object it prints counts):

    {"findings": [{"level", "title", "path", "line", "pre_existing"}], "cost_micros": 1200}

or, when its model was unavailable, {"model_error": {"kind", "message"}, "cost_micros": ...}.
An earlier build's reviewer printed {"blocking": [...], "suggestions": [...]}: every blocking
item fails whatever its level, and suggestions never do.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from radian.arc.records import FIX_LEVELS

# Ordered from least to most severe: a finding fails at or above the effective fix_level.
LEVELS: tuple[str, ...] = FIX_LEVELS
DEFAULT_FIX_LEVEL = "major"


class Finding(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    level: str | None = None  # None only for an earlier build's blocking item without one
    title: str = ""
    path: str | None = None
    line: int | None = None
    pre_existing: bool = False
    # Set only for an earlier build's items: True for a blocking item (fails whatever its
    # level and the fix_level), False for a suggestion (never fails).
    blocking: bool | None = None

    @field_validator("level")
    @classmethod
    def _known_level(cls, level: str | None) -> str | None:
        if level is not None and level not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
        return level

    def where(self) -> str:
        if not self.path:
            return ""
        return f"{self.path}:{self.line}" if self.line is not None else self.path


class ReviewerModelError(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    kind: str = "unavailable"
    message: str | None = None
    retry_after_secs: float | None = None


class ReviewOutput(BaseModel):
    """The reviewer's verdict JSON, read."""

    # model_error is the reviewer's field; see records.Task for why no protected namespace.
    model_config = ConfigDict(extra="ignore", frozen=True, protected_namespaces=())

    findings: tuple[Finding, ...] = ()
    cost_micros: int | None = None
    model_error: ReviewerModelError | None = None


class ReviewOutputError(ValueError):
    """The reviewer printed no verdict JSON arc can read."""


def level_rank(level: str) -> int:
    return LEVELS.index(level)


def effective_fix_level(
    task_fix_level: str | None, plan_fix_level: str | None, config_fix_level: str | None
) -> str:
    """The task's fix_level, else the plan's, else the config's ([gate] fix_level)."""
    for level in (task_fix_level, plan_fix_level, config_fix_level):
        if level:
            return level
    return DEFAULT_FIX_LEVEL


def is_failing(finding: Finding, fix_level: str) -> bool:
    if finding.blocking is not None:
        return finding.blocking
    if finding.pre_existing or finding.level is None:
        return False
    return level_rank(finding.level) >= level_rank(fix_level)


def failing_findings(findings: tuple[Finding, ...], fix_level: str) -> list[Finding]:
    return [finding for finding in findings if is_failing(finding, fix_level)]


def parse_review_output(text: str) -> ReviewOutput:
    """Read the last JSON object the reviewer printed; raise ReviewOutputError if none fits."""
    data = _last_json_object(text)
    if data is None:
        raise ReviewOutputError("the reviewer printed no JSON object")
    return review_output_from_dict(data)


def review_output_from_dict(data: dict[str, Any]) -> ReviewOutput:
    if "blocking" in data and "findings" not in data:
        data = _from_blocking_form(data)
    try:
        return ReviewOutput.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in item['loc'])}: {item['msg']}"
            for item in error.errors()
        )
        raise ReviewOutputError(f"the reviewer's verdict is not valid: {problems}") from None


def _from_blocking_form(data: dict[str, Any]) -> dict[str, Any]:
    """An earlier build's {"blocking", "suggestions"} as findings marked blocking or not."""
    blocking = data.get("blocking") or []
    suggestions = data.get("suggestions") or []
    if not isinstance(blocking, list) or not isinstance(suggestions, list):
        raise ReviewOutputError("the reviewer's blocking and suggestions must be lists")
    findings = [{**_as_item(item), "blocking": True} for item in blocking]
    findings += [{**_as_item(item), "blocking": False} for item in suggestions]
    converted = {k: v for k, v in data.items() if k not in ("blocking", "suggestions")}
    converted["findings"] = findings
    return converted


def _as_item(item: Any) -> dict[str, Any]:
    if isinstance(item, str):
        return {"title": item}
    if isinstance(item, dict):
        return item
    raise ReviewOutputError(f"a blocking or suggestion item must be an object, got {item!r}")


def _last_json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            whole = json.loads(stripped)
        except json.JSONDecodeError:
            whole = None
        if isinstance(whole, dict):
            return whole
    for line in reversed(text.splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None
