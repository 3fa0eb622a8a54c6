"""The reworks arc writes by itself after a gate: a review rework and a conflict rework.

Both append "## Rework <n>" with the lead's numbering (task.rework_count + 1) through
radian.arc.brief.append_rework. The caller holds the task's lock and saves the task.
"""

from __future__ import annotations

from collections.abc import Sequence

from radian.arc.brief import append_rework
from radian.arc.gate import texts
from radian.arc.gate.findings import Finding
from radian.arc.records import Task
from radian.arc.store_protocol import Store


def write_review_rework(
    store: Store, task: Task, fix_level: str, findings: Sequence[Finding]
) -> int:
    """ "## Rework <n>" listing the failing findings; returns n."""
    return append_rework(store, task, texts.review_rework_body(fix_level, findings))


def write_conflict_rework(
    store: Store, task: Task, main_sha: str, stage: str, paths: Sequence[str]
) -> int:
    """ "## Rework <n> (conflict with main)"; returns n."""
    body = texts.conflict_rework_body(main_sha, stage, paths)
    return append_rework(store, task, body, heading_suffix=texts.CONFLICT_HEADING_SUFFIX)
