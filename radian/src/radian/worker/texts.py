"""Every text the radian worker writes: its instructions to the model, its tools' answers,
its log lines (stderr) and its model errors."""

from __future__ import annotations

SYSTEM_PROMPT = """\
You are the radian worker, a coding agent working in the git worktree {cwd}.
Do what the brief asks, using the tools: read_file, write_file, edit_file and run_command
(a shell command run in the worktree). Paths are relative to the worktree. When the work is
done, commit it and push it exactly as the brief says, then answer with a short summary.
"""

TOOL_READ = "Read a text file of the worktree."
TOOL_WRITE = "Write a text file of the worktree (created or replaced)."
TOOL_EDIT = "Replace the one occurrence of old_text in a file of the worktree by new_text."
TOOL_RUN = "Run a shell command (sh -c) in the worktree; its output and exit code come back."
PARAM_PATH = "The file's path, relative to the worktree."

WROTE = "wrote {path} ({size} characters)"
EDITED = "edited {path}"
EDIT_NOT_FOUND = "old_text was not found in {path}; nothing was changed"
EDIT_NOT_UNIQUE = "old_text occurs {count} times in {path}; give more context"
COMMAND_DONE = "exit code {code}\n{output}"
COMMAND_KILLED = "killed by {signal}\n{output}"
REFUSED = "refused by the client: {reason}"
CLIENT_ERROR = "the client could not do it: {error}"
UNKNOWN_TOOL = "there is no tool named {name}"
BAD_ARGUMENTS = "{name} needs {needed}"

LOG_PROMPT = "radian worker: prompt turn in session {session_id} ({model})"
LOG_CANCEL = "radian worker: session/cancel received: the turn stops"
LOG_MODEL_ERROR = "radian worker: model error: {error}"
LOG_NO_PRICE = "radian worker: no price for {model}: the turn's fee is not reported"
LOG_TERM = "radian worker: SIGTERM: ending after the client's cancel, at most {secs:g} s"

MODEL_ERROR = "{provider}: {error}"
NO_SUCH_SESSION = "no session {session_id} under {folder}"
BAD_MODEL = "a model is given as provider:model (anthropic:<model> or openai:<model>), not {text!r}"
MISSING_EXTRA = "the {provider} provider needs the {package} package: pip install 'radian[{extra}]'"
