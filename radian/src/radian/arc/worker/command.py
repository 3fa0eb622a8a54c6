"""The command worker: its exec_args placeholders, its environment and its session.

exec_args is a program and its arguments; an argument may hold placeholders that the
wrapper fills in for each attempt (radian/docs/worker.md lists them).
"""

from __future__ import annotations

import os
import shutil
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from radian.arc.worker import texts

# {resume_args} is the one placeholder that expands to a variable number of arguments:
# `--resume <id>` when the attempt resumes a session, nothing when it starts a fresh one.
RESUME_ARGS = "resume_args"
RESUME_FLAG = "--resume"
PLACEHOLDERS: tuple[str, ...] = (
    "brief_file",
    "session_id",
    "worktree",
    "task",
    "attempt_id",
    RESUME_ARGS,
)

ENV_BRIEF_FILE = "RADIAN_ARC_BRIEF_FILE"
ENV_TASK = "RADIAN_ARC_TASK"
ENV_ATTEMPT = "RADIAN_ARC_ATTEMPT"
ENV_SESSION_ID = "RADIAN_ARC_SESSION_ID"
ENV_WORKTREE = "RADIAN_ARC_WORKTREE"
ENV_BASE_SHA = "RADIAN_ARC_BASE_SHA"
ENV_BRANCH = "RADIAN_ARC_BRANCH"
ENV_REMOTE = "RADIAN_ARC_REMOTE"


@dataclass(frozen=True)
class CommandValues:
    """What one attempt's placeholders and environment variables stand for."""

    brief_file: Path
    session_id: str | None  # None: a fresh session
    worktree: Path
    task: str
    attempt_id: str
    base_sha: str
    branch: str
    remote: str


def validate_exec_args(exec_args: Sequence[str], *, repo_root: Path | None = None) -> list[str]:
    """Problems with a worker.exec_args list, each a sentence; [] when it is fine.

    A relative program path is looked up from repo_root (the current directory when
    omitted), as the wrapper resolves it; a bare name is looked up on PATH.
    """
    if not exec_args:
        return [texts.EXEC_ARGS_EMPTY]
    problems: list[str] = []
    for index, arg in enumerate(exec_args):
        problems.extend(_placeholder_problems(index, arg))
    program = exec_args[0]
    if _placeholder_names(program) & {RESUME_ARGS}:
        problems.append(texts.PROGRAM_IS_PLACEHOLDER.format(arg=program))
    elif not _placeholder_names(program):
        problem = _program_problem(program, repo_root or Path.cwd())
        if problem:
            problems.append(problem)
    return problems


def expand_exec_args(
    exec_args: Sequence[str],
    values: CommandValues,
    resume_args: Sequence[str] = (RESUME_FLAG, "{session_id}"),
) -> list[str]:
    """The argument list for one attempt; exec_args must have passed validate_exec_args.
    `resume_args` is what {resume_args} stands for when the attempt resumes a session."""
    fields = {
        "brief_file": str(values.brief_file),
        "session_id": values.session_id or "",
        "worktree": str(values.worktree),
        "task": values.task,
        "attempt_id": values.attempt_id,
    }
    expanded: list[str] = []
    for arg in exec_args:
        if arg == "{" + RESUME_ARGS + "}":
            if values.session_id:
                expanded.extend(part.format(**fields) for part in resume_args)
            continue
        expanded.append(arg.format(**fields))
    return expanded


def resolve_program(args: list[str], repo_root: Path) -> list[str]:
    """args with a relative program path made absolute from repo_root (the worker's working
    directory is its worktree, so a relative path would otherwise mean something else)."""
    program = args[0]
    if "/" in program and not os.path.isabs(program):
        return [str(repo_root / program), *args[1:]]
    return args


def worker_environment(values: CommandValues, base: Mapping[str, str]) -> dict[str, str]:
    """The worker's environment: the wrapper's own plus the RADIAN_ARC_* variables."""
    env = dict(base)
    env.update(
        {
            ENV_BRIEF_FILE: str(values.brief_file),
            ENV_TASK: values.task,
            ENV_ATTEMPT: values.attempt_id,
            ENV_SESSION_ID: values.session_id or "",
            ENV_WORKTREE: str(values.worktree),
            ENV_BASE_SHA: values.base_sha,
            ENV_BRANCH: values.branch,
            ENV_REMOTE: values.remote,
        }
    )
    return env


def _placeholder_problems(index: int, arg: str) -> list[str]:
    try:
        parsed = list(string.Formatter().parse(arg))
    except ValueError as error:
        return [texts.MALFORMED_PLACEHOLDER.format(index=index, arg=arg, error=error)]
    problems = []
    for _literal, name, format_spec, conversion in parsed:
        if name is None:
            continue
        if name not in PLACEHOLDERS:
            problems.append(
                texts.UNKNOWN_PLACEHOLDER.format(
                    index=index,
                    arg=arg,
                    name=name,
                    known=", ".join("{" + p + "}" for p in PLACEHOLDERS),
                )
            )
        elif format_spec or conversion:
            problems.append(texts.PLACEHOLDER_FORMAT_SPEC.format(index=index, arg=arg, name=name))
        elif name == RESUME_ARGS and arg != "{" + RESUME_ARGS + "}":
            problems.append(texts.RESUME_ARGS_NOT_ALONE.format(index=index, arg=arg))
    return problems


def _placeholder_names(arg: str) -> set[str]:
    try:
        return {name for _, name, _, _ in string.Formatter().parse(arg) if name is not None}
    except ValueError:
        return set()


def _program_problem(program: str, repo_root: Path) -> str | None:
    if "/" not in program:
        return (
            None
            if shutil.which(program)
            else texts.PROGRAM_NOT_FOUND_ON_PATH.format(program=program)
        )
    path = Path(program) if os.path.isabs(program) else repo_root / program
    if not path.is_file():
        return texts.PROGRAM_NOT_FOUND.format(program=program)
    if not os.access(path, os.X_OK):
        return texts.PROGRAM_NOT_EXECUTABLE.format(program=program)
    return None
