"""Commands run on the events people want to hear about: `[[hooks]]` in .radian/arc.toml.

    [[hooks]]
    events = ["integrated", "failed", "plan_done"]     # default: every hook event
    run = "notify-send arc \"$RADIAN_EVENT_TEXT\""      # run by /bin/sh in the repository
    timeout_secs = 10

A hook gets the event as one JSON document on its stdin and in environment variables
(RADIAN_EVENT, RADIAN_TASK, RADIAN_PLAN, RADIAN_STATE, RADIAN_ATTEMPT_ID, RADIAN_EVENT_TEXT).
Hooks run one at a time on a thread of their own, in the order of the events, so a slow hook
never holds the loop; one that outlives its timeout is killed with its process group. A hook
that fails, hangs or cannot start is logged and changes nothing: the loop goes on.

The hook events are arc's events as a person names them (HOOK_OF_STATE, HOOK_OF_KIND, as
data): a task integrated, failed (any failed.* state), paused on its budget, waiting for a
rework (review.rework_pending), a model wait started, and a plan done (every task of it
integrated or failed).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from radian.arc.clock import Clock, format_utc
from radian.arc.config import HookConfig
from radian.arc.events import Event
from radian.arc.logs import logger
from radian.arc.states import State
from radian.arc.store_protocol import Store

log = logger(__name__)

# The state an event leaves its task in -> the hook event it is.
HOOK_OF_STATE: dict[State, str] = {
    State.INTEGRATED: "integrated",
    State.IRRECOVERABLE: "failed",
    State.CANCELLED: "failed",
    State.EXHAUSTED: "failed",
    State.PAUSED_BUDGET: "paused_budget",
    State.REWORK_PENDING: "rework_pending",
}
# Events that are hook events whatever state they leave (a wait keeps the task's state).
HOOK_OF_KIND: dict[str, str] = {"model_wait": "model_wait"}
PLAN_DONE = "plan_done"
FINISHED = frozenset(state for state, name in HOOK_OF_STATE.items()
                     if name in ("integrated", "failed"))  # fmt: skip


def unfinished_tasks(store: Store, plan: str) -> set[str]:
    """The tasks of `plan` that are not integrated or failed (a damaged one counts as not)."""
    found = store.plan_if_there(plan)
    if found is None:
        return set()
    loaded = {name: store.try_load_task(name) for name in found.tasks}
    return {name for name, task in loaded.items() if task is None or task.state not in FINISHED}


@dataclass(frozen=True)
class HookEvent:
    name: str  # one of HOOK_EVENTS
    at: str  # UTC
    text: str
    task: str | None = None
    plan: str | None = None
    state: str | None = None
    attempt_id: str | None = None

    def document(self) -> dict[str, Any]:
        return {"event": self.name, "at": self.at, "task": self.task, "plan": self.plan,
                "state": self.state, "attempt_id": self.attempt_id, "text": self.text}  # fmt: skip

    def environment(self) -> dict[str, str]:
        values = {"RADIAN_EVENT": self.name, "RADIAN_TASK": self.task, "RADIAN_PLAN": self.plan,
                  "RADIAN_STATE": self.state, "RADIAN_ATTEMPT_ID": self.attempt_id,
                  "RADIAN_EVENT_TEXT": self.text}  # fmt: skip
        return {key: value or "" for key, value in values.items()}


def hook_name(event: Event) -> str | None:
    """The hook event `event` is, or None when hooks do not hear about it."""
    if event.kind in HOOK_OF_KIND:
        return HOOK_OF_KIND[event.kind]
    if event.state is None:
        return None
    try:
        return HOOK_OF_STATE.get(State(event.state))
    except ValueError:
        return None


@dataclass(frozen=True)
class HookRun:
    """How one hook ran: exit code (None: killed at its timeout or could not start)."""

    hook: str
    event: str
    exit_code: int | None
    error: str | None = None


class Hooks:
    """Turns the loop's events into hook events and runs the hooks that want them.

    `plan_of(task)` names a task's plan; `unfinished(plan)` names its tasks that are not
    integrated or failed. It is asked once per plan, when a first task of it finishes, and
    once more before "plan_done" is said: a plan of N tasks costs two scans, not N."""

    def __init__(
        self,
        hooks: list[HookConfig],
        repo_root: Path,
        clock: Clock,
        *,
        plan_of: Callable[[str], str | None],
        unfinished: Callable[[str], set[str]],
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.hooks = hooks
        self.repo_root = repo_root
        self.clock = clock
        self.plan_of = plan_of
        self.unfinished = unfinished
        self.environ = dict(os.environ if environ is None else environ)
        self.ran: list[HookRun] = []  # every hook run, in order (for the report and tests)
        self._done_plans: set[str] = set()
        self._open: dict[str, set[str]] = {}  # plan -> its tasks not finished, as last seen
        self._queue: queue.Queue[HookEvent | None] = queue.Queue()
        self._thread = threading.Thread(target=self._work, name="arc-hooks", daemon=True)
        self._thread.start()

    def __call__(self, event: Event) -> None:
        """The loop's on_event: never raises, never waits for a hook."""
        name = hook_name(event)
        if name is None:
            return
        plan = event.plan or (self.plan_of(event.task) if event.task else None)
        now = format_utc(self.clock.now())
        self._queue.put(HookEvent(name, now, event.text, event.task, plan, event.state,
                                  event.attempt_id))  # fmt: skip
        if name in ("integrated", "failed") and plan is not None and event.task is not None:
            self._finished(plan, event.task, now)

    def _finished(self, plan: str, task: str, now: str) -> None:
        if plan in self._done_plans:
            return
        still = self._open.setdefault(plan, self.unfinished(plan))
        still.discard(task)
        if not still:
            still.update(self.unfinished(plan))  # a task reopened meanwhile (a rework)
        if not still:
            self._done_plans.add(plan)
            self._queue.put(HookEvent(PLAN_DONE, now, f"plan {plan} done", plan=plan))

    def close(self) -> None:
        """Run what is queued, then stop: each hook is bounded by its timeout."""
        self._queue.put(None)
        self._thread.join()

    def _work(self) -> None:
        while (event := self._queue.get()) is not None:
            for hook in self.hooks:
                if event.name in hook.events:
                    self.ran.append(self._run(hook, event))

    def _run(self, hook: HookConfig, event: HookEvent) -> HookRun:
        environment = {**self.environ, **event.environment()}
        try:
            process = subprocess.Popen(
                ["/bin/sh", "-c", hook.run],
                cwd=self.repo_root,
                env=environment,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,  # a timeout kills the hook's children too
            )
        except OSError as error:
            log.warning("hook %r for %s could not start: %s", hook.run, event.name, error)
            return HookRun(hook.run, event.name, None, str(error))
        try:
            _, stderr = process.communicate(
                json.dumps(event.document()).encode(), timeout=hook.timeout_secs
            )
        except subprocess.TimeoutExpired:
            _kill_group(process)
            log.warning("hook %r for %s outlived %g s: killed", hook.run, event.name,
                        hook.timeout_secs)  # fmt: skip
            return HookRun(hook.run, event.name, None, f"timed out after {hook.timeout_secs:g} s")
        if process.returncode != 0:
            said = stderr.decode(errors="replace").strip()[-500:]
            log.warning("hook %r for %s exited %d: %s", hook.run, event.name,
                        process.returncode, said)  # fmt: skip
            return HookRun(hook.run, event.name, process.returncode, said or None)
        return HookRun(hook.run, event.name, 0)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate()
