"""The wrapper: one attempt's worker, run and watched.

    python -m radian.arc.worker.wrapper <attempt dir>

It reads `wrapper_spec.json` from the attempt dir, takes the worktree lock, prepares the
task's worktree, starts the worker in a process group of its own with the brief on stdin,
records its output, and stops the group (SIGTERM, then SIGKILL after the grace period) when
the worker is silent for stall_secs, runs past wall_time_secs, or the wrapper itself gets
SIGTERM (radian arc cancel). `wrapper_status.json` is written atomically before it exits.
Exit codes: see EXIT_* below and radian/docs/worker.md.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO

from radian.arc import git
from radian.arc.atomic import write_json_atomic
from radian.arc.worker import texts
from radian.arc.worker.command import (
    CommandValues,
    expand_exec_args,
    resolve_program,
    worker_environment,
)
from radian.arc.worker.files import (
    CANCELLED,
    LOCK_HELD,
    STALL,
    WALL_TIME,
    AttemptFiles,
    WrapperSpec,
)
from radian.arc.worker.liveness import CpuWatch

EXIT_WORKER_ENDED = 0  # the worker ran and ended by itself (its own exit code is in the status)
EXIT_USAGE = 2  # the wrapper was started wrongly (no attempt dir, no spec)
EXIT_NOT_STARTED = 3  # the worktree could not be prepared or the worker could not be started
EXIT_LOCK_HELD = 4  # another process holds the worktree lock
EXIT_STOPPED = 5  # the wrapper stopped the worker: stall, wall_time or cancelled

POLL_SECS = 0.05
READ_SIZE = 65536


@dataclass
class WrapperStatus:
    """wrapper_status.json."""

    wrapper_class: str | None = None  # None | stall | wall_time | lock_held | cancelled
    exit_code: int | None = None  # the worker's (negative: killed by that signal)
    worker_started: bool = False
    wrapper_exit: int = EXIT_WORKER_ENDED
    worktree: str | None = None
    branch: str | None = None
    base_sha: str | None = None
    start_head_sha: str | None = None
    merge_conflicts: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass(frozen=True)
class Limits:
    stall_secs: float
    wall_time_secs: float
    term_grace_secs: float


class StopRequest:
    """Set by SIGTERM (radian arc cancel's stop_attempt) or SIGINT."""

    def __init__(self) -> None:
        self.requested = False

    def handle(self, _signum: int, _frame: object) -> None:
        self.requested = True


def main(argv: list[str] | None = None) -> int:
    stop = StopRequest()
    signal.signal(signal.SIGTERM, stop.handle)
    signal.signal(signal.SIGINT, stop.handle)
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not (Path(args[0]) / "wrapper_spec.json").is_file():
        print(texts.WRAPPER_USAGE, file=sys.stderr)
        return EXIT_USAGE
    files = AttemptFiles(Path(args[0]))
    spec = WrapperSpec.from_json(json.loads(files.spec.read_text(encoding="utf-8")))
    with open(files.log, "ab") as log, open(files.stdout, "ab") as stdout:
        status = run_wrapper(spec, files, stop, log, stdout)
    write_json_atomic(files.status, asdict(status))
    return status.wrapper_exit


def run_wrapper(
    spec: WrapperSpec, files: AttemptFiles, stop: StopRequest, log: IO[bytes], stdout: IO[bytes]
) -> WrapperStatus:
    def note(line: str) -> None:
        log.write(line.encode() + b"\n")
        log.flush()

    repo = Path(spec.repo_root)
    status = WrapperStatus(branch=spec.branch)
    lock_fd = _take_lock(git.worktree_lock_path(repo, spec.task))
    if lock_fd is None:
        lock = git.worktree_lock_path(repo, spec.task)
        note(texts.LOG_LOCK_HELD.format(lock=lock))
        status.wrapper_class, status.wrapper_exit = LOCK_HELD, EXIT_LOCK_HELD
        status.error = texts.REASON_LOCK_HELD.format(lock=lock)
        return status
    try:
        return _run_locked(spec, files, stop, repo, lock_fd, status, note, log, stdout)
    finally:
        os.close(lock_fd)


def _run_locked(
    spec: WrapperSpec,
    files: AttemptFiles,
    stop: StopRequest,
    repo: Path,
    lock_fd: int,
    status: WrapperStatus,
    note: Callable[[str], None],
    log: IO[bytes],
    stdout: IO[bytes],
) -> WrapperStatus:
    try:
        prepared = git.prepare_worktree(
            repo, spec.task, spec.branch, spec.remote, spec.target_branch, spec.start_mid_merge
        )
    except (git.GitError, OSError) as error:
        note(texts.LOG_PREPARE_FAILED.format(error=error))
        status.error, status.wrapper_exit = str(error), EXIT_NOT_STARTED
        return status
    status.worktree = str(prepared.path)
    status.base_sha, status.start_head_sha = prepared.base_sha, prepared.head_sha
    status.merge_conflicts = list(prepared.merge_conflicts)
    if prepared.stale_local_sha is not None:
        note(texts.LOG_STALE_BRANCH.format(branch=spec.branch, local=prepared.stale_local_sha[:12],
                                           remote=spec.remote))  # fmt: skip
    if spec.claim is not None:
        refused = _take_claim(spec, repo, note)
        if refused is not None:
            status.error, status.wrapper_exit = refused, EXIT_NOT_STARTED
            return status
    if stop.requested:
        status.wrapper_class, status.wrapper_exit = CANCELLED, EXIT_STOPPED
        return status
    values = CommandValues(
        brief_file=files.brief,
        session_id=spec.session_id,
        worktree=prepared.path,
        task=spec.task,
        attempt_id=spec.attempt_id,
        base_sha=prepared.base_sha,
        branch=spec.branch,
        remote=spec.remote,
    )
    args = resolve_program(expand_exec_args(spec.exec_args, values, spec.resume_args), repo)
    try:
        with open(files.brief, "rb") as brief:
            process = subprocess.Popen(
                args,
                cwd=prepared.path,
                env=worker_environment(values, os.environ),
                stdin=brief,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                # the worker holds the worktree lock with us: while anything of it still
                # runs, no other attempt can take the worktree
                pass_fds=(lock_fd,),
            )
    except OSError as error:
        note(texts.LOG_START_FAILED.format(error=error))
        status.error, status.wrapper_exit = str(error), EXIT_NOT_STARTED
        return status
    status.worker_started = True
    files.worker_pid.write_text(f"{process.pid}\n")
    limits = Limits(spec.stall_secs, spec.wall_time_secs, spec.term_grace_secs)
    assert process.stdout is not None and process.stderr is not None
    with open(files.stderr, "ab") as errors:
        outputs: dict[IO[bytes], tuple[IO[bytes], ...]] = {
            process.stdout: (log, stdout),
            process.stderr: (log, errors),
        }
        try:
            status.wrapper_class = supervise(process, outputs, limits, lambda: stop.requested, note)
        finally:
            if process.poll() is None:  # the wrapper failed: the worker must not run unwatched
                _signal_group(process.pid, signal.SIGKILL)
                process.wait()
    status.exit_code = process.returncode
    status.wrapper_exit = EXIT_WORKER_ENDED if status.wrapper_class is None else EXIT_STOPPED
    return status


def _take_claim(spec: WrapperSpec, repo: Path, note: Callable[[str], None]) -> str | None:
    """Take the task on the remote (the run could not), now that the fetch reached it: None
    when it is this host's, else why the worker must not start (a remote that cannot be
    reached reads as the remote wait it is: the error is git's own)."""
    assert spec.claim is not None
    ref = git.claim_ref(spec.task)
    try:
        answer = git.take_claim(repo, spec.remote, spec.task, spec.claim)
    except git.GitError as error:
        note(texts.LOG_PREPARE_FAILED.format(error=error))
        return str(error)
    if answer.ours:
        note(texts.LOG_CLAIM_TAKEN.format(ref=ref, remote=spec.remote))
        return None
    if answer.refused is not None:
        reason = texts.REASON_CLAIM_REFUSED.format(ref=ref, detail=answer.refused)
    else:
        host = (answer.holder or {}).get("host", "an unknown host")
        where = answer.ref or ref  # an archived claim: where the archive keeps it
        reason = texts.REASON_CLAIMED_ELSEWHERE.format(host=host, remote=spec.remote, ref=where)
    note(f"radian arc wrapper: {reason}")
    return reason


def supervise(
    process: subprocess.Popen[bytes],
    outputs: dict[IO[bytes], tuple[IO[bytes], ...]],
    limits: Limits,
    stop_requested: Callable[[], bool],
    note: Callable[[str], None],
    monotonic: Callable[[], float] = time.monotonic,
) -> str | None:
    """Relays the worker's output to its sinks until the worker has ended and its pipes are
    closed; the class of the stop (stall, wall_time, cancelled), None when it ended by itself.
    """
    selector = selectors.DefaultSelector()
    for pipe, sinks in outputs.items():
        os.set_blocking(pipe.fileno(), False)
        selector.register(pipe, selectors.EVENT_READ, sinks)
    started = last_output = monotonic()
    # Work without output restarts the stall clock too (liveness.py says what counts).
    watch = CpuWatch(process.pid, monotonic)
    stop_class: str | None = None
    terminated_at: float | None = None
    exited_at: float | None = None
    killed = False
    try:
        while True:
            now = monotonic()
            if exited_at is None and process.poll() is not None:
                exited_at = now
                # Whatever the worker left running (its group, its Bash calls' groups) would
                # hold the worktree.
                _signal_group(process.pid, signal.SIGKILL)
                watch.signal_all(signal.SIGKILL)
            if exited_at is not None:
                # A pipe still open this long after the end belongs to an escaped process.
                if not selector.get_map() or now - exited_at >= limits.term_grace_secs:
                    return stop_class
            elif stop_class is None:
                if watch.busy():
                    last_output = now
                stop_class = _stop_class(now, started, last_output, limits, stop_requested)
                if stop_class is not None:
                    note(texts.LOG_STOPPING.format(reason=stop_class))
                    _signal_group(process.pid, signal.SIGTERM)
                    watch.signal_all(signal.SIGTERM)
                    terminated_at = now
            elif (
                not killed
                and terminated_at is not None
                and now - terminated_at >= limits.term_grace_secs
            ):
                note(texts.LOG_KILLING.format(grace=limits.term_grace_secs))
                _signal_group(process.pid, signal.SIGKILL)
                watch.signal_all(signal.SIGKILL)
                killed = True
            if not selector.get_map():
                time.sleep(POLL_SECS)
                continue
            for key, _ in selector.select(POLL_SECS):
                relayed = _relay(key.fileobj, key.data)  # type: ignore[arg-type]
                if relayed is None:
                    selector.unregister(key.fileobj)
                elif relayed:
                    last_output = monotonic()
    finally:
        selector.close()
        for pipe in outputs:
            pipe.close()


def _stop_class(
    now: float,
    started: float,
    last_output: float,
    limits: Limits,
    stop_requested: Callable[[], bool],
) -> str | None:
    if stop_requested():
        return CANCELLED
    if now - started >= limits.wall_time_secs:
        return WALL_TIME
    if now - last_output >= limits.stall_secs:
        return STALL
    return None


def _relay(pipe: IO[bytes], sinks: tuple[IO[bytes], ...]) -> int | None:
    """Copies what the pipe has to every sink: how many bytes, None at end of file."""
    try:
        data = os.read(pipe.fileno(), READ_SIZE)
    except BlockingIOError:
        return 0
    if not data:
        return None
    for sink in sinks:
        sink.write(data)
        sink.flush()
    return len(data)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _take_lock(path: Path) -> int | None:
    """The worktree lock's file descriptor, or None when another process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        return None
    return descriptor


if __name__ == "__main__":
    sys.exit(main())
