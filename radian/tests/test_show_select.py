"""`radian arc show --plan --state --limit --page` (issue 33): the listing narrowed and paged,
as text and JSON; without these options show prints what it always printed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from arc_helpers import make_plan
from conftest import write_config
from test_cli import arc

from radian.arc import commands
from radian.arc.clock import FakeClock
from radian.arc.store import ArcStore

pytestmark = pytest.mark.acceptance


@pytest.fixture
def repo(git_repo: Path, clock: FakeClock, scripted_worker: Callable[..., list[str]]) -> Path:
    """Plan p: a1..a3, a2 cancelled; plan q: b1, b2, b2 cancelled."""
    write_config(git_repo, scripted_worker({"default": {"outcome": "failed"}}))
    make_plan(git_repo, clock, ["a1", "a2", "a3"], plan="p")
    make_plan(git_repo, clock, ["b1", "b2"], plan="q")
    store = ArcStore(git_repo)
    commands.cancel(store, clock, "a2")
    commands.cancel(store, clock, "b2")
    return git_repo


def line(name: str, state: str) -> str:
    return f"  {name}: {state}  retry_count 0  cost_usd $0"


def test_show_without_the_options_prints_what_it_always_printed(repo: Path) -> None:
    shown = arc(repo, "show")
    assert shown.output.splitlines() == [
        "plan p (auto on, confirmed)",
        line("a1", "todo.ready"),
        line("a2", "failed.cancelled"),
        line("a3", "todo.ready"),
        "plan q (auto on, confirmed)",
        line("b1", "todo.ready"),
        line("b2", "failed.cancelled"),
    ]
    assert "page" not in json.loads(arc(repo, "show", "--json").output)


def test_plan_and_state_narrow_the_listing(repo: Path) -> None:
    assert arc(repo, "show", "--plan", "q").output.splitlines() == [
        "plan q (auto on, confirmed)",
        line("b1", "todo.ready"),
        line("b2", "failed.cancelled"),
    ]
    assert arc(repo, "show", "--state", "failed.cancelled").output.splitlines() == [
        "plan p (auto on, confirmed)",
        line("a2", "failed.cancelled"),
        "plan q (auto on, confirmed)",
        line("b2", "failed.cancelled"),
    ]
    both = json.loads(arc(repo, "show", "--plan", "p", "--state", "todo.ready", "--json").output)
    assert [plan["name"] for plan in both["plans"]] == ["p"]
    assert [task["name"] for task in both["plans"][0]["tasks"]] == ["a1", "a3"]
    assert both["page"] == {"limit": None, "page": 1, "pages": 1, "matching": 2}
    none = arc(repo, "show", "--state", "done.integrated")
    assert (none.exit_code, none.output) == (0, "no task matches\n")


def test_limit_and_page_page_through_every_matching_task(repo: Path) -> None:
    second = arc(repo, "show", "--limit", "2", "--page", "2")
    assert second.output.splitlines() == [
        "plan p (auto on, confirmed)",
        line("a3", "todo.ready"),
        "plan q (auto on, confirmed)",
        line("b1", "todo.ready"),
        "page 2 of 3 (5 tasks)",
    ]
    first = json.loads(arc(repo, "show", "--limit", "2", "--json").output)
    assert [task["name"] for task in first["plans"][0]["tasks"]] == ["a1", "a2"]
    assert [plan["name"] for plan in first["plans"]] == ["p"]  # q has no task on page 1
    assert first["page"] == {"limit": 2, "page": 1, "pages": 3, "matching": 5}
    assert first["plans"][0]["tasks"][1]["attempts"] == []  # each task's full document
    last = json.loads(arc(repo, "show", "--limit", "2", "--page", "3", "--json").output)
    assert [t["name"] for plan in last["plans"] for t in plan["tasks"]] == ["b2"]
    beyond = arc(repo, "show", "--limit", "2", "--page", "9")
    assert beyond.output == "no task matches\npage 9 of 3 (5 tasks)\n"


def test_a_damaged_task_is_listed_but_matches_no_state(repo: Path) -> None:
    (repo / ".radian" / "arc" / "runs" / "a1" / "task.json").write_text("{not json")
    listed = arc(repo, "show", "--plan", "p").output.splitlines()
    assert listed[1].startswith("  a1: damaged  ")
    ready = arc(repo, "show", "--plan", "p", "--state", "todo.ready").output.splitlines()
    assert ready == ["plan p (auto on, confirmed)", line("a3", "todo.ready")]


def test_refusals_change_nothing_and_say_why(repo: Path) -> None:
    unknown = arc(repo, "show", "--plan", "nope")
    assert (unknown.exit_code, unknown.output) == (1, "no plan named 'nope'\n")
    as_json = json.loads(arc(repo, "show", "--plan", "nope", "--json").output)
    assert (as_json["ok"], as_json["exit_code"], as_json["error"]) == (
        False, 1, "no plan named 'nope'"
    )  # fmt: skip
    page_alone = arc(repo, "show", "--page", "2")
    assert page_alone.exit_code == 2
    assert "--page counts pages of --limit tasks" in page_alone.output
    with_task = arc(repo, "show", "a1", "--state", "todo.ready")
    assert with_task.exit_code == 2
    assert "narrow the listing: give no task" in with_task.output
    assert arc(repo, "show", "--limit", "0").exit_code == 2
