"""`radian arc status`: the whole fleet in a few lines: counts by state, cost and budget left
per plan, the rate of the last hour, a time to finish, and the tasks that wait on a person.

It reads every task once, as `show` does, but keeps only the few fields a summary needs and
never builds a task's full record: a loaded plan's tasks come from its loaded file in one
read, the others from their own task.json (radian.arc.store's layout). A task file that is
not JSON or names no known state is counted as damaged, never stops the summary. It reads
through any `Readable`: a store, or the files read plainly (radian.arc.store_plain), which
`radian arc status` reads without loading the typed records.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

from radian.arc import texts
from radian.arc.clock import Clock, format_utc, parse_utc
from radian.arc.states import State

DAMAGED = "damaged"
FINISHED = frozenset({State.INTEGRATED, State.IRRECOVERABLE, State.CANCELLED, State.EXHAUSTED})
# The states in which a task waits for a person: what they must do is in `reason`.
WAITING_ON_A_PERSON = frozenset({State.REWORK_PENDING, State.PAUSED_BUDGET})
RATE_WINDOW = timedelta(hours=1)


class PlanRead(Protocol):
    """What status reads of a plan (records.Plan, record_format.PlainPlan)."""

    @property
    def name(self) -> str: ...
    @property
    def auto(self) -> str: ...
    @property
    def confirmed(self) -> bool: ...
    @property
    def max_cost_usd(self) -> float | None: ...


PlanT = TypeVar("PlanT", bound=PlanRead)


class Readable(Protocol[PlanT]):
    """What status reads: the plans, each plan's tasks as plain records, and a plan by name
    (for the error that says why it is not there). A Store is one."""

    def plans(self) -> Sequence[PlanT]: ...
    def load_plan(self, plan: str) -> object: ...
    def task_records(self, plan: PlanT) -> list[tuple[str, dict[str, Any] | None]]: ...


@dataclass(frozen=True)
class Waiting:
    """A task that waits on a person, and why."""

    task: str
    plan: str
    state: str
    reason: str


@dataclass(frozen=True)
class PlanStatus:
    name: str
    confirmed: bool
    auto: str
    counts: dict[str, int]  # state (or "damaged") -> tasks
    cost_usd: float  # cost_usd over the plan's tasks: what its budget counts
    total_cost_usd: float  # every attempt and review, reset-budget or not
    max_cost_usd: float | None
    budget_left_usd: float | None  # None: the plan has no budget

    @property
    def tasks(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class FleetStatus:
    at: str  # when it was read (UTC)
    plans: list[PlanStatus]
    counts: dict[str, int]  # over the plans shown
    done_last_hour: int  # tasks integrated in the hour before `at`
    remaining: int  # tasks not finished (not done.*, not failed.*)
    finish_in_secs: float | None  # remaining at the last hour's rate; None without a rate
    waiting: list[Waiting] = field(default_factory=list)

    def document(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "counts": self.counts,
            "done_last_hour": self.done_last_hour,
            "tasks_per_hour": self.done_last_hour,
            "remaining": self.remaining,
            "finish_in_secs": self.finish_in_secs,
            "plans": [
                {
                    "name": plan.name,
                    "confirmed": plan.confirmed,
                    "auto": plan.auto,
                    "tasks": plan.tasks,
                    "counts": plan.counts,
                    "cost_usd": plan.cost_usd,
                    "total_cost_usd": plan.total_cost_usd,
                    "max_cost_usd": plan.max_cost_usd,
                    "budget_left_usd": plan.budget_left_usd,
                }
                for plan in self.plans
            ],
            "waiting": [vars(waiting) for waiting in self.waiting],
        }


@dataclass
class _Tally:
    counts: Counter[str] = field(default_factory=Counter)
    cost_usd: float = 0.0
    total_cost_usd: float = 0.0


def fleet_status(
    store: Readable[PlanT], clock: Clock, *, plan: str | None = None, state: str | None = None
) -> FleetStatus:
    """The fleet's status now; only `plan`'s tasks, only tasks in `state`, when given (a plan's
    cost and budget always count every task of it)."""
    now = clock.now()
    since = now - RATE_WINDOW
    plans = [found for found in store.plans() if plan is None or found.name == plan]
    if plan is not None and not plans:
        store.load_plan(plan)  # the NotFoundError or DamagedFile that says why
    totals: Counter[str] = Counter()
    shown: list[PlanStatus] = []
    waiting: list[Waiting] = []
    done_last_hour = remaining = 0
    for found in plans:
        tally = _Tally()
        for name, record in store.task_records(found):
            task_state = record.get("state") if record is not None else None
            if not isinstance(task_state, str) or task_state not in _STATE_NAMES:
                tally.counts[DAMAGED] += 1
                continue
            assert record is not None
            tally.cost_usd += _money(record.get("cost_usd"))
            tally.total_cost_usd += _money(record.get("total_cost_usd"))
            if state is not None and task_state != state:
                continue
            tally.counts[task_state] += 1
            if task_state in FINISHED:  # a StrEnum's member is its text, hashed alike
                if task_state == State.INTEGRATED and _after(record.get("updated_at"), since):
                    done_last_hour += 1
            else:
                remaining += 1
            if task_state in WAITING_ON_A_PERSON:
                waiting.append(Waiting(name, found.name, task_state, _why(record)))
        totals.update(tally.counts)
        shown.append(_plan_status(found, tally))
    finish_in = remaining / done_last_hour * RATE_WINDOW.total_seconds() if done_last_hour else None
    return FleetStatus(format_utc(now), shown, dict(totals), done_last_hour, remaining,
                       None if finish_in is None else round(finish_in), waiting)  # fmt: skip


_STATE_NAMES = frozenset(str(state) for state in State)


def _plan_status(plan: PlanRead, tally: _Tally) -> PlanStatus:
    cost = round(tally.cost_usd, 10)
    left = None if plan.max_cost_usd is None else round(max(plan.max_cost_usd - cost, 0.0), 10)
    return PlanStatus(plan.name, plan.confirmed, plan.auto, dict(tally.counts), cost,
                      round(tally.total_cost_usd, 10), plan.max_cost_usd, left)  # fmt: skip


def _money(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _after(text: object, since: datetime) -> bool:
    if not isinstance(text, str):
        return False
    try:
        return parse_utc(text) > since
    except ValueError:
        return False


def _why(record: dict[str, Any]) -> str:
    if record.get("state") == State.PAUSED_BUDGET:
        return texts.STATUS_PAUSED_BUDGET
    reason = record.get("rework_reason")
    return reason if isinstance(reason, str) and reason else texts.STATUS_REWORK_PENDING


def status_text(status: FleetStatus) -> list[str]:
    """`radian arc status` as a person reads it."""
    if not status.plans:
        return [texts.STATUS_NO_PLANS]
    lines = []
    for plan in status.plans:
        confirmed = "confirmed" if plan.confirmed else "not confirmed"
        budget = (
            f", budget {_usd(plan.max_cost_usd)}, left {_usd(plan.budget_left_usd)}"
            if plan.max_cost_usd is not None
            else ""
        )
        lines.append(
            f"plan {plan.name} (auto {plan.auto}, {confirmed}): {plan.tasks} task(s), "
            f"cost {_usd(plan.cost_usd)}{budget}"
        )
        lines.extend(f"  {name}: {count}" for name, count in _in_table_order(plan.counts))
    rate = f"{status.done_last_hour} task(s) integrated in the last hour"
    finish = (
        f", about {_duration(status.finish_in_secs)} to finish {status.remaining}"
        if status.finish_in_secs is not None
        else f", {status.remaining} not finished"
    )
    lines.append(rate + finish)
    if status.waiting:
        lines.append(f"waiting on a person: {len(status.waiting)}")
        lines.extend(f"  {w.task} ({w.plan}) {w.state}: {w.reason}" for w in status.waiting)
    return lines


def _in_table_order(counts: dict[str, int]) -> list[tuple[str, int]]:
    order = [str(state) for state in State] + [DAMAGED]
    return [(name, counts[name]) for name in order if counts.get(name)]


def _usd(value: float | None) -> str:
    return "-" if value is None else f"${value:.2f}"


def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{max(minutes, 1)} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
