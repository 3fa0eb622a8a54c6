"""Claims on the remote (radian.arc.hosts, issue 31 point 2), with real git: the first host to
take a task holds it, a second is told who; a remote that refuses the refs, or cannot be
reached, says so; a claim the run could not take is taken by the attempt's wrapper before its
worker starts; `start` refuses a task another host holds."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from arc_helpers import attempt_result, make_plan, run_once, task
from conftest import git, write_config

from radian.arc import git as arc_git
from radian.arc.clock import FakeClock
from radian.arc.config import load_config
from radian.arc.errors import ArcError
from radian.arc.hosts import Decision, RemoteClaims, default_host_name
from radian.arc.loop import Loop
from radian.arc.states import State
from radian.arc.store import ArcStore

pytestmark = pytest.mark.integration

Worker = Callable[..., list[str]]


def other_clone(repo: Path) -> Path:
    clone = repo.parent / "other"
    subprocess.run(["git", "clone", "-q", str(repo.parent / "remote.git"), str(clone)],
                   check=True)  # fmt: skip
    return clone


def remote_claims(repo: Path) -> dict[str, str]:
    """task -> the host the remote's claim ref names."""
    listed = git(repo, "ls-remote", "origin", "refs/arc-claims/*")
    found = {}
    for line in listed.splitlines():
        name = line.split("\t")[1].removeprefix("refs/arc-claims/")
        holder = arc_git.read_claim(repo, "origin", name)
        assert holder is not None
        found[name] = holder["host"]
    return found


def test_the_first_host_takes_a_task_and_a_second_is_told_who_has_it(
    git_repo: Path, clock: FakeClock
) -> None:
    other = other_clone(git_repo)
    host_a = RemoteClaims(git_repo, "origin", "host-a", clock)
    host_b = RemoteClaims(other, "origin", "host-b", clock)

    assert host_a.take("t", "p").kind == "ours"
    clock.advance(60)
    refused = host_b.take("t", "p")
    assert (refused.kind, refused.may_claim, refused.host) == ("elsewhere", False, "host-a")
    assert refused.holder == {"host": "host-a", "task": "t", "plan": "p",
                              "claimed_at": "2026-11-30T07:00:00Z"}  # fmt: skip
    assert refused.ref == "refs/arc-claims/t"
    # A later run of host a: the claim it took is still its own.
    assert RemoteClaims(git_repo, "origin", "host-a", clock).take("t", "p").kind == "ours"
    assert host_b.take("u", "p").kind == "ours"
    assert remote_claims(git_repo) == {"t": "host-a", "u": "host-b"}


REFUSE_CLAIMS = """#!/bin/sh
while read old new ref; do
  case "$ref" in refs/arc-claims/*) echo "no custom refs here" >&2; exit 1;; esac
done
"""


def test_a_remote_that_refuses_the_claim_refs_says_so(git_repo: Path, clock: FakeClock) -> None:
    hook = git_repo.parent / "remote.git" / "hooks" / "pre-receive"
    hook.write_text(REFUSE_CLAIMS)
    hook.chmod(0o755)
    refused = RemoteClaims(git_repo, "origin", "host-a", clock).take("t", "p")
    assert (refused.kind, refused.may_claim) == ("refused", False)
    assert "pre-receive hook declined" in (refused.detail or "")


def test_an_unreachable_remote_leaves_the_claim_to_the_attempt(
    git_repo: Path, clock: FakeClock
) -> None:
    (git_repo.parent / "remote.git").rename(git_repo.parent / "away.git")
    deferred = RemoteClaims(git_repo, "origin", "host-a", clock).take("t", "p")
    assert (deferred.kind, deferred.may_claim) == ("unreachable", True)
    assert deferred.claim == {"host": "host-a", "task": "t", "plan": "p",
                              "claimed_at": "2026-11-30T07:00:00Z"}  # fmt: skip


class Unreachable:
    """Claims whose remote the run could not reach: every claim is left to the attempt."""

    host = "host-a"
    where = "origin"

    def take(self, task: str, plan: str) -> Decision:
        claim: dict[str, Any] = {"host": self.host, "task": task, "plan": plan,
                                 "claimed_at": "2026-11-30T07:00:00Z"}  # fmt: skip
        return Decision("unreachable", detail="no network", claim=claim,
                        ref=arc_git.claim_ref(task))  # fmt: skip


def test_the_wrapper_takes_a_claim_the_run_could_not_and_never_runs_a_task_held_elsewhere(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, tmp_path: Path
) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "result", "commit": True}}))
    make_plan(git_repo, clock, ["t", "u"])
    assert RemoteClaims(other_clone(git_repo), "origin", "host-b", clock).take("t", "p").may_claim

    lines = run_once(git_repo, clock, claims=Unreachable())

    why = "the task is claimed by host host-b on origin (refs/arc-claims/t): not run here"
    assert f"t attempt 001 (infrastructure): {why}" in lines
    assert attempt_result(git_repo, "t", "001")["reason"] == why
    ran = (tmp_path / "ran.log").read_text().splitlines()
    assert [line.split()[0] for line in ran] == ["u"]  # t's worker never started
    assert task(git_repo, "u").state == State.VERIFYING
    assert remote_claims(git_repo) == {"t": "host-b", "u": "host-a"}
    log = (ArcStore(git_repo).attempt_dir("u", "001") / "worker.log").read_text()
    assert "took refs/arc-claims/u on origin (the run could not reach it)" in log


def test_run_refuses_once_and_start_refuses_a_task_another_host_holds(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, tmp_path: Path
) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "result", "commit": True}}))
    store = make_plan(git_repo, clock, ["t", "u"])
    assert RemoteClaims(other_clone(git_repo), "origin", "host-b", clock).take("t", "p").may_claim
    config = load_config(git_repo)

    lines = Loop(store, config, clock, echo=lambda line: None).run().lines

    refusal = ("t claimed by host host-b on origin (refs/arc-claims/t, since "
               "2026-11-30T07:00:00Z) -> not run here")  # fmt: skip
    assert lines.count(refusal) == 1, lines
    assert task(git_repo, "u").state == State.VERIFYING
    with pytest.raises(ArcError) as refused:
        Loop(store, config, clock, echo=lambda line: None).start("t")
    assert str(refused.value) == (
        "t is claimed by host host-b on origin (refs/arc-claims/t): only that host runs it"
    )
    assert refused.value.exit_code == 1
    held = task(git_repo, "t")
    assert (held.state, held.attempts) == (State.READY, [])
    assert not (tmp_path / "ran.log").read_text().startswith("t ")
    assert remote_claims(git_repo) == {"t": "host-b", "u": default_host_name(git_repo)}


def test_without_claim_refs_nothing_is_marked_on_the_remote(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "result", "commit": True}}),
                 hosts={"claim_refs": False})  # fmt: skip
    make_plan(git_repo, clock, ["t"])
    run_once(git_repo, clock)
    assert task(git_repo, "t").state == State.VERIFYING
    assert git(git_repo, "ls-remote", "origin", "refs/arc-claims/*") == ""


def test_a_claims_message_is_read_back_whatever_it_holds() -> None:
    claim = {"host": "h", "task": "t"}
    assert arc_git.parse_claim(f"arc claim t\n\n{json.dumps(claim)}\n") == claim
    assert arc_git.parse_claim("arc claim t\n\nnot json\n") == {"host": "an unknown host"}
