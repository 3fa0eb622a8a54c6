"""What each `radian arc` command that changes files returns: a typed result.

A result holds what the command did (the plan, the task, the state it is in now); `lines()`
is the text a person reads (radian.arc.texts, exact), `document()` what `--json` prints.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from radian.arc import texts
from radian.arc.events import Event, texts_of


@dataclass(frozen=True)
class CommandResult:
    kind: ClassVar[str] = "result"

    def lines(self) -> list[str]:
        raise NotImplementedError

    def document(self) -> dict[str, Any]:
        """The result's fields, with its kind (keys stable; --json prints it as "result")."""
        return {"kind": self.kind, **asdict(self)}


@dataclass(frozen=True)
class ConfigInit(CommandResult):
    kind: ClassVar[str] = "init"
    path: str
    written: bool  # False: the file existed and was left as it is

    def lines(self) -> list[str]:
        return [texts.config_written(self.path) if self.written else texts.config_kept(self.path)]


@dataclass(frozen=True)
class PlanAdded(CommandResult):
    kind: ClassVar[str] = "plan_added"
    plan: str

    def lines(self) -> list[str]:
        return [texts.plan_added(self.plan)]


@dataclass(frozen=True)
class PlanLoaded(CommandResult):
    kind: ClassVar[str] = "plan_loaded"
    plan: str
    tasks: int

    def lines(self) -> list[str]:
        return [texts.plan_loaded(self.plan, self.tasks)]


@dataclass(frozen=True)
class PlanConfirmed(CommandResult):
    kind: ClassVar[str] = "plan_confirmed"
    plan: str

    def lines(self) -> list[str]:
        return [texts.plan_confirmed(self.plan)]


@dataclass(frozen=True)
class PlanAuto(CommandResult):
    kind: ClassVar[str] = "plan_auto"
    plan: str
    auto: str

    def lines(self) -> list[str]:
        return [texts.plan_auto(self.plan, self.auto)]


@dataclass(frozen=True)
class TaskAdded(CommandResult):
    kind: ClassVar[str] = "task_added"
    task: str
    plan: str
    state: str

    def lines(self) -> list[str]:
        return [texts.task_added(self.task, self.plan)]


@dataclass(frozen=True)
class TaskCancelled(CommandResult):
    kind: ClassVar[str] = "task_cancelled"
    task: str
    from_state: str
    state: str

    def lines(self) -> list[str]:
        return [texts.cancelled(self.task, self.from_state)]


@dataclass(frozen=True)
class TaskReworked(CommandResult):
    kind: ClassVar[str] = "task_reworked"
    task: str
    rework: int  # the n of the "## Rework <n>" written
    state: str

    def lines(self) -> list[str]:
        return [texts.reworked(self.task, self.rework)]


@dataclass(frozen=True)
class BudgetReset(CommandResult):
    kind: ClassVar[str] = "budget_reset"
    task: str
    state: str

    def lines(self) -> list[str]:
        return [texts.budget_reset(self.task)]


@dataclass(frozen=True)
class Reverified(CommandResult):
    """`radian arc reverify`: the gate's run, as the loop's events."""

    kind: ClassVar[str] = "reverified"
    task: str
    events: tuple[Event, ...]

    def lines(self) -> list[str]:
        return texts_of(self.events)

    def document(self) -> dict[str, Any]:
        return {"kind": self.kind, "task": self.task,
                "events": [event.document() for event in self.events]}  # fmt: skip


@dataclass(frozen=True)
class CleanedUp(CommandResult):
    """`radian arc gc`: what was removed, one line each (none: "nothing to clean up")."""

    kind: ClassVar[str] = "cleaned_up"
    removed: tuple[str, ...]

    def lines(self) -> list[str]:
        return list(self.removed) or [texts.nothing_to_clean()]


@dataclass(frozen=True)
class RunStopped(CommandResult):
    """`radian arc stop`: the run told to stop, and whether it had stopped within the wait."""

    kind: ClassVar[str] = "run_stopped"
    pid: int
    stopped: bool
    waited_secs: float

    def lines(self) -> list[str]:
        if self.stopped:
            return [texts.run_stopped(self.pid)]
        return [texts.run_told_to_stop(self.pid, self.waited_secs)]


@dataclass(frozen=True)
class StoreMigrated(CommandResult):
    kind: ClassVar[str] = "store_migrated"
    plans: int
    tasks: int
    attempts: int

    def lines(self) -> list[str]:
        return [texts.store_migrated(self.plans, self.tasks, self.attempts)]
