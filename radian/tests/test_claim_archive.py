"""Integrated tasks' claims archived (issue 33, point 4; radian.arc.hosts, radian/docs/
hosts.md), with real git and a bare remote: the remote's refs (which every push reads) stay
bounded however many tasks are done, and a second host without a shared store still refuses
a task whose claim was archived, whatever order the archive and its claim come in (each order
driven one step at a time). Counted, not timed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from arc_helpers import make_plan, run_once
from conftest import git, make_git_repo, run_env, worker_exec_args, write_config
from gate_fixtures.arc_world import add_plan, run_arc, worker_args, worker_log, write_arc_config
from gate_fixtures.world import GitWorld
from test_claim_refs import Unreachable, other_clone, remote_claims
from test_hosts import RADIAN, TASKS, host, plan_toml

from radian.arc import git as arc_git
from radian.arc.clock import FakeClock
from radian.arc.config import load_config
from radian.arc.errors import ArcError
from radian.arc.hosts import Decision, RemoteClaims, default_host_name
from radian.arc.loop import Loop
from radian.arc.states import State
from radian.arc.store import ArcStore

pytestmark = pytest.mark.integration

ARCHIVE = "refs/arc-archive/claims"
Worker = Any


def archived(where: Path) -> dict[str, dict[str, Any]]:
    """task -> the claim the remote's archive holds for it (read in the bare remote)."""
    listed = subprocess.run(["git", "ls-tree", "--name-only", ARCHIVE], cwd=where,
                            capture_output=True, text=True, check=False).stdout  # fmt: skip
    return {
        name: arc_git.parse_claim(git(where, "cat-file", "blob", f"{ARCHIVE}:{name}"))
        for name in listed.split()
    }


def claim_refs(where: Path) -> set[str]:
    """The tasks whose claim ref the remote holds."""
    listed = git(where, "for-each-ref", "--format=%(refname)", "refs/arc-claims/")
    return {ref.removeprefix("refs/arc-claims/") for ref in listed.split()}


def refs_a_push_reads(repo: Path) -> int:
    """How many refs the remote advertises to a push from `repo` (git's packet trace)."""
    traced = {**os.environ, "GIT_TRACE_PACKET": "1"}
    done = subprocess.run(["git", "push", "--dry-run", "origin", "HEAD:refs/heads/probe"],
                          cwd=repo, env=traced, capture_output=True, text=True,
                          check=True)  # fmt: skip
    return len(re.findall(r"push< [0-9a-f]{40} refs/", done.stderr))


def setup(world: GitWorld, names: list[str], keep: int) -> None:
    scenario = {name: {"default": {"files": {f"{name}.txt": f"{name}\n"}}} for name in names}
    write_arc_config(world, worker_args(world, scenario), stages=("commands",))
    config = world.repo / ".radian" / "arc.toml"
    config.write_text(config.read_text() + f"[cleanup]\nkeep_integrated_branches = {keep}\n")


def test_a_push_reads_no_more_refs_after_2n_tasks_than_after_n(
    world: GitWorld, clock: FakeClock
) -> None:
    first, second = [f"a{n}" for n in range(1, 5)], [f"b{n}" for n in range(1, 5)]
    setup(world, first + second, keep=1)
    add_plan(world, clock, first, plan="p1")
    run_arc(world, clock)
    after_n = refs_a_push_reads(world.repo)
    add_plan(world, clock, second, plan="p2")
    run_arc(world, clock)

    store = ArcStore(world.repo)
    tasks = [store.load_task(name) for name in first + second]
    assert {task.state for task in tasks} == {State.INTEGRATED}
    # Before: every task's claim ref stayed on the remote, 4 more refs for 4 more tasks.
    assert refs_a_push_reads(world.repo) == after_n
    # The claim refs left are those not archived yet: the newest task's (keep 1), which the
    # next batch archives with its branch; the archive holds every other one, this host's.
    newest = max(tasks, key=lambda task: (task.updated_at, task.name)).name
    assert claim_refs(world.remote) == {newest}
    host = default_host_name(world.repo)
    held = archived(world.remote)
    assert set(held) == set(first + second) - {newest}
    assert {(claim["host"], claim["task"]) for claim in held.values()} == {
        (host, name) for name in held
    }
    assert set(git(world.remote, "for-each-ref", "--format=%(refname)").split()) == {
        "refs/heads/main",
        ARCHIVE,
        f"refs/heads/arc/{newest}",
        f"refs/arc-claims/{newest}",
    }


def test_a_second_host_without_a_shared_store_refuses_a_task_whose_claim_was_archived(
    world: GitWorld, clock: FakeClock
) -> None:
    names = ["t1", "t2", "t3"]
    setup(world, names, keep=0)
    add_plan(world, clock, names)
    run_arc(world, clock)
    assert claim_refs(world.remote) == set()  # every claim archived
    host_a = default_host_name(world.repo)
    held = archived(world.remote)
    assert set(held) == set(names)
    ran = worker_log(world)
    assert len(ran) == 3
    # Host b: its own clone, the same config and plan, loaded and confirmed there.
    b = replace(world, repo=world.other)
    (b.repo / ".radian").mkdir()
    shutil.copy(world.repo / ".radian" / "arc.toml", b.repo / ".radian" / "arc.toml")
    add_plan(b, clock, names)

    lines = run_arc(b, clock)

    for name in names:
        since = held[name]["claimed_at"]
        assert (f"{name} claimed by host {host_a} on origin (refs/arc-archive/claims:{name}, "
                f"since {since}) -> not run here") in lines, lines  # fmt: skip
    store = ArcStore(b.repo)
    for name in names:
        task = store.load_task(name)
        assert (task.state, task.attempts) == (State.READY, [])
    assert worker_log(world) == ran  # no worker started on host b
    assert claim_refs(world.remote) == set()  # b's claim refs went again
    assert archived(world.remote) == held
    with pytest.raises(ArcError) as refused:
        Loop(store, load_config(b.repo), clock, echo=lambda line: None).start("t1")
    assert str(refused.value) == (
        f"t1 is claimed by host {host_a} on origin (refs/arc-archive/claims:t1): "
        "only that host runs it"
    )
    assert refused.value.exit_code == 1


def hosts(repo: Path, clock: FakeClock) -> tuple[RemoteClaims, RemoteClaims, Path]:
    """Host a in `repo`, host b in a clone of its remote (and that clone)."""
    other = other_clone(repo)
    host_a = RemoteClaims(repo, "origin", "host-a", clock)
    return host_a, RemoteClaims(other, "origin", "host-b", clock), other


def said(decision: Decision) -> tuple[str, str, str | None]:
    return decision.kind, decision.host, decision.ref


def meanwhile(
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    when: Callable[..., bool],
    act: Callable[..., Any],
    *,
    after: bool = False,
) -> list[Any]:
    """Force another host's step between two of this host's: the first time
    `radian.arc.git.<name>` is called with arguments `when` accepts, `act` runs with the
    same arguments, just before the real call (just after it, with `after`). Returns the
    list that then holds what `act` returned."""
    real = getattr(arc_git, name)
    acted: list[Any] = []

    def interposed(*args: Any) -> Any:
        due = not acted and when(*args)
        if due and not after:
            acted.append(act(*args))
        result = real(*args)
        if due and after:
            acted.append(act(*args))
        return result

    monkeypatch.setattr(arc_git, name, interposed)
    return acted


def test_a_claim_made_between_the_archive_write_and_the_claim_delete_is_refused(
    git_repo: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = git_repo.parent / "remote.git"
    host_a, host_b, other = hosts(git_repo, clock)
    assert host_a.take("t", "p").kind == "ours"
    clock.advance(60)
    # Host a: its archive written, its ref not deleted yet; host b takes t then.
    between = meanwhile(
        monkeypatch,
        "_delete_claim_refs",
        lambda repo, *_: repo == git_repo,
        lambda *_: (set(archived(remote)), claim_refs(remote), host_b.take("t", "p")),
    )

    assert arc_git.archive_claims(git_repo, "origin", "host-a", ["t"]) == {"t"}

    in_archive, refs_then, decision = between[0]
    assert (in_archive, refs_then) == ({"t"}, {"t"})
    assert said(decision) == ("elsewhere", "host-a", "refs/arc-claims/t")
    # After the delete: host b's create succeeds, and the archive it reads then holds t.
    after = host_b.take("t", "p")
    assert said(after) == ("elsewhere", "host-a", "refs/arc-archive/claims:t")
    assert after.holder is not None and after.holder["claimed_at"] == "2026-11-30T07:00:00Z"
    assert claim_refs(remote) == set()  # host b's claim ref went again
    assert arc_git.rev_parse(other, "refs/arc-claims/t") is None  # and its copy there


def test_a_claim_deleted_between_a_refused_create_and_its_read_is_found_in_the_archive(
    git_repo: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = git_repo.parent / "remote.git"
    host_a, host_b, other = hosts(git_repo, clock)
    assert host_a.take("t", "p").kind == "ours"
    # Host b's create refused by t's ref; host a archives t before b reads the claim.
    archived_meanwhile = meanwhile(
        monkeypatch,
        "read_claim",
        lambda repo, *_: repo == other,
        lambda repo, where, task: arc_git.archive_claims(git_repo, where, "host-a", [task]),
    )

    decision = host_b.take("t", "p")

    assert archived_meanwhile == [{"t"}]
    assert said(decision) == ("elsewhere", "host-a", "refs/arc-archive/claims:t")
    assert claim_refs(remote) == set()


def test_two_hosts_archiving_at_once_lose_neither_write(
    git_repo: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = git_repo.parent / "remote.git"
    host_a, host_b, other = hosts(git_repo, clock)
    assert host_a.take("t", "p").kind == "ours"
    assert host_b.take("u", "p").kind == "ours"
    # Host a read the archive; host b writes its own before a writes.
    raced = meanwhile(
        monkeypatch,
        "fetch_archive",
        lambda repo, *_: repo == git_repo,
        lambda repo, where: arc_git.archive_claims(other, where, "host-b", ["u"]),
        after=True,
    )

    assert arc_git.archive_claims(git_repo, "origin", "host-a", ["t"]) == {"t"}

    assert raced == [{"u"}]
    assert {name: claim["host"] for name, claim in archived(remote).items()} == {
        "t": "host-a",
        "u": "host-b",
    }
    assert claim_refs(remote) == set()
    # The archive is one line of commits: a's on b's.
    assert git(remote, "rev-list", "--count", ARCHIVE) == "2"


def test_a_host_archives_only_its_own_claims_and_keeps_the_first_entry(
    git_repo: Path, clock: FakeClock
) -> None:
    remote = git_repo.parent / "remote.git"
    host_a, host_b, other = hosts(git_repo, clock)
    assert host_b.take("u", "p").kind == "ours"
    assert arc_git.archive_claims(git_repo, "origin", "host-a", ["u", "missing"]) == set()
    assert claim_refs(remote) == {"u"}
    assert archived(remote) == {}
    assert remote_claims(git_repo) == {"u": "host-b"}


def test_a_claim_ref_left_when_the_archive_could_not_be_read_is_checked_again(
    git_repo: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = git_repo.parent / "remote.git"
    host_a, host_b, other = hosts(git_repo, clock)
    assert host_a.take("t", "p").kind == "ours"
    assert arc_git.archive_claims(git_repo, "origin", "host-a", ["t"]) == {"t"}

    def unreachable(repo: Path, where: str) -> str | None:
        raise arc_git.GitError(["fetch", where], repo, 128, "the remote went away")

    with monkeypatch.context() as patched:
        patched.setattr(arc_git, "fetch_archive", unreachable)
        deferred = host_b.take("t", "p")
    assert deferred.kind == "unreachable"  # its claim ref made, the archive not read
    assert claim_refs(remote) == {"t"}

    again = RemoteClaims(other, "origin", "host-b", clock).take("t", "p")  # a later run

    assert said(again) == ("elsewhere", "host-a", "refs/arc-archive/claims:t")
    assert claim_refs(remote) == set()


def test_the_wrapper_refuses_an_archived_task_the_run_could_not_ask_about(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, tmp_path: Path
) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "result", "commit": True}}))
    make_plan(git_repo, clock, ["t", "u"])
    other = other_clone(git_repo)
    assert RemoteClaims(other, "origin", "host-b", clock).take("t", "p").may_claim
    assert arc_git.archive_claims(other, "origin", "host-b", ["t"]) == {"t"}

    lines = run_once(git_repo, clock, claims=Unreachable())

    why = "the task is claimed by host host-b on origin (refs/arc-archive/claims:t): not run here"
    assert f"t attempt 001 (infrastructure): {why}" in lines
    ran = (tmp_path / "ran.log").read_text().splitlines()
    assert [line.split()[0] for line in ran] == ["u"]  # t's worker never started
    remote = git_repo.parent / "remote.git"
    assert claim_refs(remote) == {"u"}  # the wrapper's claim ref of t went again
    assert archived(remote)["t"]["host"] == "host-b"


@pytest.mark.acceptance
@pytest.mark.timeout(600)
def test_two_hosts_archiving_as_they_go_run_and_integrate_every_task_once(
    tmp_path: Path,
) -> None:
    """test_hosts' two hosts, each archiving its claims as soon as a task is integrated
    (`keep_integrated_branches = 0`), so archives, deletes and the other host's claims meet
    on the remote while both run: every task still runs once, and no claim ref is left."""
    make_git_repo(tmp_path)
    remote = tmp_path / "remote.git"
    scenario = tmp_path / "scenario.json"
    then = {"do": "result", "commit": True, "file": "{task}.txt", "cost": 0.01}
    scenario.write_text(json.dumps({"default": {"do": "sleep", "secs": 0.3, "then": then}}))
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text(plan_toml(TASKS))
    clones = [host(tmp_path, name, remote, worker_exec_args(scenario), plan_file)
              for name in ("a", "b")]  # fmt: skip
    for clone in clones:
        config = clone / ".radian" / "arc.toml"
        config.write_text(config.read_text() + "[cleanup]\nkeep_integrated_branches = 0\n")
    names = {clone: default_host_name(clone) for clone in clones}

    runs = [subprocess.Popen([RADIAN, "arc", "run"], cwd=clone, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, env=run_env())
            for clone in clones]  # fmt: skip
    outputs = [run.communicate(timeout=480)[0] for run in runs]
    for run, out in zip(runs, outputs, strict=True):
        assert run.returncode == 0, out

    ran = Counter(line.split()[0] for line in (tmp_path / "ran.log").read_text().splitlines())
    assert ran == Counter(dict.fromkeys(TASKS, 1)), (ran, outputs)  # every task run once
    integrated_by = {
        name: clone
        for clone in clones
        for name in TASKS
        if ArcStore(clone).load_task(name).state is State.INTEGRATED
    }
    assert sorted(integrated_by) == TASKS, outputs  # each integrated on one host only
    assert sum(len(ArcStore(clone).names_in(State.INTEGRATED)) for clone in clones) == 12
    git(clones[0], "fetch", "-q", "origin")
    subjects = git(clones[0], "log", "--first-parent", "--format=%s", "origin/main")
    merged = Counter(line.removeprefix("arc: integrate ") for line in subjects.splitlines()
                     if line.startswith("arc: integrate "))  # fmt: skip
    assert merged == Counter(dict.fromkeys(TASKS, 1))  # every task integrated once
    # Every claim archived by the host that integrated its task, none left as a ref.
    assert claim_refs(remote) == set(), outputs
    assert {name: claim["host"] for name, claim in archived(remote).items()} == {
        name: names[clone] for name, clone in integrated_by.items()
    }
    for clone, out in zip(clones, outputs, strict=True):
        other = next(each for each in clones if each != clone)
        for name in TASKS:
            said_so = re.search(
                rf"^{name} claimed by host {re.escape(names[other])} on origin "
                rf"\((refs/arc-claims/{name}|refs/arc-archive/claims:{name}), since ",
                out,
                re.MULTILINE,
            )
            assert (said_so is not None) == (integrated_by[name] == other), (name, out)


def test_a_remote_out_of_reach_archives_nothing_and_a_later_clean_up_does(
    git_repo: Path, clock: FakeClock
) -> None:
    remote = git_repo.parent / "remote.git"
    host_a = RemoteClaims(git_repo, "origin", "host-a", clock)
    assert host_a.take("t", "p").kind == "ours"
    remote.rename(git_repo.parent / "away.git")
    assert arc_git.archive_claims(git_repo, "origin", "host-a", ["t"]) == set()
    (git_repo.parent / "away.git").rename(remote)
    assert claim_refs(remote) == {"t"} and archived(remote) == {}
    assert arc_git.rev_parse(git_repo, "refs/arc-claims/t") is not None  # the copy stays too

    assert arc_git.archive_claims(git_repo, "origin", "host-a", ["t"]) == {"t"}
    assert claim_refs(remote) == set() and set(archived(remote)) == {"t"}
    assert arc_git.rev_parse(git_repo, "refs/arc-claims/t") is None
