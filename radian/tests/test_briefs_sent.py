"""Every worker is sent its task's brief (issue 27): read from what the worker got on stdin.

A loaded plan keeps its tasks' briefs in `.radian/arc/loaded/<plan>.json` until a task's folder
is made; the folder's first write (a claim, a cancel, a rework, a save) must carry the brief
with it. These tests read the brief where it matters: what the scripted worker read on its
stdin (scripted_worker.py keeps it in `sent/<task>-<attempt>.md`), on a first attempt, a retry,
a resumed session, after a rework, a conflict rework started mid-merge, and in the review.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from arc_helpers import run_once, task
from conftest import run_env, write_config
from gate_fixtures.arc_world import run_arc, worker_args, write_arc_config
from gate_fixtures.world import GitWorld

from radian.arc import commands, show
from radian.arc.clock import FakeClock
from radian.arc.config import load_config
from radian.arc.loop import Loop
from radian.arc.plan_file import TaskEntry
from radian.arc.store import ArcStore
from radian.arc.worker.attempt import with_delivery

pytestmark = pytest.mark.integration

Worker = Callable[..., list[str]]


def brief_of(name: str) -> str:
    return f"# {name}\n\nDo the thing for {name}. MARKER-{name}\n"


def load_plan(
    repo: Path,
    clock: FakeClock,
    names: list[str],
    *,
    from_files: bool = False,
    fields: dict[str, Any] | None = None,
) -> ArcStore:
    """`radian arc plan load` of a plan.toml whose tasks carry their briefs inline, or in
    brief files beside it; then `confirm`."""
    folder = repo.parent / "plan"
    folder.mkdir(exist_ok=True)
    lines = ['[plan]\nname = "p"\n']
    for name in names:
        lines.append(f'[[task]]\nname = "{name}"')
        if from_files:
            (folder / f"{name}.md").write_text(brief_of(name), encoding="utf-8")
            lines.append(f'brief_file = "{name}.md"')
        else:
            lines.append(f"brief = {json.dumps(brief_of(name))}")
        lines.extend(f"{key} = {json.dumps(value)}" for key, value in (fields or {}).items())
        lines.append("")
    plan_file = folder / "plan.toml"
    plan_file.write_text("\n".join(lines), encoding="utf-8")
    store = ArcStore(repo)
    commands.load_plan_file(store, clock, plan_file)
    commands.confirm(store, load_config(repo), "p")
    return store


def sent(tmp_path: Path, name: str, attempt: str) -> str:
    """What the worker of `name`'s attempt read on its stdin."""
    return (tmp_path / "sent" / f"{name}-{attempt}.md").read_text(encoding="utf-8")


def as_sent(brief: str, name: str) -> str:
    return with_delivery(brief, f"arc/{name}", "origin")


@pytest.mark.parametrize("from_files", [False, True], ids=["inline", "brief_file"])
def test_the_first_attempt_is_sent_the_loaded_brief(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, tmp_path: Path, from_files: bool
) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "result", "commit": True}}))
    store = load_plan(git_repo, clock, ["t1"], from_files=from_files)
    run_once(git_repo, clock)
    assert sent(tmp_path, "t1", "001") == as_sent(brief_of("t1"), "t1")
    assert store.brief_path("t1").read_text(encoding="utf-8") == brief_of("t1")
    attempt_brief = store.attempt_dir("t1", "001") / "brief.md"
    assert "MARKER-t1" in attempt_brief.read_text(encoding="utf-8")


def test_tasks_of_a_thousand_task_plan_are_each_sent_their_own_brief(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, tmp_path: Path
) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "result", "commit": True}}))
    names = [f"t{number:04}" for number in range(1, 1001)]
    store = load_plan(git_repo, clock, names, from_files=True)
    for name in ("t0001", "t0500", "t1000"):
        Loop(ArcStore(git_repo), load_config(git_repo), clock, echo=lambda line: None).start(name)
        assert sent(tmp_path, name, "001") == as_sent(brief_of(name), name)
    assert not store.task_dir("t0002").exists()  # the others keep to the loaded file


def test_a_retry_and_a_resumed_session_are_sent_the_brief_again(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, tmp_path: Path
) -> None:
    steps = {"001": {"do": "result", "outcome": "failed", "session": "sess-a"},
             "default": {"do": "result", "commit": True}}  # fmt: skip
    write_config(git_repo, scripted_worker(steps))  # session = "resume"
    store = load_plan(git_repo, clock, ["t1"])
    run_once(git_repo, clock)
    clock.advance(11)
    run_once(git_repo, clock)
    intent = store.read_attempt_intent("t1", "002")
    assert intent is not None and intent["resume_session_id"] == "sess-a"
    for attempt in ("001", "002"):
        assert sent(tmp_path, "t1", attempt) == as_sent(brief_of("t1"), "t1")


def test_a_rework_after_the_first_attempt_keeps_the_brief_before_its_section(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, tmp_path: Path
) -> None:
    # The first attempt pushes nothing: review.rework_pending (no_commits); the lead reworks.
    steps = {"001": {"do": "result"}, "default": {"do": "result", "commit": True}}
    write_config(git_repo, scripted_worker(steps))
    store = load_plan(git_repo, clock, ["t1"])
    run_once(git_repo, clock)
    assert str(task(git_repo, "t1").state) == "review.rework_pending"
    commands.rework(store, clock, "t1", "Also add a test.")
    commands.rework(store, clock, "t1", "And a changelog line.")
    sections = "## Rework 1\n\nAlso add a test.\n\n## Rework 2\n\nAnd a changelog line.\n"
    expected = f"{brief_of('t1')}\n{sections}"
    assert store.read_brief("t1") == expected
    document = show.next_brief_document(store, load_config(git_repo), "t1")
    assert document["brief"] == as_sent(expected, "t1")
    run_once(git_repo, clock)
    assert sent(tmp_path, "t1", "002") == as_sent(expected, "t1")


def test_show_brief_prints_what_the_next_attempt_is_sent(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, radian_bin: Path
) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "result", "commit": True}}))
    load_plan(git_repo, clock, ["t1"])

    def show_brief(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(radian_bin), "arc", "show", "--brief", *args], cwd=git_repo,
                              capture_output=True, text=True, env=run_env())  # fmt: skip

    done = show_brief("t1")
    assert done.returncode == 0, done.stderr
    assert done.stdout == as_sent(brief_of("t1"), "t1").rstrip("\n") + "\n"
    assert json.loads(show_brief("t1", "--json").stdout)["brief"] == as_sent(brief_of("t1"), "t1")
    missing = show_brief()
    assert missing.returncode == 2
    assert "radian arc show --brief <task>" in missing.stderr


# -- the folder's first write ----------------------------------------------------------------


@pytest.mark.parametrize("first_write", ["claim", "cancel", "save", "rework"])
def test_whatever_makes_the_folder_writes_the_loaded_brief_in_the_same_step(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, first_write: str
) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "result"}}))
    store = load_plan(git_repo, clock, ["t1"])
    assert not store.task_dir("t1").exists()
    if first_write == "claim":
        store.write_attempt_intent("t1", "001", {"task": "t1"})
    elif first_write == "cancel":
        commands.cancel(store, clock, "t1")
    elif first_write == "save":
        store.save_task(store.load_task("t1"))
    else:
        commands.rework(store, clock, "t1", "Mind the edge case.")
    expected = brief_of("t1")
    if first_write == "rework":
        expected += "\n## Rework 1\n\nMind the edge case.\n"
    assert store.brief_path("t1").read_text(encoding="utf-8") == expected
    assert ArcStore(git_repo).read_brief("t1") == expected


def test_a_folder_an_earlier_build_made_without_the_brief_is_read_with_it(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    """The earlier build's leftovers: a folder whose brief.md is missing, or holds only the
    "## Rework <n>" sections a rework wrote there."""
    write_config(git_repo, scripted_worker({"default": {"do": "result"}}))
    store = load_plan(git_repo, clock, ["t1", "t2"])
    for name in ("t1", "t2"):
        store.save_task(store.load_task(name))
        store.brief_path(name).unlink()
    assert store.read_brief("t1") == brief_of("t1")
    store.brief_path("t2").write_text("## Rework 1\n\nAlso add a test.\n", encoding="utf-8")
    assert store.read_brief("t2") == f"{brief_of('t2')}\n## Rework 1\n\nAlso add a test.\n"


# -- every field a loaded task carries, through a claim ------------------------------------


# Each field a plan file's [[task]] may set, with a value other than its default.
AUDITED_FIELDS: dict[str, Any] = {"max_attempts": 1, "max_cost_usd": 0.25, "fix_level": "minor"}


def test_every_field_a_plan_files_task_may_set_is_audited_here() -> None:
    """A field a later format adds to [[task]] fails here until it is in AUDITED_FIELDS,
    and so through the claim test below."""
    assert set(TaskEntry.model_fields) - {"name", "brief", "brief_file"} == set(AUDITED_FIELDS)


@pytest.mark.parametrize(("field", "value"), list(AUDITED_FIELDS.items()))
def test_a_loaded_tasks_own_fields_survive_its_first_claim(
    git_repo: Path,
    clock: FakeClock,
    scripted_worker: Worker,
    tmp_path: Path,
    field: str,
    value: Any,
) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "result", "commit": True}}))
    store = load_plan(git_repo, clock, ["t1", "t2"], fields={field: value})
    before = store.load_task("t1").model_dump(mode="json")
    assert before[field] == value
    run_once(git_repo, clock)
    on_disk = json.loads(store.task_path("t1").read_text(encoding="utf-8"))
    assert on_disk[field] == value
    claimed = ArcStore(git_repo).load_task("t1")
    assert getattr(claimed, field) == value
    unchanged = {"state", "updated_at", "last_attempt_id", "attempts", "retry_at",
                 "session_id", "head_sha", "base_sha", "cost_usd", "total_cost_usd",
                 "state_history", "retry_count", "rework_reason", "format_version"}  # fmt: skip
    after = claimed.model_dump(mode="json")
    assert {k: v for k, v in after.items() if k not in unchanged} == {
        k: v for k, v in before.items() if k not in unchanged
    }


def test_the_max_attempts_a_loaded_task_carries_ends_it_after_a_claim(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "crash"}}))
    load_plan(git_repo, clock, ["t1"], fields={"max_attempts": 0})
    run_once(git_repo, clock)
    final = task(git_repo, "t1")
    assert str(final.state) == "failed.exhausted"
    assert final.attempts == ["001"]


# -- the gate: a conflict rework started mid-merge, and the review -------------------------


def ops(tag: str) -> str:
    return f"def add(a, b):\n    return a + b  # {tag}\n\n\ndef is_positive(x):\n    return x > 0\n"


def test_a_conflict_rework_and_the_review_are_given_the_loaded_brief(
    world: GitWorld, clock: FakeClock
) -> None:
    clash = {
        "files": {"src/calc/ops.py": ops("task {attempt}")},
        "main_push": {"clone": str(world.other), "files": {"src/calc/ops.py": ops("main")}},
    }
    scenario = {"clash": {"001": clash, "default": {"files": {"src/calc/ops.py": ops("both")}}}}
    write_arc_config(world, worker_args(world, scenario))
    plan_file = world.root / "plan.toml"
    plan_file.write_text(f'[plan]\nname = "p"\n\n[[task]]\nname = "clash"\n'
                         f"brief = {json.dumps(brief_of('clash'))}\n")  # fmt: skip
    store = ArcStore(world.repo)
    commands.load_plan_file(store, clock, plan_file)
    commands.confirm(store, load_config(world.repo), "p")

    lines = run_arc(world, clock)

    assert "clash conflict with main -> todo.ready (Rework 1, starts mid-merge)" in lines
    assert str(task_of(world, "clash").state) == "done.integrated"
    first = (world.root / "sent" / "clash-001.md").read_text(encoding="utf-8")
    assert first == as_sent(brief_of("clash"), "clash")
    second = (world.root / "sent" / "clash-002.md").read_text(encoding="utf-8")
    assert second.startswith(brief_of("clash") + "\n## Rework 1 (conflict with main)\n")
    assert "This attempt starts mid-merge" in second
    seen = sorted(store.task_dir("clash").rglob("*.seen-brief.md"))
    assert seen, "the reviewer ran and kept what it read"
    for path in seen:
        assert path.read_text(encoding="utf-8").startswith(brief_of("clash"))


def task_of(world: GitWorld, name: str) -> Any:
    return ArcStore(world.repo).load_task(name)
