"""What one stage run needs and what it reports, shared by every stage module."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from radian.arc.config import ArcConfig

if TYPE_CHECKING:
    from radian.arc.store_protocol import HostLock


@dataclass(frozen=True)
class GateJob:
    """One gate run of one attempt: everything its stages read."""

    repo_root: Path
    task: str
    attempt_id: str
    head_sha: str
    config: ArcConfig
    fix_level: str
    brief_text: str
    task_dir: Path  # runs/<task>/
    stop: threading.Event = field(default_factory=threading.Event)
    # The lock held for the whole integration (Store.integration_lock: across the hosts of a
    # shared store); None: this clone's own (radian.arc.gate.conflict.integration_lock).
    integration_lock: HostLock | None = None
    # The task's gate lock, held by whoever runs this gate (Store.gate_lock): rechecked,
    # with the integration lock, before the push when it can be lost (FencedLock).
    gate_lock: HostLock | None = None
    branch: str = ""  # the task's branch (arc/<task>): fetched when its head is not here
    # The target's head when the task's first delivered attempt began: every integration of
    # the task is on the target's first-parent line after it (the look-up's bound).
    since_sha: str | None = None

    @property
    def target_branch(self) -> str:
        return self.config.target_branch

    @property
    def remote(self) -> str:
        return self.config.repository.remote


class RemoteUnreachable(Exception):  # noqa: N818 - a wait, not an error of the task
    """The gate's fetch of the target branch, or the integration's push, failed without an
    answer from the remote: it cannot be reached now. The gate run stops without a verdict
    for that stage; the task stays review.verifying and its gate runs again after a wait (no
    gate_error, no retry used)."""


@dataclass(frozen=True)
class StageResult:
    passed: bool
    reason: str | None
    detail: str
    # Extra verdict fields the stage sets (findings, mutation, base_sha, ...).
    fields: dict[str, Any] = field(default_factory=dict)


def passed(detail: str, **fields: Any) -> StageResult:
    return StageResult(passed=True, reason=None, detail=detail, fields=fields)


def failed(reason: str, detail: str, **fields: Any) -> StageResult:
    return StageResult(passed=False, reason=reason, detail=detail, fields=fields)
