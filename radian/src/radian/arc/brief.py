"""A task's brief: `runs/<task>/brief.md`, and the "## Rework <n>" sections appended to it."""

from __future__ import annotations

from radian.arc.records import Task
from radian.arc.store_protocol import Store
from radian.arc.texts import rework_heading


def append_rework(store: Store, task: Task, body: str, heading_suffix: str = "") -> int:
    """Append "## Rework <n><heading_suffix>" and `body` to the brief; returns n.

    n continues task.rework_count, whoever writes the rework (the lead, a review or a
    conflict). The caller holds the task's lock and saves the task.
    """
    number = task.rework_count + 1
    brief = store.read_brief(task.name)
    section = f"{rework_heading(number)}{heading_suffix}\n\n{body.strip()}\n"
    joined = brief.rstrip("\n") + "\n\n" + section if brief.strip() else section
    store.write_brief(task.name, joined)
    task.rework_count = number
    return number
