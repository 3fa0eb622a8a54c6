"""What the wrapper and run_attempt exchange: the attempt dir's files, the spec, the classes.

run_attempt must not import the wrapper module: `python -m radian.arc.worker.wrapper` runs
it as __main__, and a second copy imported through the package would be a different module.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STALL = "stall"
WALL_TIME = "wall_time"
LOCK_HELD = "lock_held"
CANCELLED = "cancelled"
# Set by the attempt's reader when arc's own Ctrl-C or SIGTERM (of `run` or `start`) stopped
# the worker: not the lead's cancel, and not a failure of the task.
INTERRUPTED = "interrupted"
# Set by the attempt's reader when arc stopped the worker for another reason (an earlier
# build's recovery of an attempt whose owner died, or a stop whose reason is unknown): a kill.
STOPPED_BY_ARC = "stopped_by_arc"

# Why stop_attempt stopped an attempt (cancel_requested's "reason"). Only the lead's
# `radian arc cancel` is a cancel; a file written by an earlier build has no reason and was
# always one.
STOP_CANCEL = "cancel"
STOP_INTERRUPT = "interrupt"  # arc's Ctrl-C or SIGTERM: the attempt is interrupted
# An earlier build's recovery, which stopped a live orphan (this one adopts it): read as a kill.
STOP_RECOVERY = "recovery"


@dataclass(frozen=True)
class AttemptFiles:
    """`<repo>/.radian/arc/runs/<task>/attempts/<attempt id>/` and what the worker writes there."""

    dir: Path

    @property
    def brief(self) -> Path:  # the brief, as the worker reads it (RADIAN_ARC_BRIEF_FILE)
        return self.dir / "brief.md"

    @property
    def spec(self) -> Path:  # what the wrapper runs, written by run_attempt
        return self.dir / "wrapper_spec.json"

    @property
    def wrapper_pid(self) -> Path:  # present while the wrapper runs
        return self.dir / "wrapper.pid"

    @property
    def worker_pid(self) -> Path:  # the worker's pid, which is also its process group
        return self.dir / "worker.pid"

    @property
    def status(self) -> Path:  # the wrapper's last word, written atomically before it exits
        return self.dir / "wrapper_status.json"

    @property
    def log(self) -> Path:  # stdout and stderr as they came, and the wrapper's own lines
        return self.dir / "worker.log"

    @property
    def stdout(self) -> Path:  # stdout alone: where the Result is read from
        return self.dir / "worker.stdout"

    @property
    def stderr(self) -> Path:  # stderr alone: why a worker that printed no Result ended
        return self.dir / "worker.stderr"

    @property
    def cancel_requested(self) -> Path:  # written by stop_attempt before it signals
        return self.dir / "cancel_requested"


def read_json_or_none(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class WrapperSpec:
    """What run_attempt asks the wrapper to run (wrapper_spec.json)."""

    repo_root: str
    task: str
    attempt_id: str
    branch: str
    remote: str
    target_branch: str
    start_mid_merge: bool
    exec_args: list[str]
    session_id: str | None
    stall_secs: float
    wall_time_secs: float
    term_grace_secs: float
    resume_args: list[str] = field(default_factory=lambda: ["--resume", "{session_id}"])
    model: str | None = None
    prices: dict[str, dict[str, float | None]] = field(default_factory=dict)
    # The claim to take on the remote before the worker starts, when the run could not
    # (radian.arc.hosts); None when the run holds it already, or claims are off.
    claim: dict[str, Any] | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WrapperSpec:
        return cls(**data)
