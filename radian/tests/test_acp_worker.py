"""The ACP worker kind with the radian worker, through `radian arc` and real processes: the
wrapper starts arc's ACP client, the client starts `radian worker`, the worker calls a
scripted stand-in of the provider's HTTP API through the official client."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from acp_fixtures import REPLY_FEE_USD, StandIn, deliver_script, radian_worker_config
from acp_fixtures import stand_in as stand_in  # the fixture, for pytest to find
from click.testing import CliRunner, Result
from conftest import git

from radian.arc.store import ArcStore
from radian.cli import main

pytestmark = pytest.mark.timeout(240)


def arc(repo: Path, *args: str, fake_now: str = "2026-11-30T07:00:00Z") -> Result:
    return CliRunner().invoke(
        main, ["arc", "--repo", str(repo), *args], env={"RADIAN_ARC_FAKE_NOW": fake_now}
    )


def add_task(repo: Path, tmp_path: Path, name: str = "greet") -> None:
    brief = tmp_path / "brief.md"
    brief.write_text("# Add a greeting\n\nWrite GREETING.md, commit it and push the branch.\n")
    assert arc(repo, "plan", "add", "p").exit_code == 0
    assert arc(repo, "task", "add", "p", name, "--brief", str(brief)).exit_code == 0
    assert arc(repo, "confirm", "p").exit_code == 0


def attempts(repo: Path, task: str) -> list[dict[str, object]]:
    document = json.loads(arc(repo, "show", task, "--json").output)
    return list(document["attempts"])


def worker_log(repo: Path, task: str, attempt: str = "001") -> str:
    path = repo / ".radian" / "arc" / "runs" / task / "attempts" / attempt / "worker.log"
    return path.read_text(errors="replace")


@pytest.mark.parametrize("stand_in", ["anthropic", "openai"], indirect=True)
def test_a_task_is_delivered_and_integrated(
    git_repo: Path, tmp_path: Path, stand_in: StandIn
) -> None:
    radian_worker_config(git_repo, stand_in.provider, gate={"stages": []})
    add_task(git_repo, tmp_path)
    stand_in.script.extend(deliver_script("greet"))
    result = arc(git_repo, "run")
    assert "greet todo.ready -> doing.working (attempt 001)" in result.output, result.output
    task = ArcStore(git_repo).load_task("greet")
    assert str(task.state) == "done.integrated", result.output + worker_log(git_repo, "greet")
    git(git_repo, "fetch", "-q", "origin")
    assert git(git_repo, "show", "origin/main:GREETING.md") == "hello"
    attempt = attempts(git_repo, "greet")[0]
    assert attempt["outcome"] == "completed", attempts(git_repo, "greet")
    # three model replies in the turn, each billed by the stand-in
    assert attempt["cost_usd"] == pytest.approx(3 * REPLY_FEE_USD[stand_in.provider])
    log = worker_log(git_repo, "greet")
    assert "acp: session/new -> rw-" in log
    assert "acp: permission for 'write_file: GREETING.md' (edit): allowed" in log
    assert 'acp: permission for "run_command: git add -A' in log


def test_a_model_error_is_an_ordinary_retry_and_the_resumed_turn_costs_its_own_fee(
    git_repo: Path, tmp_path: Path, stand_in: StandIn
) -> None:
    radian_worker_config(git_repo)
    add_task(git_repo, tmp_path)
    # attempt 001: one reply, then the provider is overloaded (529)
    stand_in.script.extend(
        [{"tool": "write_file", "input": {"path": "NOTES.md", "content": "draft\n"}},
         {"status": 529, "error": "overloaded_error"}]
    )  # fmt: skip
    first = arc(git_repo, "run", "--once")
    assert first.exit_code == 0, first.output
    task = ArcStore(git_repo).load_task("greet")
    # _meta.radian.error is text with no kind: the ordinary retry rules, never a model wait
    assert str(task.state) == "todo.retry_wait"
    assert task.retry_count == 1
    (one,) = attempts(git_repo, "greet")
    assert one["outcome"] == "failed" and one["class"] == "model" and one["model_wait"] is False
    assert one["model_error"]["kind"] is None  # type: ignore[index]
    assert "529" in one["model_error"]["message"]  # type: ignore[index]
    assert one["cost_usd"] == pytest.approx(REPLY_FEE_USD["anthropic"])
    session = one["session_id"]
    assert isinstance(session, str) and session.startswith("rw-")

    # attempt 002, after the backoff: the same session, loaded; the task is delivered
    stand_in.script.extend(deliver_script("greet"))
    second = arc(git_repo, "run", "--once", fake_now="2026-11-30T07:05:00Z")
    assert second.exit_code == 0, second.output
    one, two = attempts(git_repo, "greet")
    assert two["session_id"] == session
    assert "acp: session/load " + session in worker_log(git_repo, "greet", "002")
    assert two["outcome"] == "completed"
    # the prompt turn's own fee, taken as it stands on a resumed session (never differenced)
    assert two["cost_usd"] == pytest.approx(3 * REPLY_FEE_USD["anthropic"])
    task = ArcStore(git_repo).load_task("greet")
    assert task.cost_usd == pytest.approx(4 * REPLY_FEE_USD["anthropic"])
    assert str(task.state) == "review.verifying"
    # the loaded session carried the first attempt's conversation to the model
    last = stand_in.requests[-1]["messages"]
    assert "NOTES.md" in json.dumps(last)


def test_a_refusal_is_refused_and_retried(
    git_repo: Path, tmp_path: Path, stand_in: StandIn
) -> None:
    radian_worker_config(git_repo)
    add_task(git_repo, tmp_path)
    stand_in.script.append({"text": "I can't help with that.", "stop": "refusal"})
    assert arc(git_repo, "run", "--once").exit_code == 0
    (attempt,) = attempts(git_repo, "greet")
    assert (attempt["outcome"], attempt["class"]) == ("refused", "model")
    assert str(ArcStore(git_repo).load_task("greet").state) == "todo.retry_wait"


def test_a_write_outside_the_worktree_is_refused(
    git_repo: Path, tmp_path: Path, stand_in: StandIn
) -> None:
    radian_worker_config(git_repo)
    add_task(git_repo, tmp_path)
    outside = tmp_path / "outside.txt"
    stand_in.script.extend(
        [{"tool": "write_file", "input": {"path": str(outside), "content": "escaped\n"}},
         {"tool": "run_command", "input": {"command": "cat > /dev/null; true", "cwd": "/"}},
         {"text": "I could not write it.", "stop": "end_turn"}]
    )  # fmt: skip
    assert arc(git_repo, "run", "--once").exit_code == 0
    assert not outside.exists()
    log = worker_log(git_repo, "greet")
    assert f"(edit): refused, outside the worktree: {outside}" in log
    results = stand_in.tool_results()
    assert results[0].startswith("refused by the client:")
    # completed without a delivery: the delivery check sends it to rework
    (attempt,) = attempts(git_repo, "greet")
    assert attempt["outcome"] == "completed"
    assert str(ArcStore(git_repo).load_task("greet").state) == "review.rework_pending"


def test_a_stall_stops_a_silent_worker(git_repo: Path, tmp_path: Path, stand_in: StandIn) -> None:
    # long enough for the worker to start on a loaded machine; the stand-in then never answers
    radian_worker_config(git_repo, worker={"stall_secs": 20.0})
    add_task(git_repo, tmp_path)
    stand_in.script.append({"hang": True})
    assert arc(git_repo, "run", "--once").exit_code == 0
    (attempt,) = attempts(git_repo, "greet")
    assert attempt["class"] == "stall"
    log = worker_log(git_repo, "greet")
    assert "acp: stop requested: session/cancel sent" in log
    assert "radian worker: session/cancel received" in log


@pytest.mark.acceptance
def test_cancel_mid_prompt_sends_session_cancel(
    git_repo: Path, tmp_path: Path, stand_in: StandIn, radian_bin: Path
) -> None:
    radian_worker_config(git_repo)
    add_task(git_repo, tmp_path)
    stand_in.script.append({"hang": True})
    runner = subprocess.Popen(
        [str(radian_bin), "arc", "--repo", str(git_repo), "run", "--once"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not stand_in.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert stand_in.requests, "the worker never asked the model"
        cancel = subprocess.run(
            [str(radian_bin), "arc", "--repo", str(git_repo), "cancel", "greet"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert cancel.returncode == 0, cancel.stdout + cancel.stderr
        output, _ = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert str(ArcStore(git_repo).load_task("greet").state) == "failed.cancelled", output
    log = worker_log(git_repo, "greet")
    assert "acp: stop requested: session/cancel sent" in log
    assert "radian worker: session/cancel received: the turn stops" in log
