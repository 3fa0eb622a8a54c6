"""The verdict record: one JSON file per stage run, under runs/<task>/verdicts/.

File names are `<seq>-<stage>.json` (seq counts up over the task's life, so the last verdict
is the highest) with the stage's log beside it as `<seq>-<stage>.log`. See docs/gate.md
("The verdict file") for every field.

An earlier build wrote a review verdict with reason `review_blocking`, a `blocking` list and
a `suggestions` list; `read_verdict` turns it into findings (blocking items fail whatever
their level, suggestions never do). This build never writes `review_blocking`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from radian.arc.atomic import read_json, write_json_atomic
from radian.arc.gate.findings import Finding

VERDICTS_DIR = "verdicts"

# Reasons, one place. A review failure from an earlier build reads as REVIEW_BLOCKING.
COMMAND_FAILED = "command_failed"
TIMEOUT = "timeout"
MUTATION_SCORE = "mutation_score"
REVIEW_FINDINGS = "review_findings"
REVIEW_OUTPUT = "review_output"
REVIEW_TIMEOUT = "review_timeout"
REVIEW_UNAVAILABLE = "review_unavailable"
REVIEW_BLOCKING = "review_blocking"
CONFLICT = "conflict"
TARGET_MOVED = "target_moved"
GATE_ERROR = "gate_error"

REVIEW_FAILING_REASONS = frozenset({REVIEW_FINDINGS, REVIEW_BLOCKING})
# The failures a moved target branch may explain: an automatic reverify looks only at these.
TREE_FAILURE_REASONS = frozenset({COMMAND_FAILED, TIMEOUT})
TREE_FAILURE_STAGES = frozenset({"commands", "integration"})

_FILE_PATTERN = re.compile(r"^(\d+)-([a-z]+)\.json$")


class MutationCounts(BaseModel):
    model_config = ConfigDict(extra="ignore")

    killed: int
    survived: int
    checked: int  # mutants mutmut ran the tests against (not skipped, not left unchecked)
    total: int  # every mutant mutmut made in the changed files, whatever its status
    score: float | None  # killed / (killed + survived); None when no mutant was checked
    min_killed: float
    files: list[str] = Field(default_factory=list)


class Verdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    task: str
    attempt_id: str
    stage: str
    passed: bool
    reason: str | None = None
    detail: str | None = None  # one line a person reads: what failed, or what passed
    main_sha: str | None = None  # the target branch's sha the stage ran against
    head_sha: str | None = None
    base_sha: str | None = None  # integration: the target sha the merge was made on
    integrated_sha: str | None = None  # integration: the merge commit pushed
    log: str | None = None  # the log file, relative to runs/<task>/
    started_at: str | None = None
    ended_at: str | None = None
    conflicted_paths: list[str] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    failing_findings: list[Finding] = Field(default_factory=list)
    fix_level: str | None = None
    review_cost_micros: int = 0  # the sum over every reviewer session the stage ran
    review_sessions: list[int | None] = Field(default_factory=list)  # each session's cost
    mutation: MutationCounts | None = None
    command: str | None = None  # commands and integration: the command that failed
    seq: int = 0  # from the file name; not stored

    @property
    def target_sha(self) -> str | None:
        """The target branch sha this verdict ran against (integration: its base_sha)."""
        if self.stage == "integration":
            return self.base_sha or self.main_sha
        return self.main_sha


def verdicts_dir(task_dir: Path) -> Path:
    return task_dir / VERDICTS_DIR


def next_seq(task_dir: Path) -> int:
    return max((seq for seq, _ in _verdict_files(task_dir)), default=0) + 1


def log_path_for(task_dir: Path, seq: int, stage: str) -> Path:
    return verdicts_dir(task_dir) / f"{seq:04d}-{stage}.log"


def verdict_file_name(verdict: Verdict) -> str:
    """The verdict's file, relative to runs/<task>/."""
    return f"{VERDICTS_DIR}/{verdict.seq:04d}-{verdict.stage}.json"


def write_verdict(task_dir: Path, verdict: Verdict) -> Path:
    path = task_dir / verdict_file_name(verdict)
    write_json_atomic(path, verdict.model_dump(mode="json", exclude={"seq"}, exclude_none=False))
    return path


def read_verdict(path: Path) -> Verdict:
    """A verdict file, this build's or an earlier one's (`review_blocking`)."""
    data: dict[str, Any] = read_json(path)
    match = _FILE_PATTERN.match(path.name)
    if match:
        data["seq"] = int(match.group(1))
    if "blocking" in data or data.get("reason") == REVIEW_BLOCKING:
        data = _from_blocking_verdict(data)
    return Verdict.model_validate(data)


def _from_blocking_verdict(data: dict[str, Any]) -> dict[str, Any]:
    blocking = [_item(item, blocking=True) for item in data.get("blocking") or []]
    suggestions = [_item(item, blocking=False) for item in data.get("suggestions") or []]
    converted = {k: v for k, v in data.items() if k not in ("blocking", "suggestions")}
    converted.setdefault("stage", "review")
    converted["findings"] = blocking + suggestions
    converted["failing_findings"] = blocking
    if "passed" not in converted:
        converted["passed"] = not blocking and converted.get("reason") in (None, "")
    converted.setdefault("task", "")
    converted.setdefault("attempt_id", "")
    return converted


def _item(item: Any, *, blocking: bool) -> dict[str, Any]:
    fields = {"title": item} if isinstance(item, str) else dict(item)
    fields["blocking"] = blocking
    return fields


def _verdict_files(task_dir: Path) -> list[tuple[int, Path]]:
    folder = verdicts_dir(task_dir)
    if not folder.is_dir():
        return []
    found = []
    for path in folder.iterdir():
        match = _FILE_PATTERN.match(path.name)
        if match:
            found.append((int(match.group(1)), path))
    return sorted(found)


def all_verdicts(task_dir: Path) -> list[Verdict]:
    return [read_verdict(path) for _, path in _verdict_files(task_dir)]


def last_verdict(task_dir: Path) -> Verdict | None:
    files = _verdict_files(task_dir)
    return read_verdict(files[-1][1]) if files else None


def attempt_verdicts(task_dir: Path, attempt_id: str) -> list[Verdict]:
    return [verdict for verdict in all_verdicts(task_dir) if verdict.attempt_id == attempt_id]


def verdict_summary(task_dir: Path) -> dict[str, Any] | None:
    """The last verdict as `radian arc show` prints it (None before any gate ran)."""
    verdict = last_verdict(task_dir)
    if verdict is None:
        return None
    return {
        "stage": verdict.stage,
        "passed": verdict.passed,
        "reason": verdict.reason,
        "detail": verdict.detail,
        "attempt_id": verdict.attempt_id,
        "main_sha": verdict.main_sha,
        "base_sha": verdict.base_sha,
        "head_sha": verdict.head_sha,
        "file": verdict_file_name(verdict),
        "log": verdict.log,
    }


def verdict_summary_line(summary: dict[str, Any]) -> str:
    outcome = "passed" if summary["passed"] else summary["reason"]
    return (
        f"last_verdict: {summary['stage']} {outcome} (attempt {summary['attempt_id']}, "
        f"main {(summary['main_sha'] or '?')[:8]}): {summary['detail'] or '-'}"
    )
