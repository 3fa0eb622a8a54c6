"""One attempt: run the wrapper, read what it left, check the delivery.

run_attempt blocks until the attempt ends. stop_attempt stops it from any process (radian
arc cancel in another terminal): the wrapper's pid is in `<attempt dir>/wrapper.pid`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from radian.arc.atomic import write_json_atomic
from radian.arc.clock import Clock, format_utc
from radian.arc.config import WorkerConfig
from radian.arc.worker import texts
from radian.arc.worker.acp import client_exec_args
from radian.arc.worker.delivery import REMOTE_UNREACHABLE, Delivery, check_delivery
from radian.arc.worker.files import (
    CANCELLED,
    INTERRUPTED,
    STOP_CANCEL,
    STOP_INTERRUPT,
    STOPPED_BY_ARC,
    AttemptFiles,
    WrapperSpec,
    read_json_or_none,
)
from radian.arc.worker.formats import (
    CostSeen,
    Price,
    WorkerResult,
    parse_output,
    session_seen,
)
from radian.arc.worker.formats import cost_seen as cost_reported

WRAPPER_MODULE = "radian.arc.worker.wrapper"
# A wrapper error from one of these git commands means the remote could not be reached.
REMOTE_COMMANDS = ("git fetch", "git ls-remote", "git push")
# How long stop_attempt waits, beyond the grace period, for the wrapper to finish its part.
STOP_MARGIN_SECS = 5.0
STOP_POLL_SECS = 0.05
DEFAULT_GRACE_SECS = 10.0


@dataclass(frozen=True)
class AttemptSpec:
    repo_root: Path
    task: str
    attempt_id: str
    attempt_dir: Path
    brief_text: str
    worker: WorkerConfig
    resume_session_id: str | None  # None: a fresh session
    target_branch: str
    remote: str
    branch: str  # the task's own branch, e.g. "arc/<task>"
    start_mid_merge: bool  # begin mid-merge with `<remote>/<target_branch>`, left conflicted
    # The claim the wrapper takes on the remote first (radian.arc.hosts), when the run could
    # not reach the remote to take it.
    claim: dict[str, Any] | None = None


@dataclass(frozen=True)
class AttemptEnd:
    result: WorkerResult | None  # None: terminated (no Result: a crash or a kill)
    # None | stall | wall_time | lock_held | cancelled | interrupted | stopped_by_arc
    wrapper_class: str | None
    exit_code: int | None
    delivery: Delivery | None  # set when result.outcome == "completed"
    worker_started: bool  # False: the attempt failed before the worker started (no session)
    session_id: str | None  # from the Result, else the one announced, else the one resumed
    started_at: str
    ended_at: str  # ISO 8601 UTC
    log_path: Path
    # The Result says the session must not be resumed (refused, or lost): start fresh next.
    fresh_session_next: bool = False
    # The remote could not be reached (the worktree's fetch, or the delivery check's look at
    # the pushed branch): an infrastructure wait, not the task's failure.
    remote_error: str | None = None
    # Without a Result: what the worker said it had spent so far (a progress line), if it did.
    cost_seen: CostSeen | None = None
    # Without a Result: why, in a line (the wrapper's error, the held lock, the worker's exit
    # and the line of its stderr that tells most); run and show print it.
    failure_reason: str | None = None


def run_attempt(spec: AttemptSpec, clock: Clock) -> AttemptEnd:
    """Runs one attempt of the task's worker through the wrapper; blocks until it ends."""
    started_at = format_utc(clock.now())
    files = AttemptFiles(Path(spec.attempt_dir).resolve())
    files.dir.mkdir(parents=True, exist_ok=True)
    # An attempt dir run again (a crash before its result was recorded) starts clean: a stale
    # status or Result must not stand for this run.
    for stale in (files.status, files.stdout, files.stderr, files.log, files.worker_pid,
                  files.cancel_requested):  # fmt: skip
        stale.unlink(missing_ok=True)
    files.brief.write_text(with_delivery(spec.brief_text, spec.branch, spec.remote), "utf-8")
    session_id = spec.resume_session_id if spec.worker.session == "resume" else None
    wrapper_spec = WrapperSpec(
        repo_root=str(spec.repo_root),
        task=spec.task,
        attempt_id=spec.attempt_id,
        branch=spec.branch,
        remote=spec.remote,
        target_branch=spec.target_branch,
        start_mid_merge=spec.start_mid_merge,
        exec_args=wrapper_exec_args(spec.worker),
        session_id=session_id,
        stall_secs=spec.worker.stall_secs,
        wall_time_secs=spec.worker.wall_time_secs,
        term_grace_secs=spec.worker.term_grace_secs,
        resume_args=list(spec.worker.resume_args),
        model=spec.worker.model,
        prices={name: price.model_dump() for name, price in spec.worker.prices.items()},
        claim=spec.claim,
    )
    write_json_atomic(files.spec, asdict(wrapper_spec))
    wrapper_exit = _run_wrapper(files)
    return _attempt_end(files, clock, started_at, wrapper_exit)


def with_delivery(brief: str, branch: str, remote: str) -> str:
    """The brief as the worker gets it: the task's brief, then arc's delivery instructions
    (the branch, the remote, the literal push command), so a brief a person wrote never has
    to say how to deliver."""
    return brief.rstrip("\n") + "\n" + texts.DELIVERY.format(branch=branch, remote=remote)


def wrapper_exec_args(worker: WorkerConfig) -> list[str]:
    """What the wrapper runs: the worker's exec_args, or for an ACP worker the ACP client
    in front of them."""
    if not worker.speaks_acp:
        return list(worker.exec_args)
    return client_exec_args(
        worker.agent_args,
        edits=worker.permissions.edits,
        commands=worker.permissions.commands,
    )


def ended_attempt(attempt_dir: Path, clock: Clock, started_at: str | None) -> AttemptEnd | None:
    """The end of an attempt whose wrapper finished by itself while no process waited for it
    (the `run` that started it was killed): read from the files it left. None when the
    wrapper has not written its status, its last word before it exits.
    """
    files = AttemptFiles(Path(attempt_dir).resolve())
    status = read_json_or_none(files.status)
    if not isinstance(status, dict) or read_json_or_none(files.spec) is None:
        return None
    return _attempt_end(files, clock, started_at or "", status.get("wrapper_exit"))


def live_wrapper(attempt_dir: Path) -> int | None:
    """The pid of the attempt's wrapper while it runs (in whichever process started it);
    None when none runs."""
    return _wrapper_of(AttemptFiles(Path(attempt_dir).resolve()))


def watch_attempt(
    attempt_dir: Path, clock: Clock, started_at: str | None, *, poll_secs: float = 0.2
) -> AttemptEnd | None:
    """Adopts an attempt whose wrapper another process started (a `run` killed while its
    worker ran): waits for the wrapper to end, then reads what it left as run_attempt would
    have read it, Result, delivery and all. None when the wrapper is gone without a word (no
    status, no stop asked for): the attempt left no Result.

    Blocks like run_attempt; the wait is a poll of a real process, not a backoff."""
    files = AttemptFiles(Path(attempt_dir).resolve())
    pid = _wrapper_of(files)
    while pid is not None and _is_wrapper(pid, files.dir):
        time.sleep(poll_secs)
    status = read_json_or_none(files.status)
    if read_json_or_none(files.spec) is None or (
        not isinstance(status, dict) and not files.cancel_requested.exists()
    ):
        return None
    wrapper_exit = status.get("wrapper_exit") if isinstance(status, dict) else None
    return _attempt_end(files, clock, started_at or "", wrapper_exit)


def _attempt_end(
    files: AttemptFiles, clock: Clock, started_at: str, wrapper_exit: int | None
) -> AttemptEnd:
    """What the wrapper left in the attempt dir, read, and the delivery checked."""
    spec = WrapperSpec.from_json(read_json_or_none(files.spec))
    status = read_json_or_none(files.status) or {}
    wrapper_class = status.get("wrapper_class")
    if not status and files.cancel_requested.exists():
        wrapper_class = CANCELLED  # cancelled before the wrapper could write a word
    if wrapper_class == CANCELLED:
        reason = stop_reason(files)
        if reason == STOP_INTERRUPT:
            wrapper_class = INTERRUPTED
        elif reason != STOP_CANCEL:
            wrapper_class = STOPPED_BY_ARC
    stdout = _read_text(files.stdout)
    prices = {name: Price(**values) for name, values in spec.prices.items()}  # type: ignore[arg-type]
    result = parse_output(
        stdout, _read_text(files.log), now=clock.now(), model=spec.model, prices=prices
    )
    delivery = None
    if result is not None and result.outcome == "completed" and status.get("worktree"):
        delivery = check_delivery(
            Path(status["worktree"]), spec.branch, spec.remote, status.get("base_sha")
        )
    worker_started = bool(status.get("worker_started"))
    remote_error = None
    error = status.get("error")
    if isinstance(error, str) and error.startswith(REMOTE_COMMANDS):
        remote_error = error
    elif delivery is not None and delivery.reason == REMOTE_UNREACHABLE:
        remote_error = delivery.detail
    return AttemptEnd(
        remote_error=remote_error,
        result=result,
        wrapper_class=wrapper_class,
        exit_code=status.get("exit_code") if worker_started else wrapper_exit,
        delivery=delivery,
        worker_started=worker_started,
        session_id=_session_id(result, stdout, spec.session_id),
        fresh_session_next=result is not None and result.fresh_session_next,
        cost_seen=cost_reported(stdout) if result is None else None,
        failure_reason=None if result is not None else _why_no_result(files, status),
        started_at=started_at,
        ended_at=format_utc(clock.now()),
        log_path=files.log,
    )


# The lines of a worker's stderr that say most, best first: a push the remote refused.
TELLING_MARKS = ("[rejected]", "[remote rejected]")
REASON_LINE_LIMIT = 300
STDERR_TAIL_LINES = 40


def _why_no_result(files: AttemptFiles, status: dict[str, object]) -> str | None:
    """Why an attempt ended without a Result, in a line: the wrapper's own word when the
    worker never ran (the lock, the worktree, the program), else how the worker ended and
    the line of its stderr that tells most. None when arc stopped it (the class says why)."""
    error = status.get("error")
    if isinstance(error, str) and error:
        return error
    if status.get("wrapper_class") is not None or not status.get("worker_started"):
        return None
    code = status.get("exit_code")
    if isinstance(code, int) and code < 0:
        reason = texts.REASON_KILLED.format(signal=-code)
    else:
        reason = texts.REASON_NO_RESULT.format(code=code)
    line = telling_line(_read_text(files.stderr))
    return texts.REASON_SAID.format(reason=reason, line=line) if line else reason


def telling_line(stderr: str) -> str | None:
    """The line of a worker's stderr that says most about its end: a refused push's, else
    its last line that is neither a hint nor a frame of a traceback; cut to a few hundred
    characters."""
    lines = [line.strip() for line in stderr.splitlines()[-STDERR_TAIL_LINES:] if line.strip()]
    marked = [line for line in lines if any(mark in line for mark in TELLING_MARKS)]
    plain = [line for line in lines
             if not line.startswith(("hint:", "File ", "Traceback ", "^", "~"))]  # fmt: skip
    chosen = marked or plain
    if not chosen:
        return None
    found = chosen[-1]
    return found if len(found) <= REASON_LINE_LIMIT else found[: REASON_LINE_LIMIT - 1] + "…"


def _session_id(result: WorkerResult | None, stdout: str, resumed: str | None) -> str | None:
    """The attempt's session: the Result's; a lost session's is none; else the id the worker
    announced before it stalled or was killed (Claude Code's system/init line); else the one
    it was asked to resume."""
    if result is not None and result.session_id:
        return result.session_id
    if result is not None and result.fresh_session_next:
        return None
    return session_seen(stdout) or resumed


def stop_attempt(attempt_dir: Path, reason: str = STOP_CANCEL, *, wait: bool = True) -> bool:
    """Stops the attempt running in attempt_dir, from any process: SIGTERM to its wrapper,
    which stops the worker's group (SIGKILL after the grace period); if the wrapper itself
    outlives the grace period by STOP_MARGIN_SECS, SIGKILL to both. True if one was running.

    `reason` is recorded first (cancel_requested), so whoever reads the attempt's end, in
    any process and however late, tells the lead's cancel from arc's own stop.
    """
    files = AttemptFiles(Path(attempt_dir).resolve())
    pid = _wrapper_of(files)
    if pid is None:
        return False
    write_json_atomic(files.cancel_requested, {"pid": pid, "reason": reason})
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    if not wait:
        return True
    spec = read_json_or_none(files.spec) or {}
    grace = float(spec.get("term_grace_secs", DEFAULT_GRACE_SECS))
    deadline = time.monotonic() + grace + STOP_MARGIN_SECS
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(STOP_POLL_SECS)
    if _alive(pid):
        _kill(pid, signal.SIGKILL, group=False)
        worker_pid = _read_pid(files.worker_pid)
        if worker_pid is not None:
            _kill(worker_pid, signal.SIGKILL, group=True)
    return True


def kill_attempt(attempt_dir: Path) -> None:
    """SIGKILL to the attempt's wrapper and its worker's whole group, now (a second Ctrl-C:
    the lead will not wait for the grace period). A stop_attempt must have come first, so
    the attempt's end reads as arc's own stop."""
    files = AttemptFiles(Path(attempt_dir).resolve())
    pid = _wrapper_of(files)
    if pid is None:
        return  # no wrapper of this attempt runs: its worker.pid may name another process now
    worker_pid = _read_pid(files.worker_pid)
    _kill(pid, signal.SIGKILL, group=False)
    if worker_pid is not None:
        _kill(worker_pid, signal.SIGKILL, group=True)


def stop_reason(files: AttemptFiles) -> str | None:
    """Why the attempt was stopped; None when nobody asked it to stop."""
    request = read_json_or_none(files.cancel_requested)
    if request is None:
        return STOP_CANCEL if files.cancel_requested.exists() else None
    reason = request.get("reason") if isinstance(request, dict) else None
    return reason if isinstance(reason, str) else STOP_CANCEL


def _run_wrapper(files: AttemptFiles) -> int:
    """Runs the wrapper in a session of its own (a Ctrl-C in the terminal reaches only the
    caller, who decides what to do) and keeps wrapper.pid while it runs; its exit code."""
    with open(files.log, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", WRAPPER_MODULE, str(files.dir)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    try:
        _write_text_atomic(files.wrapper_pid, f"{process.pid}\n")
        return process.wait()
    finally:
        if process.poll() is None:  # the caller was interrupted: stop the attempt with it
            process.terminate()
            process.wait()
        files.wrapper_pid.unlink(missing_ok=True)


def _write_text_atomic(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _wrapper_of(files: AttemptFiles) -> int | None:
    """The pid of the attempt's running wrapper, None when none runs.

    wrapper.pid names it, but only once the process that started it has written it: a
    `run` killed between starting the wrapper and writing the file leaves a wrapper that
    no file names, which would go on to run its worker for an attempt recovery has
    already ended. So without a live pid file the wrapper is looked for among the
    processes, by its command line (the wrapper module and this attempt's folder).
    """
    pid = _read_pid(files.wrapper_pid)
    if pid is not None and _is_wrapper(pid, files.dir):
        return pid
    try:
        pids = sorted(int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit())
    except OSError:
        return None  # no /proc to look in: only the pid file can tell
    # The lowest first: a child the wrapper has forked shows its command line until exec.
    for found in pids:
        command = _command_line(found)
        if command is not None and _names_wrapper(command, files.dir) and _alive(found):
            return found
    return None


def _is_wrapper(pid: int, attempt_dir: Path) -> bool:
    """pid is alive and is this attempt's wrapper (a pid file can outlive its process)."""
    if not _alive(pid):
        return False
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except FileNotFoundError:
        return False
    except OSError:
        return True  # no /proc to ask: trust the pid file
    return _names_wrapper(command, attempt_dir)


def _command_line(pid: int) -> list[bytes] | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:  # gone, or not ours to read
        return None


def _names_wrapper(command: list[bytes], attempt_dir: Path) -> bool:
    return WRAPPER_MODULE.encode() in command and str(attempt_dir).encode() in command


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    # The state follows the parenthesized command name; a zombie has finished.
    return stat.rpartition(")")[2].split()[0] != "Z"


def _kill(pid: int, signum: int, *, group: bool) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if group:
            os.killpg(pid, signum)
        else:
            os.kill(pid, signum)
