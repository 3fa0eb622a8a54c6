"""The table as data: the chapter's fifteen rows keep their classes and next states; the rows
that are ours (issue 31: interrupted) follow them, marked as ours."""

from __future__ import annotations

import pytest

from radian.arc.classify import CHAPTER_TABLE, ROWS, TABLE, Next

pytestmark = pytest.mark.unit


def test_the_chapters_fifteen_rows_keep_their_classes_and_ours_follows_them() -> None:
    chapter = [(row.key, row.failure_class, row.next_step) for row in CHAPTER_TABLE]
    assert chapter == [
        ("completed_pushed", None, Next.VERIFY),
        ("completed_undelivered", "verification", Next.REWORK_PENDING),
        ("poisoned", "model", Next.IRRECOVERABLE),
        ("refused", "model", Next.RETRY),
        ("failed", "model", Next.RETRY),
        ("incomplete", "model", Next.RETRY),
        ("budget_exceeded", "model", Next.RETRY),
        ("cancelled", "model", Next.RETRY),
        ("terminated", "infrastructure", Next.RETRY),
        ("unknown_outcome", "infrastructure", Next.RETRY),
        ("lock_held", "infrastructure", Next.RETRY),
        ("stall", "stall", Next.RETRY),
        ("wall_time", "wall_time", Next.RETRY),
        ("cancel", "cancel", Next.CANCELLED),
        ("reverify", "reverify", Next.VERIFY_AT_ONCE),
    ]
    ours = [row for row in TABLE if row.ours]
    assert ours == [ROWS["interrupted"]] and TABLE[-1] is ROWS["interrupted"]
    assert (ours[0].failure_class, ours[0].next_step) == ("interrupted", Next.READY_AGAIN)
