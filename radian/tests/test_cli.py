"""The `radian arc` command line through Click's CliRunner, and a few real subprocess runs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from arc_helpers import task
from click.testing import CliRunner, Result
from conftest import run_env, write_config

from radian.arc.config import DEFAULT_CONFIG
from radian.arc.store import ArcStore
from radian.cli import main

pytestmark = pytest.mark.acceptance

Worker = Callable[..., list[str]]
RADIAN = str(Path(sys.executable).parent / "radian")
ISO_UTC = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"


def arc(repo: Path, *args: str, fake_now: str = "2026-11-30T07:00:00Z") -> Result:
    runner = CliRunner()
    return runner.invoke(
        main, ["arc", "--repo", str(repo), *args], env={"RADIAN_ARC_FAKE_NOW": fake_now}
    )


@pytest.fixture
def brief(tmp_path: Path) -> Path:
    path = tmp_path / "brief.md"
    path.write_text("# Add a greeting\n\nPrint hello.\n")
    return path


def test_init_writes_the_commented_default_once(git_repo: Path) -> None:
    result = arc(git_repo, "init")
    assert (result.exit_code, result.output) == (0, "wrote .radian/arc.toml\n")
    assert (git_repo / ".radian" / "arc.toml").read_text() == DEFAULT_CONFIG
    again = arc(git_repo, "init")
    assert again.output == ".radian/arc.toml exists; left as it is\n"


def test_plan_task_confirm_and_show(git_repo: Path, brief: Path, scripted_worker: Worker) -> None:
    write_config(git_repo, scripted_worker({"default": {"outcome": "failed"}}))
    assert arc(git_repo, "plan", "add", "p", "--max-cost-usd", "3").output == (
        "plan p added (not confirmed)\n"
    )
    added = arc(git_repo, "task", "add", "p", "greet", "--brief", str(brief),
                "--max-attempts", "4")  # fmt: skip
    assert added.output == "greet added to plan p: todo.ready\n"
    assert ArcStore(git_repo).read_brief("greet") == brief.read_text()
    assert arc(git_repo, "run", "--once").output == ""  # not confirmed: nothing claimed
    assert arc(git_repo, "confirm", "p").output == "plan p confirmed\n"
    shown = arc(git_repo, "show")
    assert shown.output == (
        "plan p (auto on, confirmed)\n  greet: todo.ready  retry_count 0  cost_usd $0\n"
    )
    document = json.loads(arc(git_repo, "show", "greet", "--json").output)
    assert document["state"] == "todo.ready"
    assert document["max_attempts"] == 4
    assert document["attempts"] == []


def test_a_plan_with_auto_off_is_not_claimed_and_task_options_are_kept(
    git_repo: Path, brief: Path, scripted_worker: Worker
) -> None:
    write_config(git_repo, scripted_worker({"default": {"outcome": "failed"}}))
    assert arc(git_repo, "plan", "add", "q", "--auto", "off").exit_code == 0
    added = arc(git_repo, "task", "add", "q", "t", "--brief", str(brief), "--max-attempts", "2",
                "--max-cost-usd", "0.5")  # fmt: skip
    assert added.exit_code == 0
    arc(git_repo, "confirm", "q")
    assert arc(git_repo, "run", "--once").output == ""  # auto off: nothing is claimed
    store = ArcStore(git_repo)
    assert store.load_plan("q").auto == "off"
    record = store.load_task("t")
    assert (record.max_attempts, record.max_cost_usd, record.state) == (2, 0.5, "todo.ready")
    assert arc(git_repo, "plan", "auto", "q", "on").output == "plan q auto -> on\n"
    assert store.load_plan("q").auto == "on"


def test_run_prints_each_transition_and_show_the_model_wait(
    git_repo: Path, brief: Path, scripted_worker: Worker
) -> None:
    error = {"kind": "unavailable", "retry_after_secs": 600, "message": "overloaded"}
    scenario = {"default": {"outcome": "failed", "cost": 0.12, "model_error": error}}
    write_config(git_repo, scripted_worker(scenario))
    arc(git_repo, "plan", "add", "p")
    arc(git_repo, "task", "add", "p", "greet", "--brief", str(brief))
    arc(git_repo, "confirm", "p")
    result = arc(git_repo, "run", "--once")
    assert result.exit_code == 0, result.output
    # The fake clock starts at 07:00:00 and runs on in real time: a second may pass.
    lines = result.output.splitlines()
    assert lines[0] == "greet todo.ready -> doing.working (attempt 001)"
    assert re.fullmatch(
        r"greet worker model unavailable -> retry at 2026-11-30T07:10:0\dZ", lines[1]
    )
    retry_at = lines[1].rpartition(" ")[2]
    shown = arc(git_repo, "show", "greet").output
    assert f"  retry_at: {retry_at}\n" in shown
    assert "    attempt_model_error: unavailable (retry_after_secs 600): overloaded\n" in shown
    document = json.loads(arc(git_repo, "show", "greet", "--json").output)
    assert set(document) >= {"state", "retry_count", "retry_at", "cost_usd", "total_cost_usd",
                             "rework_reason", "attempts"}  # fmt: skip
    assert document["state"] == "todo.retry_wait"
    assert document["retry_at"] == retry_at
    assert re.fullmatch(ISO_UTC, document["retry_at"])
    assert document["retry_count"] == 0
    assert document["cost_usd"] == document["total_cost_usd"] == 0.12
    assert document["rework_reason"] is None
    (attempt,) = document["attempts"]
    assert set(attempt) >= {"id", "outcome", "class", "model_wait", "model_error", "cost_usd",
                            "session_cost_usd", "session_id", "started_at", "ended_at"}  # fmt: skip
    assert (attempt["id"], attempt["outcome"], attempt["class"]) == ("001", "failed", "model")
    assert attempt["model_wait"] is True
    assert attempt["model_error"] == error
    assert attempt["cost_usd"] == attempt["session_cost_usd"] == 0.12
    assert attempt["session_id"] == "sess-001"
    assert re.fullmatch(ISO_UTC, attempt["started_at"])
    assert re.fullmatch(ISO_UTC, attempt["ended_at"])
    assert attempt["started_at"] <= attempt["ended_at"] <= retry_at


def test_a_failed_task_exits_3(git_repo: Path, brief: Path, scripted_worker: Worker) -> None:
    write_config(git_repo, scripted_worker({"default": {"outcome": "poisoned"}}))
    arc(git_repo, "plan", "add", "p")
    arc(git_repo, "task", "add", "p", "t", "--brief", str(brief))
    arc(git_repo, "confirm", "p")
    result = arc(git_repo, "start", "t")
    assert result.exit_code == 3
    assert result.output.splitlines()[-1] == "t failed (model, poisoned) -> failed.irrecoverable"


def test_a_bad_exec_args_is_refused_before_any_claim(git_repo: Path, brief: Path) -> None:
    write_config(git_repo, ["./no-such-agent", "{brief_file}", "{nope}"])
    arc(git_repo, "plan", "add", "p")
    arc(git_repo, "task", "add", "p", "t", "--brief", str(brief))
    for command in (["confirm", "p"], ["run"], ["start", "t"]):
        result = arc(git_repo, *command)
        assert result.exit_code == 2, command
        assert result.output.startswith("worker.exec_args in .radian/arc.toml is refused:\n")
        assert "{nope}" in result.output
    assert task(git_repo, "t").state == "todo.ready"
    assert task(git_repo, "t").attempts == []
    assert ArcStore(git_repo).load_plan("p").confirmed is False


def not_executable(repo: Path) -> list[str]:
    script = repo / "agent.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o644)
    return ["./agent.sh"]


BAD_EXEC_ARGS: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    "missing by path": (lambda repo: ["./no-such-agent"], "'./no-such-agent' was not found"),
    "missing on PATH": (lambda repo: ["no-such-agent-xyz"], "was not found on PATH"),
    "not executable": (not_executable, "'./agent.sh' is not executable"),
    "unknown placeholder": (lambda repo: ["true", "{brief}"], "unknown placeholder {brief}"),
    "empty": (lambda repo: [], "worker.exec_args is empty"),
}


@pytest.mark.parametrize("kind", list(BAD_EXEC_ARGS))
def test_each_kind_of_bad_exec_args_is_refused_by_start_run_and_confirm(
    git_repo: Path, brief: Path, kind: str
) -> None:
    make_args, problem = BAD_EXEC_ARGS[kind]
    write_config(git_repo, make_args(git_repo))
    arc(git_repo, "plan", "add", "p")
    arc(git_repo, "task", "add", "p", "t", "--brief", str(brief))
    store = ArcStore(git_repo)
    before = store.task_path("t").read_text()
    for command in (["confirm", "p"], ["run", "--once"], ["start", "t"]):
        result = arc(git_repo, *command)
        assert (result.exit_code, result.output.splitlines()[0]) == (
            2,
            "worker.exec_args in .radian/arc.toml is refused:",
        ), command
        assert problem in result.output, command
    assert store.task_path("t").read_text() == before
    assert not store.task_dir("t").joinpath("attempts").exists()
    assert store.load_plan("p").confirmed is False


def test_bad_config_exits_2_naming_file_and_key(git_repo: Path) -> None:
    (git_repo / ".radian").mkdir()
    (git_repo / ".radian" / "arc.toml").write_text("[limits]\nparallel = 'many'\n")
    result = arc(git_repo, "run")
    assert result.exit_code == 2
    assert result.output.startswith(".radian/arc.toml: limits.parallel: expected a valid integer")


def test_names_are_checked_and_unique_across_plans(git_repo: Path, brief: Path) -> None:
    bad = arc(git_repo, "plan", "add", "../up")
    assert bad.exit_code == 2
    assert "plan name '../up' is not allowed" in bad.output
    arc(git_repo, "plan", "add", "p")
    arc(git_repo, "plan", "add", "q")
    assert arc(git_repo, "plan", "add", "p").output == "a plan named 'p' already exists\n"
    for name in ("a/b", "x.lock", "-x", "x..y", "x" * 65):
        assert arc(git_repo, "task", "add", "p", name, "--brief", str(brief)).exit_code == 2
    arc(git_repo, "task", "add", "p", "t", "--brief", str(brief))
    again = arc(git_repo, "task", "add", "q", "t", "--brief", str(brief))
    assert (again.exit_code, again.output) == (1, "a task named 't' already exists (in plan 'p')\n")
    missing = arc(git_repo, "task", "add", "nope", "u", "--brief", str(brief))
    assert (missing.exit_code, missing.output) == (1, "no plan named 'nope'\n")
    assert not ArcStore(git_repo).task_exists("u")


def test_plan_load_reads_one_toml_file(git_repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "plans"
    (folder / "briefs").mkdir(parents=True)
    (folder / "briefs" / "one.md").write_text("# One\n")
    plan_file = folder / "plan.toml"
    plan_file.write_text(
        '[plan]\nname = "demo"\nauto = "off"\nmax_cost_usd = 2.5\n\n'
        '[[task]]\nname = "one"\nbrief_file = "briefs/one.md"\nmax_attempts = 1\n\n'
        '[[task]]\nname = "two"\nbrief = """\n# Two\\n\nInline.\n"""\nmax_cost_usd = 0.5\n'
    )
    result = arc(git_repo, "plan", "load", str(plan_file))
    assert (result.exit_code, result.output) == (
        0,
        "plan demo loaded with 2 task(s) (not confirmed)\n",
    )
    store = ArcStore(git_repo)
    plan = store.load_plan("demo")
    assert (plan.auto, plan.max_cost_usd, plan.tasks) == ("off", 2.5, ["one", "two"])
    assert store.read_brief("one") == "# One\n"
    assert "Inline." in store.read_brief("two")
    assert store.load_task("one").max_attempts == 1
    assert store.load_task("two").max_cost_usd == 0.5


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[plan]\nname = "x"\n[[task]]\nname = "t"\n', "task.0: expected exactly one of brief"),
        ('[plan]\nname = "x"\n[[task]]\nname = "t"\nbrief_file = "missing.md"\n',
         "task.0.brief_file: expected a readable file"),
        ('[plan]\nname = "x"\ncolour = 1\n', "plan.colour: unknown key"),
        ('[plan]\nname = "x"\n[[task]]\nname = "t"\nbrief = "a"\n[[task]]\nname = "t"\n'
         'brief = "b"\n', "task names appear twice: t"),
        ("[plan\n", "not valid TOML"),
    ],
)  # fmt: skip
def test_a_bad_plan_file_changes_nothing(
    git_repo: Path, tmp_path: Path, text: str, message: str
) -> None:
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text(text)
    result = arc(git_repo, "plan", "load", str(plan_file))
    assert result.exit_code == 2
    assert message in result.output
    assert ArcStore(git_repo).plan_names() == []
    assert not (git_repo / ".radian" / "arc" / "runs").exists()


def test_rework_cancel_and_reset_budget_commands(git_repo: Path, brief: Path) -> None:
    arc(git_repo, "plan", "add", "p")
    arc(git_repo, "task", "add", "p", "t", "--brief", str(brief))
    assert (
        arc(git_repo, "cancel", "t").output == "t cancelled -> failed.cancelled (was todo.ready)\n"
    )
    assert (
        arc(git_repo, "rework", "t", "--brief", str(brief)).output == "t rework 1 -> todo.ready\n"
    )
    refused = arc(git_repo, "reset-budget", "t")
    assert refused.exit_code == 1
    assert refused.output == "t is todo.ready: reset-budget applies to a todo.paused_budget task\n"
    assert arc(git_repo, "show", "nope").exit_code == 1


def test_the_installed_console_script_runs_arc(git_repo: Path, scripted_worker: Worker) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "result", "commit": True}}))
    (git_repo / "brief.md").write_text("# Do it\n")
    for command in (
        ["plan", "add", "p"],
        ["task", "add", "p", "t", "--brief", "brief.md"],
        ["confirm", "p"],
    ):
        subprocess.run([RADIAN, "arc", *command], cwd=git_repo, check=True, env=run_env(),
                       capture_output=True)  # fmt: skip
    done = subprocess.run([RADIAN, "arc", "run"], cwd=git_repo, env=run_env(),
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "t todo.ready -> doing.working (attempt 001)"
    assert lines[1].startswith("t completed -> review.verifying (head ")
    help_text = subprocess.run([RADIAN, "arc", "--help"], capture_output=True, text=True)
    assert "RADIAN_ARC_REPO" in help_text.stdout


def test_the_gate_verifier_is_chosen_when_gate_is_configured(git_repo: Path) -> None:
    from radian.arc.clock import FakeClock
    from radian.arc.config import load_config
    from radian.arc.gate import GateVerifier
    from radian.arc.loop import NoVerifier
    from radian.cli import make_verifier

    store = ArcStore(git_repo)
    assert isinstance(make_verifier(store, load_config(git_repo), FakeClock()), NoVerifier)
    write_config(git_repo, ["true"], gate={"stages": ["commands"]})
    assert isinstance(make_verifier(store, load_config(git_repo), FakeClock()), GateVerifier)


def test_one_run_at_a_time(git_repo: Path, scripted_worker: Worker) -> None:
    write_config(git_repo, scripted_worker({"default": {"outcome": "failed"}}))
    lock = ArcStore(git_repo).run_lock()
    with lock:
        result = arc(git_repo, "run", "--once")
    assert (result.exit_code, result.output) == (
        1,
        "another radian arc run is working on this repository\n",
    )


def test_radian_arc_does_not_import_the_radian_worker_agent() -> None:
    """Every `radian arc` command starts a `radian` process: importing the command line must
    not import acp (its schema alone takes seconds), which only `radian worker` needs."""
    probe = (
        "import sys, radian.cli; print(sorted(m for m in sys.modules if m.split('.')[0] == 'acp'))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            env=run_env(), timeout=60, check=True)  # fmt: skip
    assert loaded.stdout == "[]\n"
    # `radian worker` keeps its options (the worker itself runs in test_acp_worker.py).
    help_text = subprocess.run([RADIAN, "worker", "--help"], capture_output=True, text=True,
                               timeout=60, check=True)  # fmt: skip
    assert "--max-turns INTEGER" in help_text.stdout and "[default: 50]" in help_text.stdout
    assert "[default: 8192]" in help_text.stdout
