"""arc on the PostgreSQL store (issue 31, point 1), through the real `radian` command line:
`[store] url` (or RADIAN_ARC_STORE) puts plans, tasks, attempts and costs in PostgreSQL and
nothing of them under .radian/arc/; a PostgreSQL restart in the middle of a run loses
nothing; a store arc cannot open is refused with a clear error."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import git, make_git_repo, run_env, worker_exec_args, write_config
from postgres_server import PostgresServer

from radian.arc.attempt_result import AttemptResult
from radian.arc.errors import LeaseLost
from radian.arc.states import State
from radian.arc.store_postgres import PostgresStore

pytestmark = [pytest.mark.acceptance, pytest.mark.postgres, pytest.mark.timeout(600)]

RADIAN = str(Path(sys.executable).parent / "radian")


def arc(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([RADIAN, "arc", *args], cwd=repo, capture_output=True, text=True,
                          timeout=120, env=env or run_env())  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def plan_toml(tasks: list[str]) -> str:
    lines = ['[plan]\nname = "p"\n']
    for name in tasks:
        lines.append(f'[[task]]\nname = "{name}"\nbrief = "Write {name}.txt, commit, push."\n')
    return "\n".join(lines)


def project(tmp_path: Path, url: str, tasks: list[str], secs: float) -> tuple[Path, Path]:
    """A repository whose arc.toml names the PostgreSQL store, with the plan loaded and
    confirmed; (the repository, its first clone's remote-tracking checkout)."""
    repo = make_git_repo(tmp_path)
    scenario = tmp_path / "scenario.json"
    then = {"do": "result", "commit": True, "file": "{task}.txt", "cost": 0.01}
    scenario.write_text(json.dumps({"default": {"do": "sleep", "secs": secs, "then": then}}))
    write_config(repo, worker_exec_args(scenario), limits={"parallel": 3, "max_attempts": 3},
                 gate={"stages": []}, store={"url": url})  # fmt: skip
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text(plan_toml(tasks))
    arc(repo, "plan", "load", str(plan_file))
    arc(repo, "confirm", "p")
    return repo, tmp_path / "remote.git"


def integrated(repo: Path) -> Counter[str]:
    """The tasks merged into main on the bare remote (read there: a fetch in the clone while
    `run` works in it could meet a worktree half made)."""
    remote = repo.parent / "remote.git"
    subjects = git(remote, "log", "--first-parent", "--format=%s", "main").splitlines()
    return Counter(line.removeprefix("arc: integrate ") for line in subjects
                   if line.startswith("arc: integrate "))  # fmt: skip


def test_a_plan_runs_on_the_postgres_store_and_leaves_no_record_in_files(
    tmp_path: Path, pg_url: str
) -> None:
    tasks = [f"t{number}" for number in range(1, 6)]
    repo, _ = project(tmp_path, pg_url, tasks, 0.1)
    out = arc(repo, "run")

    store = PostgresStore(repo, pg_url)
    try:
        for name in tasks:
            task = store.load_task(name)
            assert (task.state, task.attempts) == (State.INTEGRATED, ["001"]), out
            result = store.read_attempt_result(name, "001")
            assert result is not None and result.outcome == "completed"
        assert store.plan_cost("p") == pytest.approx(0.05)
        assert store.load_plan("p").confirmed
    finally:
        store.close()
    assert integrated(repo) == Counter(dict.fromkeys(tasks, 1))
    arc_dir = repo / ".radian" / "arc"
    assert not (arc_dir / "plans").exists() and not (arc_dir / "loaded").exists()
    assert not list(arc_dir.glob("runs/*/task.json"))  # the records are in PostgreSQL
    assert (arc_dir / "runs" / "t1" / "attempts" / "001" / "worker.log").is_file()  # local
    status = json.loads(arc(repo, "status", "--json"))
    assert json.dumps(status).count(str(State.INTEGRATED)) >= 1, status


def test_a_postgres_restart_mid_run_loses_nothing(
    tmp_path: Path, pg_server: PostgresServer, pg_url: str
) -> None:
    tasks = [f"t{number:02d}" for number in range(1, 13)]
    repo, _ = project(tmp_path, pg_url, tasks, 0.4)
    run = subprocess.Popen([RADIAN, "arc", "run"], cwd=repo, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, env=run_env())  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(integrated(repo)) < 3:
            time.sleep(0.2)
        done_before = len(integrated(repo))
        pg_server.restart()
        assert 3 <= done_before < len(tasks)  # a restart in the middle of the plan
        out = run.communicate(timeout=480)[0]
    finally:
        run.kill()
        run.wait()
    assert run.returncode == 0, out
    store = PostgresStore(repo, pg_url)
    try:
        states = {name: store.load_task(name).state for name in tasks}
        assert states == dict.fromkeys(tasks, State.INTEGRATED), out
        assert store.plan_cost("p") == pytest.approx(0.01 * len(store.names_in(State.INTEGRATED)))
    finally:
        store.close()
    assert integrated(repo) == Counter(dict.fromkeys(tasks, 1)), out


def test_a_store_arc_cannot_open_is_refused(tmp_path: Path, pg_server: PostgresServer) -> None:
    repo = make_git_repo(tmp_path)
    env = {**run_env(), "RADIAN_ARC_STORE": "mysql://somewhere/arc"}
    done = subprocess.run([RADIAN, "arc", "status"], cwd=repo, capture_output=True, text=True,
                          timeout=60, env=env)  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == (
        "RADIAN_ARC_STORE: 'mysql://somewhere/arc' is no store arc knows: a postgresql://… URL,"
        " or none for the files"
    )
    gone = pg_server.url("no_such_database")
    env = {**run_env(), "RADIAN_ARC_STORE": gone}
    done = subprocess.run([RADIAN, "arc", "status"], cwd=repo, capture_output=True, text=True,
                          timeout=60, env=env)  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("the PostgreSQL store cannot be reached: "), done.stderr
    assert "no_such_database" in done.stderr


def test_store_migrate_moves_the_files_into_postgres(tmp_path: Path, pg_url: str) -> None:
    tasks = ["a", "b", "c"]
    repo = make_git_repo(tmp_path)
    scenario = tmp_path / "scenario.json"
    then = {"do": "result", "commit": True, "file": "{task}.txt", "cost": 0.25}
    scenario.write_text(json.dumps({"default": then}))
    config = write_config(repo, worker_exec_args(scenario), gate={"stages": []})
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text(plan_toml(tasks))
    arc(repo, "plan", "load", str(plan_file))
    arc(repo, "confirm", "p")
    arc(repo, "start", "a")  # a runs on the files store; b and c wait, as loaded
    before = json.loads(arc(repo, "show", "--json"))
    files = config.parent / "arc"
    refused = subprocess.run([RADIAN, "arc", "store", "migrate"], cwd=repo, capture_output=True,
                             text=True, timeout=60, env=run_env())  # fmt: skip
    assert refused.returncode == 2 and "set [store] url" in refused.stderr, refused.stderr

    config.write_text(config.read_text() + f'\n[store]\nurl = "{pg_url}"\n')
    moved = json.loads(arc(repo, "store", "migrate", "--json"))
    assert moved["result"] == {"kind": "store_migrated", "plans": 1, "tasks": 3, "attempts": 1}
    assert moved["lines"] == [
        "moved 1 plan(s), 3 task(s) and 1 attempt(s) into PostgreSQL; the files under "
        ".radian/arc/ are left as they were"
    ]
    assert json.loads(arc(repo, "show", "--json")) == before  # read from PostgreSQL now
    store = PostgresStore(repo, pg_url)
    try:
        assert store.load_task("a").state is State.INTEGRATED
        assert store.read_attempt_result("a", "001") is not None
        assert store.read_brief("b") == "Write b.txt, commit, push."
        assert store.plan_cost("p") == 0.25
    finally:
        store.close()
    assert (files / "plans" / "p.json").is_file()  # left as it was

    again = subprocess.run([RADIAN, "arc", "store", "migrate"], cwd=repo, capture_output=True,
                           text=True, timeout=60, env=run_env())  # fmt: skip
    assert again.returncode == 2
    assert again.stderr.strip() == (
        "the PostgreSQL store holds these plans already: p; nothing moved"
    )
    arc(repo, "run")  # b and c, on PostgreSQL
    assert integrated(repo) == Counter(dict.fromkeys(tasks, 1))


def test_an_attempts_lease_fences_the_host_that_lost_it(tmp_path: Path, pg_url: str) -> None:
    # Leases long enough to be live still at the checks that follow their write or renewal on
    # a loaded machine (0.3 s: a pause of 0.35 s after the write found it expired).
    first = PostgresStore(tmp_path / "a", pg_url, host="h1", lease_secs=3.0)
    second = PostgresStore(tmp_path / "b", pg_url, host="h2", lease_secs=3.0)
    try:
        first.write_attempt_intent("t", "001", {"claimed_at": "2026-11-30T07:00:00Z"})
        intent = second.read_attempt_intent("t", "001")
        assert intent is not None and intent["owner_host"] == "h1"
        assert first.foreign_lease("t", "001") is None  # its own
        lease = second.foreign_lease("t", "001")
        assert lease is not None and (lease.host, lease.expired) == ("h1", False)
        with pytest.raises(LeaseLost, match="held by host h1"):
            second.write_attempt_intent("t", "001", {})  # a live lease of another host
        deadline = time.monotonic() + 60
        while not (found := second.foreign_lease("t", "001")) or not found.expired:
            assert time.monotonic() < deadline
            first.heartbeat([])  # nothing renewed: the lease runs out
            time.sleep(0.05)  # the database's clock, not a backoff
        second.take_over("t", "001")
        with pytest.raises(LeaseLost, match="t attempt 001: its lease is held by host h2"):
            first.check_lease("t", "001")  # what settle asks first
        second.check_lease("t", "001")
        second.write_attempt_result(
            "t", "001", AttemptResult(task="t", attempt_id="001", outcome="terminated")
        )
        second.heartbeat([("t", "001")])
        renewed = first.foreign_lease("t", "001")
        assert renewed is not None and (renewed.host, renewed.expired) == ("h2", False)
    finally:
        first.close()
        second.close()
