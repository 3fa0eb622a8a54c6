"""Every line the ACP client writes for a person (into the attempt's worker.log), in one place."""

from __future__ import annotations

USAGE = (
    "usage: python -m radian.arc.worker.acp [--session-id ID] [--edits allow|refuse] "
    "[--commands allow|refuse] -- <agent program> [args...]"
)

POLICY_SAYS = "{what}: {verdict} by [worker.permissions]"
INSIDE_WORKTREE = "inside the worktree"
OUTSIDE_WORKTREE = "outside the worktree: {path}"
OUTSIDE_WORKTREE_ERROR = "radian arc serves files inside the task's worktree only: {path}"
COMMANDS_REFUSED_ERROR = "radian arc's [worker.permissions] refuses commands"

NO_COST = "the agent reported no cost for this prompt turn"

LOG_STARTED = "acp: agent {program} started (pid {pid})"
LOG_SESSION_NEW = "acp: session/new -> {session_id}"
LOG_SESSION_LOAD = "acp: session/load {session_id}"
LOG_NO_LOAD = "acp: the agent cannot load sessions: a fresh session instead of {session_id}"
LOG_LOAD_FAILED = "acp: session/load {session_id} failed ({error}): a fresh session instead"
LOG_PROMPT = "acp: session/prompt ({chars} characters of brief)"
LOG_UPDATE = "acp: {kind}: {text}"
LOG_PERMISSION = "acp: permission for {title!r} ({kind}): {verdict}, {reason}"
LOG_FS = "acp: {method} {path}"
LOG_FS_REFUSED = "acp: {method} {path} refused: outside the worktree"
LOG_TERMINAL = "acp: terminal {terminal_id}: {command}"
LOG_TERMINAL_OUTPUT = "acp: terminal {terminal_id}: {size} bytes of output"
LOG_TERMINAL_BUSY = "acp: terminal {terminal_id} still running (cpu {cpu:.1f} s)"
LOG_TERMINAL_EXIT = "acp: terminal {terminal_id} exited ({status})"
LOG_CANCEL = "acp: stop requested: session/cancel sent"
LOG_STOP = "acp: prompt turn ended: stopReason {stop_reason}"
LOG_RPC_ERROR = "acp: the agent failed: {error}"
LOG_AGENT_EXIT = "acp: the agent exited ({code}) before the turn ended"
