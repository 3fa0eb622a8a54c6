"""run_attempt and stop_attempt end to end: real repositories, real wrapper, scripted workers."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from worker_fixtures import (
    ArcRepo,
    arc_repo,
    emit_file,
    git,
    misbehaving_worker,
    result_worker,
)

from radian.arc.clock import FakeClock
from radian.arc.worker import AttemptEnd, AttemptSpec, ModelError, run_attempt, stop_attempt

pytestmark = pytest.mark.integration

__all__ = ["arc_repo"]

NOW = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)


def completed(session_id: str = "s-1", cost: float = 0.5) -> dict[str, object]:
    return {"type": "result", "outcome": "completed", "session_id": session_id, "cost_usd": cost}


def test_completed_committed_and_pushed_is_delivered(arc_repo: ArcRepo, tmp_path: Path) -> None:
    emit = emit_file(tmp_path, completed())
    spec = arc_repo.spec(result_worker("--commit", "work.txt", "--push", "--emit", str(emit)))
    clock = FakeClock(NOW)
    end = run_attempt(spec, clock)
    assert end.result is not None
    assert (end.result.outcome, end.result.format, end.result.session_cost_usd) == (
        "completed",
        "radian",
        0.5,
    )
    assert end.delivery is not None and end.delivery.ok and end.delivery.reason is None
    assert end.delivery.base_sha == git(arc_repo.root, "rev-parse", "origin/main")
    assert end.delivery.head_sha == arc_repo.remote_sha("arc/t1")
    assert (end.wrapper_class, end.exit_code, end.worker_started) == (None, 0, True)
    assert end.session_id == "s-1"
    assert (end.started_at, end.ended_at) == ("2026-11-30T07:00:00Z", "2026-11-30T07:00:00Z")


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ((), "no_commits"),
        (("--commit", "work.txt"), "not_pushed"),
        (("--commit", "work.txt", "--push", "--dirty"), "uncommitted_changes"),
    ],
)
def test_completed_but_not_delivered(
    arc_repo: ArcRepo, tmp_path: Path, options: tuple[str, ...], reason: str
) -> None:
    emit = emit_file(tmp_path, completed())
    end = run_attempt(arc_repo.spec(result_worker(*options, "--emit", str(emit))), FakeClock())
    assert end.delivery is not None
    assert (end.delivery.ok, end.delivery.reason) == (False, reason)


def test_no_delivery_check_for_other_outcomes(arc_repo: ArcRepo, tmp_path: Path) -> None:
    emit = emit_file(tmp_path, {"type": "result", "outcome": "incomplete", "session_id": "s"})
    end = run_attempt(arc_repo.spec(result_worker("--emit", str(emit))), FakeClock())
    assert end.result is not None and end.result.outcome == "incomplete"
    assert end.delivery is None


def test_claude_json_result(arc_repo: ArcRepo, tmp_path: Path) -> None:
    emit = emit_file(
        tmp_path,
        {
            "type": "result",
            "subtype": "error_max_turns",
            "is_error": True,
            "session_id": "claude-1",
            "total_cost_usd": 2.5,
        },
    )
    end = run_attempt(arc_repo.spec(result_worker("--emit", str(emit))), FakeClock())
    assert end.result is not None
    assert (end.result.outcome, end.result.format, end.result.session_cost_usd) == (
        "incomplete",
        "claude",
        2.5,
    )
    assert end.session_id == "claude-1"


def test_claude_stream_json_usage_limit_uses_the_clock(arc_repo: ArcRepo, tmp_path: Path) -> None:
    resets_at = int(NOW.timestamp()) + 900
    emit = emit_file(
        tmp_path,
        {"type": "system", "subtype": "init", "session_id": "claude-2"},
        {
            "type": "rate_limit_event",
            "rate_limit_info": {"status": "rejected", "resetsAt": resets_at},
        },
        {
            "type": "result",
            "subtype": "success",
            "is_error": True,
            "api_error_status": 429,
            "result": "You've hit your limit",
            "session_id": "claude-2",
            "total_cost_usd": 0.1,
        },
    )
    end = run_attempt(arc_repo.spec(result_worker("--emit", str(emit))), FakeClock(NOW))
    assert end.result is not None
    assert end.result.outcome == "failed"
    assert end.result.model_error == ModelError("usage_limit", 900.0, "You've hit your limit")


def test_brief_placeholders_and_environment_fresh(arc_repo: ArcRepo, tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    brief = "# Brief\nAdd the feature.\n"
    spec = arc_repo.spec(
        result_worker(
            "--record",
            str(record),
            "{resume_args}",
            "brief={brief_file}",
            "{worktree}",
            "{task}/{attempt_id}",
            "session={session_id}",
        ),
        brief=brief,
    )
    end = run_attempt(spec, FakeClock())
    seen = json.loads(record.read_text())
    worktree = str(arc_repo.root / ".radian" / "arc" / "worktrees" / "t1")
    brief_file = str(arc_repo.attempt_dir("t1", "a1").resolve() / "brief.md")
    assert seen["argv"][2:] == [f"brief={brief_file}", worktree, "t1/a1", "session="]
    # issue 15: arc appends the delivery instructions: the branch, the remote, the literal push
    handed = seen["stdin"]
    assert handed.startswith(brief) and seen["brief_file_text"] == handed
    assert "## Delivery (written by radian arc)" in handed
    assert "\n       git push origin HEAD:arc/t1\n" in handed and "$" not in handed
    assert seen["cwd"] == worktree
    assert seen["env"] == {
        "RADIAN_ARC_BRIEF_FILE": brief_file,
        "RADIAN_ARC_TASK": "t1",
        "RADIAN_ARC_ATTEMPT": "a1",
        "RADIAN_ARC_SESSION_ID": "",
        "RADIAN_ARC_WORKTREE": worktree,
        "RADIAN_ARC_BASE_SHA": git(arc_repo.root, "rev-parse", "origin/main"),
        "RADIAN_ARC_BRANCH": "arc/t1",
        "RADIAN_ARC_REMOTE": "origin",
    }
    assert end.session_id is None  # no Result, and nothing to resume


def test_resume_passes_the_previous_session(arc_repo: ArcRepo, tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    spec = arc_repo.spec(
        result_worker("--record", str(record), "{resume_args}", "--exit", "1"),
        resume_session_id="sess-41",
    )
    end = run_attempt(spec, FakeClock())
    seen = json.loads(record.read_text())
    assert seen["argv"][2:] == ["--resume", "sess-41", "--exit", "1"]
    assert seen["env"]["RADIAN_ARC_SESSION_ID"] == "sess-41"
    # no Result: the attempt ran in the session it resumed
    assert (end.result, end.session_id, end.exit_code) == (None, "sess-41", 1)


def test_a_fresh_config_ignores_the_previous_session(arc_repo: ArcRepo, tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    spec = arc_repo.spec(
        result_worker("--record", str(record), "{resume_args}"),
        resume_session_id="sess-41",
        session="fresh",
    )
    end = run_attempt(spec, FakeClock())
    seen = json.loads(record.read_text())
    assert seen["argv"][2:] == []
    assert seen["env"]["RADIAN_ARC_SESSION_ID"] == ""
    assert end.session_id is None


def test_a_retry_continues_the_task_branch(arc_repo: ArcRepo, tmp_path: Path) -> None:
    first = run_attempt(
        arc_repo.spec(result_worker("--commit", "first.txt", "--push")), FakeClock()
    )
    assert first.worker_started
    record = tmp_path / "record.json"
    second = run_attempt(
        arc_repo.spec(result_worker("--record", str(record)), attempt_id="a2"), FakeClock()
    )
    assert second.worker_started
    assert "first.txt" in json.loads(record.read_text())["files"]


def test_a_relative_program_is_found_from_the_repository_root(arc_repo: ArcRepo) -> None:
    tools = arc_repo.root / "tools"
    tools.mkdir()
    worker = tools / "worker.sh"
    worker.write_text('#!/bin/sh\necho \'{"type": "result", "outcome": "refused"}\'\n')
    worker.chmod(0o755)
    end = run_attempt(arc_repo.spec(["tools/worker.sh"]), FakeClock())
    assert end.result is not None and end.result.outcome == "refused"


def test_start_mid_merge_hands_the_conflict_to_the_worker(
    arc_repo: ArcRepo, tmp_path: Path
) -> None:
    worktree = arc_repo.root / ".radian" / "arc" / "worktrees" / "t1"
    run_attempt(arc_repo.spec(result_worker("--commit", "README.md", "--push")), FakeClock())
    assert (worktree / "README.md").read_text() == "README.md\n"
    arc_repo.commit("README.md", "main's new README\n")
    record = tmp_path / "record.json"
    emit = emit_file(tmp_path, completed())
    spec = arc_repo.spec(
        result_worker(
            "--record", str(record), "--commit", "merged.txt", "--push", "--emit", str(emit)
        ),
        attempt_id="a2",
        start_mid_merge=True,
    )
    end = run_attempt(spec, FakeClock())
    seen = json.loads(record.read_text())
    assert seen["merge_head"] is True and seen["conflicts"] == ["README.md"]
    assert end.delivery is not None and end.delivery.ok
    main_sha = git(arc_repo.root, "rev-parse", "origin/main")
    assert git(worktree, "merge-base", "--is-ancestor", main_sha, "HEAD") == ""


def run_in_thread(spec: AttemptSpec) -> tuple[threading.Thread, list[AttemptEnd]]:
    ends: list[AttemptEnd] = []
    thread = threading.Thread(target=lambda: ends.append(run_attempt(spec, FakeClock())))
    thread.start()
    return thread, ends


def wait_for_worker(attempt_dir: Path, says: str = "misbehaving") -> None:
    """Until the worker has printed `says` (it runs, and has done what comes before)."""
    log = attempt_dir / "worker.log"
    deadline = time.monotonic() + 20
    while not (log.exists() and says in log.read_text()):
        assert time.monotonic() < deadline, f"the worker never said {says!r}"
        time.sleep(0.02)


def test_stop_attempt_from_another_thread(arc_repo: ArcRepo) -> None:
    spec = arc_repo.spec(misbehaving_worker("silent"), term_grace_secs=1)
    thread, ends = run_in_thread(spec)
    wait_for_worker(spec.attempt_dir)
    assert stop_attempt(spec.attempt_dir) is True
    thread.join(timeout=20)
    assert ends and ends[0].wrapper_class == "cancelled"
    assert (ends[0].worker_started, ends[0].exit_code, ends[0].result) == (True, -15, None)
    assert stop_attempt(spec.attempt_dir) is False  # nothing runs any more


def test_stop_attempt_kills_a_worker_ignoring_sigterm(arc_repo: ArcRepo) -> None:
    spec = arc_repo.spec(misbehaving_worker("ignore_sigterm"), term_grace_secs=0.5)
    thread, ends = run_in_thread(spec)
    wait_for_worker(spec.attempt_dir, says="ignoring SIGTERM")
    assert stop_attempt(spec.attempt_dir) is True
    thread.join(timeout=20)
    assert ends and (ends[0].wrapper_class, ends[0].exit_code) == ("cancelled", -9)


def test_stop_attempt_from_another_process(arc_repo: ArcRepo) -> None:
    spec = arc_repo.spec(misbehaving_worker("silent"), term_grace_secs=1)
    thread, ends = run_in_thread(spec)
    wait_for_worker(spec.attempt_dir)
    stopper = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from radian.arc.worker import stop_attempt;"
            "print(stop_attempt(Path(sys.argv[1])))",
            str(spec.attempt_dir),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    thread.join(timeout=20)
    assert stopper.stdout.strip() == "True"
    assert ends and ends[0].wrapper_class == "cancelled"


def test_stop_attempt_finds_a_wrapper_no_pid_file_names(arc_repo: ArcRepo) -> None:
    """A `run` killed between starting the wrapper and writing wrapper.pid leaves a wrapper
    no file names. Recovery's stop finds it by its command line and stops it, so its
    worker does not go on for an attempt recovery has ended (before: False, and the
    worker ran on)."""
    spec = arc_repo.spec(misbehaving_worker("silent"), term_grace_secs=1)
    thread, ends = run_in_thread(spec)
    wait_for_worker(spec.attempt_dir)
    (spec.attempt_dir / "wrapper.pid").unlink()  # as if it had never been written
    assert stop_attempt(spec.attempt_dir) is True
    thread.join(timeout=20)
    assert not thread.is_alive()
    assert ends and ends[0].wrapper_class == "cancelled"
    assert stop_attempt(spec.attempt_dir) is False  # nothing runs any more


def test_stop_attempt_with_nothing_running(arc_repo: ArcRepo, tmp_path: Path) -> None:
    assert stop_attempt(tmp_path / "no-attempt") is False
    # a pid file left behind by a process that is gone is not an attempt
    stale = tmp_path / "stale"
    stale.mkdir()
    (stale / "wrapper.pid").write_text("999999999\n")
    assert stop_attempt(stale) is False
    # nor is a live process that is not this attempt's wrapper
    (stale / "wrapper.pid").write_text(f"{__import__('os').getpid()}\n")
    assert stop_attempt(stale) is False


def test_an_attempt_dir_run_again_starts_clean(arc_repo: ArcRepo, tmp_path: Path) -> None:
    emit = emit_file(tmp_path, completed())
    first = run_attempt(arc_repo.spec(result_worker("--emit", str(emit))), FakeClock())
    assert first.result is not None
    again = run_attempt(arc_repo.spec(misbehaving_worker("crash")), FakeClock())
    assert (again.result, again.exit_code) == (None, 1)
    assert "outcome" not in again.log_path.read_text()
