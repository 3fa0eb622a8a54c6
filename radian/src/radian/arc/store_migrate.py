"""`radian arc store migrate`: a repository's files under `.radian/arc/` into the PostgreSQL
store it is configured with (radian/docs/hosts.md).

Everything the files store keeps as records goes in one transaction: the plans, the tasks
(a loaded plan's too) with their briefs, each attempt's intent and result, the plans'
running costs. The files are left as they were (nothing reads them once the store is
PostgreSQL); the attempt folders, logs and worktrees stay where they are, on this host.
Refused, changing nothing: a store that is not PostgreSQL, a `run` working on the
repository, a plan the database holds already.
"""

from __future__ import annotations

from filelock import Timeout

from radian.arc import results, texts
from radian.arc.errors import UsageError
from radian.arc.store import ArcStore
from radian.arc.store_postgres import Imported, PostgresStore
from radian.arc.store_protocol import Store


def migrate(files: ArcStore, target: Store) -> results.StoreMigrated:
    if not isinstance(target, PostgresStore):
        raise UsageError(texts.migrate_needs_postgres())
    lock = files.run_lock()
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise UsageError(texts.run_already_active()) from None
    try:
        with files.registry_lock():
            return _migrate(files, target)
    finally:
        lock.release()


def _migrate(files: ArcStore, target: PostgresStore) -> results.StoreMigrated:
    plans = files.plans()
    there = [plan.name for plan in plans if target.plan_exists(plan.name)]
    if there:
        raise UsageError(texts.migrate_plans_there(there))
    found = Imported(plans=plans)
    for plan in plans:
        for position, name in enumerate(plan.tasks):
            task = files.load_task(name)  # a damaged record stops the move: DamagedFile
            found.tasks.append((position, task, files.read_brief(name)))
            for attempt_id in task.attempts:
                intent = files.read_attempt_intent(name, attempt_id)
                done = files.read_attempt_result(name, attempt_id)
                found.attempts.append((name, attempt_id, intent, done.document() if done else None))
        found.costs[plan.name] = files.plan_cost(plan.name)
    target.import_records(found)
    return results.StoreMigrated(len(found.plans), len(found.tasks), len(found.attempts))
