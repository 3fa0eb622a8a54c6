"""The files store's change journal: every save of a task or plan, in order.

Every save appends one line to `.radian/arc/changes.log` ("task <name>" or "plan <name>",
one small O_APPEND write, so lines from many processes never interleave). A loop's due-index
(radian.arc.due) reads only the lines after the last it read, through the store's
`start_changes` and `changes_since`: a pass then costs what changed, not the number of
tasks. The journal is emptied when a loop starts (under the run lock, before its full
scan), so it grows only with the changes of one run.
"""

from __future__ import annotations

import os
from pathlib import Path

JOURNAL = "changes.log"


def journal_path(root: Path) -> Path:
    return root / JOURNAL


def note_change(root: Path, kind: str, name: str) -> None:
    """Append "<kind> <name>" to the journal (kind: task or plan)."""
    root.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(journal_path(root), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, f"{kind} {name}\n".encode())
    finally:
        os.close(descriptor)


def start_changes(root: Path) -> int:
    """Empty the journal (a loop's start, under the run lock); the position to read
    changes from."""
    path = journal_path(root)
    if path.exists():
        os.truncate(path, 0)
    return 0


def changes_since(root: Path, position: int) -> tuple[int, list[tuple[str, str]]] | None:
    """The journal's complete lines after `position` as (kind, name), with the position
    after them; None when the journal was emptied since (another loop's start)."""
    path = journal_path(root)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        size = 0
    if size < position:
        return None
    if size == position:
        return position, []
    with path.open("rb") as journal:
        journal.seek(position)
        data = journal.read(size - position)
    complete = data[: data.rfind(b"\n") + 1]
    changes = [line.partition(" ") for line in complete.decode(errors="replace").splitlines()]
    return position + len(complete), [(kind, name) for kind, _, name in changes]
