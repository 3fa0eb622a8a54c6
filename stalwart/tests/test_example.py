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
