"""`radian arc init --worker claude-code|codex|radian`: a [worker] section that delivers as
shipped.

Each preset gives the worker what delivery takes (edit files, git add, commit and push its
branch, run the repository's tests) and nothing more, as far as the CLI allows. The brief arc
hands the worker ends with the literal push command (texts.DELIVERY), so no preset needs a
shell variable: Claude Code's permission check refuses `$VAR` in a Bash command.

Claude Code (checked against 2.1.332):
- `-p` with the brief on stdin; `stream-json --verbose --include-partial-messages`, so the
  session id comes first (system/init), every content block streams, and the version is known
  (the cost scope depends on it);
- `--permission-mode default` with `--allowedTools`: in `-p` nothing asks, so a tool not listed
  is denied. `acceptEdits` denies every Bash call that is not read-only in `-p` (git add and
  git push: "This command requires approval"), and `bypassPermissions` is refused as root
  unless IS_SANDBOX=1 and allows everything;
- Bash is allowed for git add/commit/push/status/diff/log and the usual test commands; add
  your own (`Bash(npm test:*)`) to the list.

Codex (checked against 0.171.0):
- `codex exec --json`, the brief on stdin (`-`), resumed with the `resume <thread id>`
  subcommand;
- `--sandbox danger-full-access`: Codex's `workspace-write` sandbox keeps every `.git` folder
  read-only (checked: `git commit` fails with "Read-only file system" on the worktree's index),
  so a sandboxed Codex cannot commit at all. arc's worktree is the only fence: run it where that
  is acceptable (a container);
- `model` names the model whose price turns Codex's tokens into cost (formats/prices.py).
"""

from __future__ import annotations

CLAUDE_CODE_TOOLS = ",".join(
    [
        "Read",
        "Edit",
        "MultiEdit",
        "Write",
        "Glob",
        "Grep",
        "TodoWrite",
        "Bash(git add:*)",
        "Bash(git commit:*)",
        "Bash(git push:*)",
        "Bash(git status:*)",
        "Bash(git diff:*)",
        "Bash(git log:*)",
        "Bash(make test:*)",
        "Bash(pytest:*)",
        "Bash(python -m pytest:*)",
    ]
)

PRESETS: dict[str, str] = {
    "claude-code": f"""\
[worker]
kind = "command"
# Claude Code (radian/docs/worker.md, "Claude Code"): the brief on stdin, stream-json events,
# the tools delivery needs and nothing more. Add your test command to --allowedTools.
exec_args = ["claude", "-p", "--output-format", "stream-json", "--verbose",
             "--include-partial-messages", "--permission-mode", "default",
             "--allowedTools", "{CLAUDE_CODE_TOOLS}",
             "{{resume_args}}"]
resume_args = ["--resume", "{{session_id}}"]
stall_secs = 300              # no output and no work for this long: stopped (stall)
wall_time_secs = 3600         # an attempt may run this long (wall_time)
session = "resume"            # "resume" the previous attempt's session, or start "fresh"
term_grace_secs = 10          # SIGTERM, then SIGKILL after this long
""",
    "codex": """\
[worker]
kind = "command"
# Codex CLI (radian/docs/worker.md, "Codex"): `codex exec --json`, the brief on stdin. Its
# workspace-write sandbox keeps .git read-only, so it runs unsandboxed in arc's worktree.
exec_args = ["codex", "exec", "--json", "--sandbox", "danger-full-access",
             "{resume_args}", "-"]
resume_args = ["resume", "{session_id}"]
model = "gpt-5-codex"         # its price turns Codex's tokens into cost
stall_secs = 300              # no output and no work for this long: stopped (stall)
wall_time_secs = 3600         # an attempt may run this long (wall_time)
session = "resume"            # "resume" the previous attempt's session, or start "fresh"
term_grace_secs = 10          # SIGTERM, then SIGKILL after this long
# [worker.prices."gpt-5-codex"]  # USD per million tokens; adds to or replaces the built-ins
# input = 1.25
# cached_input = 0.125
# output = 10.0
""",
}

PRESETS["radian"] = """\
[worker]
kind = "radian"
# The radian worker over ACP (radian/docs/acp.md): `radian worker`, radian's own coding agent,
# its model from the provider's official client (pip install 'radian[anthropic]' or
# 'radian[openai]'; ANTHROPIC_API_KEY / OPENAI_API_KEY). It edits and runs commands through
# arc, which allows both inside the task's worktree and nothing outside it.
exec_args = ["radian", "worker", "--model", "anthropic:claude-sonnet-4-5"]
stall_secs = 300              # no output and no work for this long: stopped (stall)
wall_time_secs = 3600         # an attempt may run this long (wall_time)
session = "resume"            # session/load the previous attempt's session, or start "fresh"
term_grace_secs = 10          # SIGTERM, then SIGKILL after this long

[worker.permissions]          # arc's answer to the worker's permission requests
edits = "allow"               # allow | refuse: file edits inside the worktree
commands = "allow"            # allow | refuse: commands run inside the worktree
"""

WORKER_NAMES = tuple(PRESETS)


def config_with_worker(default_config: str, worker: str) -> str:
    """The default config with its [worker] section replaced by the preset's."""
    start = default_config.index("[worker]\n")
    end = default_config.index("\n# The verification stages", start)
    return default_config[:start] + PRESETS[worker] + default_config[end:]
