"""One bad file never stops a repository (issue 14, bug 3): a damaged task is quarantined
with a clear message, every other task goes on. Through the real command line."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from arc_helpers import make_plan, task
from conftest import run_env, write_config

from radian.arc.clock import FakeClock
from radian.arc.store import ArcStore

pytestmark = pytest.mark.acceptance

Worker = Callable[..., list[str]]
RADIAN = str(Path(sys.executable).parent / "radian")


def radian(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RADIAN, "arc", *args], cwd=repo, env=run_env(),
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def damage(store: ArcStore, how: str) -> None:
    path = store.task_path("a")
    record = json.loads(path.read_text())
    if how == "corrupt":
        path.write_text('{"name": "a", "plan": ')
    elif how == "empty":
        path.write_text("")
    elif how == "wrongly typed":
        path.write_text(json.dumps({**record, "retry_count": "many"}))
    elif how == "not an object":
        path.write_text("[1, 2, 3]\n")
    elif how == "deleted":
        path.unlink()
    elif how == "garbage retry_at":
        path.write_text(json.dumps({**record, "state": "todo.retry_wait", "retry_at": "soon"}))
    elif how == "nested too deeply":
        path.write_text("[" * 200_000 + "]" * 200_000)


@pytest.mark.parametrize(
    "how",
    ["corrupt", "empty", "wrongly typed", "not an object", "deleted", "garbage retry_at",
     "nested too deeply"],
)  # fmt: skip
def test_a_damaged_task_is_quarantined_and_the_others_run(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, how: str
) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "result", "commit": True}}))
    store = make_plan(git_repo, clock, ["a", "b", "c"])
    damage(store, how)

    run = radian(git_repo, "run", "--once")

    assert run.returncode == 0, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert "a quarantined: .radian/arc/runs/a/task.json: " in run.stdout
    assert "nothing runs this task until the file is repaired" in run.stdout
    for name in ("b", "c"):
        assert task(git_repo, name).state == "review.verifying", run.stdout
    shown = radian(git_repo, "show", "a")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("a: damaged\n  problem: .radian/arc/runs/a/task.json: ")
    document = json.loads(radian(git_repo, "show", "a", "--json").stdout)
    assert document["state"] == "damaged" and "restore it from a backup" in document["problem"]
    overview = radian(git_repo, "show")
    assert overview.returncode == 0 and "  a: damaged  " in overview.stdout
    assert "  b: review.verifying" in overview.stdout
    cancelled = radian(git_repo, "cancel", "a")
    assert cancelled.returncode == 1, cancelled.stderr
    assert cancelled.stderr.startswith(".radian/arc/runs/a/task.json: ")
    again = radian(git_repo, "run", "--once")
    assert again.returncode == 0 and "Traceback" not in again.stderr


def test_a_worker_printing_a_result_nested_too_deeply_fails_only_its_attempt(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    deep = '{"type": "result", "outcome": ' + "[" * 200_000 + "]" * 200_000 + "}"
    write_config(git_repo, scripted_worker({"default": {"outcome": "failed", "emit": deep}}))
    make_plan(git_repo, clock, ["t"])

    for _ in range(2):
        run = radian(git_repo, "run", "--once")
        assert run.returncode == 0, run.stderr
        assert "Traceback" not in run.stderr
    shown = radian(git_repo, "show", "t", "--json")
    assert shown.returncode == 0
    attempts = json.loads(shown.stdout)["attempts"]
    # (a second attempt may have run: the retry is due 10 s of real time later)
    assert attempts[0]["outcome"] == "failed" and attempts[0]["class"] == "model"
