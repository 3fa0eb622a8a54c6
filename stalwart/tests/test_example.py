"""The shop's run.py prints expected_output.txt byte for byte, and again on the same record."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.acceptance

SHOP = Path(__file__).resolve().parents[1] / "examples" / "shop"


def _run(folder: Path) -> str:
    done = subprocess.run(
        [sys.executable, "run.py"],
        cwd=folder,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode("utf-8")


def test_the_shop_prints_the_chapter_twice_on_the_same_record(tmp_path: Path) -> None:
    # A copy, so the test neither races `make demo` nor leaves a record in the source tree.
    folder = tmp_path / "shop"
    shutil.copytree(SHOP, folder, ignore=shutil.ignore_patterns("*.sqlite*", "__pycache__"))
    expected = (SHOP / "expected_output.txt").read_text(encoding="utf-8")
    assert _run(folder) == expected
    assert (folder / "agent.record.sqlite").exists()
    assert _run(folder) == expected  # sessions u-17 and u-18 now have history


def test_the_shop_record_keeps_every_call_and_the_memory_is_rewound(tmp_path: Path) -> None:
    folder = tmp_path / "shop"
    shutil.copytree(SHOP, folder, ignore=shutil.ignore_patterns("*.sqlite*", "__pycache__"))
    _run(folder)
    script = (
        "from stalwart import Agent\n"
        "desk = Agent.from_file('agent.yaml')\n"
        "for c in desk.record('u-17'):\n"
        "    print(c.kind, c.tool, c.status, c.undone_by_tool)\n"
        "for m in desk.memory('u-17'):\n"
        "    print(m.role, m.content)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=folder, capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines() == [
        "write charge_card ran refund_card",
        "write update_crm ran restore_crm",
        "write provision_account failed None",
        "undo restore_crm ran None",
        "undo refund_card ran None",
        "user charge order 4411 40.00, then update the crm for order 4411, "
        "then provision the account for order 4411",
        "assistant This run stopped: provision_account failed (RuntimeError). "
        "Undone, latest first: update_crm (by restore_crm), charge_card (by refund_card).",
    ]


# Chapter 34, "The failed order": its code and what it prints, copied from the chapter
# character for character. The chapter shows no imports; the preamble gives the two names
# its code uses (the shop's CALLS and stalwart's Agent), and nothing else.
PREAMBLE = "from shop.tools import CALLS\nfrom stalwart import Agent\n\n"

CHAPTER_FIRST_ORDER = """desk = Agent.from_file("agent.yaml")


def order(turn, user):
    reply = desk.chat(turn, user=user)
    while reply.waiting and reply.waiting[0].kind == "confirm":
        reply = desk.confirm(user, "approve")       # the person approves each write as it comes
    return reply


reply = order("charge order 4411 40.00, then update the crm for order 4411, "
              "then provision the account for order 4411", "u-17")
print(reply.text)
print("The tools ran in this order:")
for number, name in enumerate(CALLS, 1):
    print(f"{number}. {name}")
"""

CHAPTER_SECOND_ORDER = """CALLS.clear()
reply = order("charge order 4411 40.00, then send the receipt for order 4411, "
              "then provision the account for order 4411", "u-18")
print(reply.text)
"""

CHAPTER_PRINTED = """This run stopped: provision_account failed (RuntimeError). Undone, latest first: update_crm (by restore_crm), charge_card (by refund_card).
The tools ran in this order:
1. charge_card
2. update_crm
3. provision_account
4. restore_crm
5. refund_card
This run stopped: provision_account failed (RuntimeError). Undone, latest first: charge_card (by refund_card). Not undoable, and left as they are: send_receipt."""  # noqa: E501


def test_the_chapters_failed_order_runs_verbatim_and_prints_what_the_chapter_prints(
    tmp_path: Path,
) -> None:
    """The chapter's code answers each confirmation with `desk.confirm(user, "approve")`,
    naming no question: it runs as printed (before: TypeError, question= missing)."""
    folder = tmp_path / "shop"
    shutil.copytree(SHOP, folder, ignore=shutil.ignore_patterns("*.sqlite*", "__pycache__"))
    script = PREAMBLE + CHAPTER_FIRST_ORDER + "\n" + CHAPTER_SECOND_ORDER
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=folder, capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode("utf-8") == CHAPTER_PRINTED + "\n"
    # The example the project ships prints the very same block.
    assert (SHOP / "expected_output.txt").read_text(encoding="utf-8") == CHAPTER_PRINTED + "\n"
