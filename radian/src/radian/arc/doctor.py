"""`radian arc doctor`: reconcile what arc keeps as running totals with the records they sum.

Each plan's running cost (radian.arc.budget: cost_usd over its tasks, kept beside the plan so
a budget check reads one small file) is counted again from the tasks' own files; a total
that differs (a crash between a task's save and its plan's total, or a total kept by hand)
is set to the count. It changes nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

from radian.arc import texts
from radian.arc.store_protocol import Store


@dataclass(frozen=True)
class CostCheck:
    plan: str
    kept: float | None  # the running total as it was kept; None: there was none
    counted: float  # cost_usd over the plan's tasks, as their files say
    fixed: bool  # the kept total was set to the count


@dataclass(frozen=True)
class DoctorResult:
    costs: list[CostCheck]

    def document(self) -> dict[str, object]:
        return {"costs": [vars(check) for check in self.costs]}

    def lines(self) -> list[str]:
        return [texts.doctor_cost(c.plan, c.kept, c.counted, c.fixed) for c in self.costs] or [
            texts.DOCTOR_NO_PLANS
        ]


def doctor(store: Store) -> DoctorResult:
    checks = []
    for plan in store.plans():
        kept, counted = store.reconcile_plan_cost(plan.name)
        fixed = kept is None or abs(kept - counted) > 1e-9
        checks.append(CostCheck(plan.name, kept, counted, fixed))
    return DoctorResult(checks)
