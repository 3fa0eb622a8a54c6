"""The report at the end of `radian arc run`, and `radian arc report`: what was done, what
failed and why, cost per task and in total.

`run` reports on the tasks its own events named; `report` on every task (or one plan's).
A failed task's reason is its last attempt's (radian.arc.settle records it), else its class.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from radian.arc import texts
from radian.arc.records import Task
from radian.arc.states import State
from radian.arc.store_protocol import Store

FAILED = frozenset({State.IRRECOVERABLE, State.CANCELLED, State.EXHAUSTED})


@dataclass(frozen=True)
class TaskLine:
    task: str
    plan: str
    state: str
    cost_usd: float  # total_cost_usd: every attempt and review, reset-budget or not
    reason: str | None = None  # why it failed, or what it waits for


@dataclass(frozen=True)
class Report:
    integrated: list[TaskLine] = field(default_factory=list)
    failed: list[TaskLine] = field(default_factory=list)
    other: list[TaskLine] = field(default_factory=list)  # not finished, where they are

    @property
    def total_cost_usd(self) -> float:
        return round(sum(line.cost_usd for line in self.lines()), 10)

    def lines(self) -> list[TaskLine]:
        return [*self.integrated, *self.failed, *self.other]

    def document(self) -> dict[str, Any]:
        def rows(found: list[TaskLine]) -> list[dict[str, Any]]:
            return [vars(line) for line in found]

        return {"integrated": rows(self.integrated), "failed": rows(self.failed),
                "other": rows(self.other), "total_cost_usd": self.total_cost_usd}  # fmt: skip


def build_report(
    store: Store, tasks: Iterable[str] | None = None, plan: str | None = None
) -> Report:
    """The report over `tasks` (in the order given, once each), else `plan`'s, else every
    task's. A task whose file cannot be read is left out (`show` names it)."""
    if tasks is None:
        plans = [store.load_plan(plan)] if plan is not None else store.plans()
        tasks = [name for found in plans for name in found.tasks]
    report = Report()
    for name in dict.fromkeys(tasks):
        task = store.try_load_task(name)
        if task is None:
            continue
        if task.state is State.INTEGRATED:
            report.integrated.append(_line(task))
        elif task.state in FAILED:
            report.failed.append(_line(task, _failure(store, task)))
        else:
            report.other.append(_line(task, task.rework_reason))
    return report


def _line(task: Task, reason: str | None = None) -> TaskLine:
    return TaskLine(task.name, task.plan, str(task.state), task.total_cost_usd, reason)


def _failure(store: Store, task: Task) -> str | None:
    if task.state is State.CANCELLED:
        return texts.REPORT_CANCELLED
    if task.last_attempt_id is None:
        return None
    record = store.read_attempt_result(task.name, task.last_attempt_id)
    reason, failure_class = (record.reason, record.failure_class) if record else (None, None)
    if reason:
        return f"{failure_class}: {reason}" if failure_class is not None else reason
    return failure_class


def report_text(report: Report) -> list[str]:
    """The report as `run` and `report` print it."""
    if not report.lines():
        return [texts.REPORT_NOTHING]
    lines = [texts.report_heading(len(report.integrated), len(report.failed),
                                  len(report.other), _usd(report.total_cost_usd))]  # fmt: skip
    for line in report.integrated:
        lines.append(f"  integrated  {line.task}  {_usd(line.cost_usd)}")
    for line in report.failed:
        why = f"  {line.reason}" if line.reason else ""
        lines.append(f"  {line.state}  {line.task}  {_usd(line.cost_usd)}{why}")
    for line in report.other:
        why = f"  {line.reason}" if line.reason else ""
        lines.append(f"  {line.state}  {line.task}  {_usd(line.cost_usd)}{why}")
    return lines


def _usd(value: float) -> str:
    return f"${value:.2f}"
