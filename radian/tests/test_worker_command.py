"""exec_args: validation, placeholders and the worker's environment."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from radian.arc.worker import validate_exec_args
from radian.arc.worker.command import (
    CommandValues,
    expand_exec_args,
    resolve_program,
    worker_environment,
)

pytestmark = pytest.mark.unit


def values(session_id: str | None) -> CommandValues:
    return CommandValues(
        brief_file=Path("/r/.radian/arc/runs/t/attempts/a1/brief.md"),
        session_id=session_id,
        worktree=Path("/r/.radian/arc/worktrees/t"),
        task="t",
        attempt_id="a1",
        base_sha="abc123",
        branch="arc/t",
        remote="origin",
    )


def test_a_good_exec_args_has_no_problems() -> None:
    args = ["python3", "-c", "pass", "{resume_args}", "--brief={brief_file}", "{worktree}"]
    assert validate_exec_args(args) == []
    assert (
        validate_exec_args(["python3", "{{literal}}", "{task}-{attempt_id}", "{session_id}"]) == []
    )


def test_empty_exec_args() -> None:
    assert validate_exec_args([]) == [
        "worker.exec_args is empty: it needs at least the program to run"
    ]


def test_missing_program_on_path_and_by_path(tmp_path: Path) -> None:
    assert validate_exec_args(["no-such-program-radian"]) == [
        "worker.exec_args[0]: program 'no-such-program-radian' was not found on PATH"
    ]
    assert validate_exec_args([str(tmp_path / "nope")]) == [
        f"worker.exec_args[0]: program '{tmp_path / 'nope'}' was not found"
    ]


def test_program_not_executable_and_relative_paths(tmp_path: Path) -> None:
    script = tmp_path / "bin" / "work.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    assert validate_exec_args(["bin/work.sh"], repo_root=tmp_path) == [
        "worker.exec_args[0]: program 'bin/work.sh' is not executable"
    ]
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    assert validate_exec_args(["bin/work.sh"], repo_root=tmp_path) == []
    assert resolve_program(["bin/work.sh", "x"], tmp_path) == [str(script), "x"]
    assert resolve_program(["python3"], tmp_path) == ["python3"]


def test_placeholder_problems_name_the_argument() -> None:
    problems = validate_exec_args(["python3", "{bogus}", "x{resume_args}", "{", "{task!r}", "{0}"])
    known = "{brief_file}, {session_id}, {worktree}, {task}, {attempt_id}, {resume_args}"
    assert problems == [
        f"worker.exec_args[1] ('{{bogus}}'): unknown placeholder {{bogus}}; known: {known}",
        "worker.exec_args[2] ('x{resume_args}'): {resume_args} must be an argument on its own",
        "worker.exec_args[3] ('{'): malformed placeholder: Single '{' encountered in format "
        "string; write {{ and }} for literal braces",
        "worker.exec_args[4] ('{task!r}'): placeholder {task} takes no format spec or conversion",
        f"worker.exec_args[5] ('{{0}}'): unknown placeholder {{0}}; known: {known}",
    ]


def test_program_cannot_be_resume_args() -> None:
    assert validate_exec_args(["{resume_args}"]) == [
        "worker.exec_args[0] ('{resume_args}') must name the program, not a placeholder"
    ]


def test_program_with_a_placeholder_is_not_looked_up() -> None:
    assert validate_exec_args(["{worktree}/run.sh"]) == []


@pytest.mark.parametrize(
    ("session_id", "expected"),
    [
        ("sess-9", ["claude", "-p", "--resume", "sess-9", "--x=sess-9", "t/a1"]),
        (None, ["claude", "-p", "--x=", "t/a1"]),
    ],
)
def test_expansion_in_both_session_modes(session_id: str | None, expected: list[str]) -> None:
    args = ["claude", "-p", "{resume_args}", "--x={session_id}", "{task}/{attempt_id}"]
    assert expand_exec_args(args, values(session_id)) == expected


def test_expansion_of_paths_and_literal_braces() -> None:
    assert expand_exec_args(["w", "{brief_file}", "{worktree}", "{{x}}"], values(None)) == [
        "w",
        "/r/.radian/arc/runs/t/attempts/a1/brief.md",
        "/r/.radian/arc/worktrees/t",
        "{x}",
    ]


def test_environment_adds_the_radian_variables() -> None:
    env = worker_environment(values(None), {"PATH": "/bin", "RADIAN_ARC_TASK": "stale"})
    assert env == {
        "PATH": "/bin",
        "RADIAN_ARC_BRIEF_FILE": "/r/.radian/arc/runs/t/attempts/a1/brief.md",
        "RADIAN_ARC_TASK": "t",
        "RADIAN_ARC_ATTEMPT": "a1",
        "RADIAN_ARC_SESSION_ID": "",
        "RADIAN_ARC_WORKTREE": "/r/.radian/arc/worktrees/t",
        "RADIAN_ARC_BASE_SHA": "abc123",
        "RADIAN_ARC_BRANCH": "arc/t",
        "RADIAN_ARC_REMOTE": "origin",
    }
    assert worker_environment(values("s"), {})["RADIAN_ARC_SESSION_ID"] == "s"
