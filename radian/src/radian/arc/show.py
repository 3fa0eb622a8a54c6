"""`radian arc show`: a task, or every plan and task, as text or as a stable JSON document."""

from __future__ import annotations

from typing import Any

from radian.arc.config import ArcConfig
from radian.arc.errors import DamagedFile
from radian.arc.gate.verdict import verdict_summary, verdict_summary_line
from radian.arc.records import Task
from radian.arc.store_protocol import Store
from radian.arc.worker.attempt import with_delivery

# The state `show` gives a task whose file cannot be read (no state of the table).
DAMAGED = "damaged"

ATTEMPT_KEYS = (
    "outcome",
    "class",
    "model_wait",
    "model_error",
    "cost_usd",
    "cost_unknown",
    "session_cost_usd",
    "session_id",
    "started_at",
    "ended_at",
    "next_state",
    "reason",
)


def task_document(store: Store, config: ArcConfig, task: Task) -> dict[str, Any]:
    """The JSON `show --json <task>` prints; its keys are stable."""
    limit = task.max_attempts if task.max_attempts is not None else config.limits.max_attempts
    attempts = []
    for attempt_id in task.attempts:
        result = store.read_attempt_result(task.name, attempt_id)
        record = result.model_dump(by_alias=True, exclude_unset=True) if result else {}
        entry: dict[str, Any] = {"id": attempt_id} | {key: record.get(key) for key in ATTEMPT_KEYS}
        entry["model_wait"] = bool(entry["model_wait"])
        if not record:
            intent = store.read_attempt_intent(task.name, attempt_id) or {}
            entry["started_at"] = intent.get("claimed_at")
        attempts.append(entry)
    return {
        "name": task.name,
        "plan": task.plan,
        "state": str(task.state),
        "retry_count": task.retry_count,
        "max_attempts": limit,
        "retry_at": task.retry_at,
        "model_wait_streak": task.model_wait_streak,
        "cost_usd": task.cost_usd,
        "total_cost_usd": task.total_cost_usd,
        "max_cost_usd": task.max_cost_usd,
        "rework_reason": task.rework_reason,
        "rework_count": task.rework_count,
        "branch": task.branch,
        "base_sha": task.base_sha,
        "head_sha": task.head_sha,
        "session_id": task.session_id,
        "last_verdict": verdict_summary(store.task_dir(task.name)),
        "attempts": attempts,
    }


def one_task_document(store: Store, config: ArcConfig, name: str) -> dict[str, Any]:
    """`show <task>`: the task's document, or what is wrong with its file."""
    try:
        task = store.load_task(name)
    except DamagedFile as error:
        return damaged_document(name, str(error))
    return task_document(store, config, task)


def next_brief_document(store: Store, config: ArcConfig, name: str) -> dict[str, Any]:
    """`show --brief <task>`: what the task's next attempt will be sent on its stdin (and
    what its review reads, without the delivery section): the brief it was loaded or added
    with, each "## Rework <n>" written since, then arc's delivery section."""
    task = store.load_task(name)
    brief = store.read_brief(name)
    return {"name": name, "brief": with_delivery(brief, task.branch, config.repository.remote)}


def damaged_document(name: str, problem: str) -> dict[str, Any]:
    """A task whose file arc cannot read: what is wrong and how to repair it."""
    return {"name": name, "state": DAMAGED, "problem": problem}


def overview_document(store: Store, config: ArcConfig) -> dict[str, Any]:
    plans = []
    for plan in store.plans():
        tasks = []
        for name in plan.tasks:
            task = store.try_load_task(name)
            if task is None:
                tasks.append(damaged_document(name, store.damaged[name]))
            else:
                tasks.append(task_document(store, config, task))
        plans.append(
            {
                "name": plan.name,
                "auto": plan.auto,
                "confirmed": plan.confirmed,
                "max_cost_usd": plan.max_cost_usd,
                "tasks": tasks,
            }
        )
    damaged_plans = {
        name.removeprefix("plan "): problem
        for name, problem in store.damaged.items()
        if name.startswith("plan ")
    }
    return {"plans": plans, "damaged_plans": damaged_plans}


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}".rstrip("0").rstrip(".")


def task_text(document: dict[str, Any]) -> list[str]:
    if document["state"] == DAMAGED:
        return [f"{document['name']}: {DAMAGED}", f"  problem: {document['problem']}"]
    lines = [
        f"{document['name']} (plan {document['plan']})",
        f"  state: {document['state']}",
        f"  retry_count: {document['retry_count']} of max_attempts {document['max_attempts']}",
        f"  retry_at: {document['retry_at'] or '-'}",
        f"  cost_usd: {_money(document['cost_usd'])} "
        f"(total_cost_usd {_money(document['total_cost_usd'])})",
    ]
    if document["rework_reason"]:
        lines.append(f"  rework_reason: {document['rework_reason']}")
    if document["head_sha"]:
        lines.append(f"  base_sha: {document['base_sha']}  head_sha: {document['head_sha']}")
    if document.get("last_verdict"):
        lines.append(f"  {verdict_summary_line(document['last_verdict'])}")
    if document["session_id"]:
        lines.append(f"  session_id: {document['session_id']}")
    for attempt in document["attempts"]:
        outcome = attempt["outcome"] or "-"
        failure_class = attempt["class"] or "-"
        lines.append(
            f"  attempt {attempt['id']}: {outcome} ({failure_class}) -> "
            f"{attempt['next_state'] or 'running'}  cost {_money(attempt['cost_usd'])}  "
            f"session_cost {_money(attempt['session_cost_usd'])}"
        )
        if attempt["reason"]:
            lines.append(f"    reason: {attempt['reason']}")
        if attempt.get("cost_unknown"):
            lines.append(f"    cost unknown: {attempt['cost_unknown']}")
        error = attempt["model_error"]
        if error:
            after = error.get("retry_after_secs")
            details = f"{error.get('kind') or 'error'}"
            if after is not None:
                details += f" (retry_after_secs {after:g})"
            if error.get("message"):
                details += f": {error['message']}"
            lines.append(f"    attempt_model_error: {details}")
    return lines


def overview_text(document: dict[str, Any]) -> list[str]:
    lines = []
    for plan in document["plans"]:
        confirmed = "confirmed" if plan["confirmed"] else "not confirmed"
        lines.append(f"plan {plan['name']} (auto {plan['auto']}, {confirmed})")
        for task in plan["tasks"]:
            if task["state"] == DAMAGED:
                lines.append(f"  {task['name']}: {DAMAGED}  {task['problem']}")
                continue
            extra = f"  retry_at {task['retry_at']}" if task["retry_at"] else ""
            lines.append(
                f"  {task['name']}: {task['state']}  retry_count {task['retry_count']}  "
                f"cost_usd {_money(task['cost_usd'])}{extra}"
            )
    for name, problem in document.get("damaged_plans", {}).items():
        lines.append(f"plan {name}: {DAMAGED}  {problem}")
    return lines or ["no plans"]
