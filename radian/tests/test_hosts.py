"""Two hosts on one remote, without a shared store (issue 31, point 2): a second host is
refused, not doubled. Two clones of one bare remote, the same plan loaded and confirmed in
both, `radian arc run` in each at once (real processes, a scripted worker that commits and
pushes, the gate integrating into main): every task runs once and is integrated once, and
each host names the other in its refusals. Also: the worker's worktree starts from the
remote's task branch when the local one is stale."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import git, make_git_repo, run_env, worker_exec_args, write_config

from radian.arc.states import State
from radian.arc.store import ArcStore

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(600)]

RADIAN = str(Path(sys.executable).parent / "radian")
TASKS = [f"t{number:02d}" for number in range(1, 13)]


def arc(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([RADIAN, "arc", *args], cwd=repo, capture_output=True, text=True,
                          timeout=120, env=run_env())  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def host(root: Path, name: str, remote: Path, exec_args: list[str], plan_file: Path) -> Path:
    """A clone of `remote` with arc set up as a build host would have it: the same config and
    plan as every other host, loaded and confirmed there."""
    clone = root / name
    subprocess.run(["git", "clone", "-q", str(remote), str(clone)], check=True)
    git(clone, "config", "user.name", name)
    git(clone, "config", "user.email", f"{name}@example.invalid")
    write_config(clone, exec_args, limits={"parallel": 3, "max_attempts": 3},
                 gate={"stages": []})  # fmt: skip
    arc(clone, "plan", "load", str(plan_file))
    arc(clone, "confirm", "p")
    return clone


def plan_toml(tasks: list[str]) -> str:
    lines = ['[plan]\nname = "p"\n']
    for name in tasks:
        lines.append(f'[[task]]\nname = "{name}"\nbrief = "Write {name}.txt, commit, push."\n')
    return "\n".join(lines)


def test_two_hosts_on_one_remote_run_and_integrate_every_task_once(tmp_path: Path) -> None:
    first = make_git_repo(tmp_path)  # the bare remote, and a clone that seeded main
    remote = tmp_path / "remote.git"
    scenario = tmp_path / "scenario.json"
    then = {"do": "result", "commit": True, "file": "{task}.txt", "cost": 0.01}
    scenario.write_text(json.dumps({"default": {"do": "sleep", "secs": 0.3, "then": then}}))
    exec_args = worker_exec_args(scenario)
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text(plan_toml(TASKS))
    hosts = [host(tmp_path, name, remote, exec_args, plan_file) for name in ("a", "b")]
    names = {clone: f"{socket.gethostname()}:{clone.resolve()}" for clone in hosts}

    started = time.monotonic()
    runs = [subprocess.Popen([RADIAN, "arc", "run"], cwd=clone, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, env=run_env())
            for clone in hosts]  # fmt: skip
    outputs = [run.communicate(timeout=480)[0] for run in runs]
    elapsed = time.monotonic() - started
    for run, out in zip(runs, outputs, strict=True):
        assert run.returncode == 0, out

    ran = Counter(line.split()[0] for line in (tmp_path / "ran.log").read_text().splitlines())
    assert ran == Counter(dict.fromkeys(TASKS, 1)), (ran, outputs)  # every task run once
    integrated_by: dict[str, Path] = {}
    for clone in hosts:
        store = ArcStore(clone)
        for name in TASKS:
            state = store.load_task(name)
            if state.state is State.INTEGRATED:
                assert name not in integrated_by, (name, outputs)
                integrated_by[name] = clone
                assert state.attempts == ["001"]
            else:  # the other host's: never claimed here
                assert (state.state, state.attempts) == (State.READY, []), (name, outputs)
    assert sorted(integrated_by) == TASKS
    assert {*integrated_by.values()} == {*hosts}, "both hosts took tasks"

    git(first, "fetch", "-q", "origin")
    subjects = git(first, "log", "--first-parent", "--format=%s", "origin/main").splitlines()
    merged = Counter(line.removeprefix("arc: integrate ") for line in subjects
                     if line.startswith("arc: integrate "))  # fmt: skip
    assert merged == Counter(dict.fromkeys(TASKS, 1))  # every task integrated once
    for name in TASKS:
        assert git(first, "show", f"origin/main:{name}.txt") == f"{name} attempt 001"

    for clone, out in zip(hosts, outputs, strict=True):
        other = next(each for each in hosts if each != clone)
        refused = {name for name, by in integrated_by.items() if by == other}
        for name in TASKS:
            line = f"{name} claimed by host {names[other]} on origin (refs/arc-claims/{name}, "
            assert (line in out) == (name in refused), (name, out)
        holders = {
            name: json.loads(git(first, "log", "-1", "--format=%B",
                                 f"refs/arc-claims/{name}").splitlines()[2])["host"]
            for name in TASKS
            if not git(first, "fetch", "-q", "origin", f"+refs/arc-claims/{name}:"
                                                        f"refs/arc-claims/{name}")
        }  # fmt: skip
        assert holders == {name: names[by] for name, by in integrated_by.items()}
    print(
        f"\ntwo hosts: {len(TASKS)} tasks, {sum(ran.values())} attempts, "
        f"{sum(count - 1 for count in ran.values())} duplicate runs, "
        f"{sum(count - 1 for count in merged.values())} duplicate integrations, "
        f"{Counter(by.name for by in integrated_by.values())} by host, {elapsed:.1f} s"
    )


def test_the_worktree_starts_from_the_remote_branch_when_the_local_one_is_stale(
    tmp_path: Path,
) -> None:
    repo = make_git_repo(tmp_path)
    remote = tmp_path / "remote.git"
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"default": {"do": "result", "commit": True}}))
    write_config(repo, worker_exec_args(scenario))
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text(plan_toml(["t"]))
    arc(repo, "plan", "load", str(plan_file))
    arc(repo, "confirm", "p")
    # A local arc/t at main (an earlier attempt's, say), and on the remote an arc/t that has
    # moved on: pushed from another clone.
    git(repo, "branch", "arc/t", "main")
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(remote), str(other)], check=True)
    git(other, "config", "user.name", "other")
    git(other, "config", "user.email", "other@example.invalid")
    git(other, "checkout", "-q", "-b", "arc/t")
    (other / "earlier.txt").write_text("earlier work\n")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "earlier work")
    git(other, "push", "-q", "origin", "arc/t")
    earlier = git(other, "rev-parse", "HEAD")

    done = arc(repo, "run", "--once")

    task = ArcStore(repo).load_task("t")
    assert task.state == State.VERIFYING, done.stdout  # before: the push was rejected
    pushed = git(repo, "ls-remote", "origin", "refs/heads/arc/t").split()[0]
    assert pushed == task.head_sha
    assert git(repo, "merge-base", "--is-ancestor", earlier, pushed) == ""  # built on it
    log = (ArcStore(repo).attempt_dir("t", "001") / "worker.log").read_text()
    assert "lacked commits of origin/arc/t: the worktree starts from the remote's" in log
