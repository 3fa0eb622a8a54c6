"""radian arc with the real Claude Code CLI as its worker, against a local stand-in model.

    .venv/bin/python radian/examples/claude_demo.py        (or: make demo)

Needs node and `make npm-tools` (the pinned @anthropic-ai/claude-code in .cache/npm-tools);
without them it says so and exits 0. The plan is loaded from a plan file, as a person loads
one. The "model" is the Anthropic Messages API stand-in from radian/tests/standins on
127.0.0.1: it plays an agent that reads the prompt Claude Code sent it, writes the file the
task's brief names, commits, and pushes with the literal command arc put in the brief; a
prompt without the brief gets "nothing to do", and the demo fails when the file its brief
names is not on the pushed branch. No key, no internet. The worker's
exec_args are exactly what `radian arc init --worker claude-code` writes, with the program
pointed at the npm copy.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent
TESTS = EXAMPLES.parent / "tests"
sys.path.insert(0, str(TESTS))
RADIAN = Path(sys.executable).parent / "radian"

from npm_tools import find_cli  # noqa: E402
from standins.anthropic_api import AnthropicStandIn, Reply, bash, text, write  # noqa: E402
from standins.claude_env import claude_env  # noqa: E402

from radian.arc.config import DEFAULT_CONFIG  # noqa: E402
from radian.arc.worker.presets import config_with_worker  # noqa: E402

PLAN = """[plan]
name = "claude-demo"

[[task]]
name = "add-greeting"
brief = "# Add a greeting\\n\\nAdd GREETING.md with one line: Hello from arc.\\n"
"""
ASKED = re.compile(r"^Add (\S+) with one line: (.+)$", re.MULTILINE)
PUSH = re.compile(r"^\s+(git push \S+ HEAD:\S+)\s*$", re.MULTILINE)


def agent_in(tree: Path) -> Callable[[str], list[Reply]]:
    """The scripted agent: it does what the prompt's brief asks, and nothing without it."""

    def act(prompt: str) -> list[Reply]:
        asked, push = ASKED.search(prompt), PUSH.search(prompt)
        if asked is None or push is None:
            return [text("Nothing to do: the prompt names no file and no push command.")]
        path, line = asked.groups()
        return [
            write(str(tree / path), line + "\n"),
            bash("git add -A"),
            bash(f'git commit -q -m "Add {path}"'),
            bash(push.group(1)),
            text(f"Added {path}, committed and pushed."),
        ]

    return act


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def radian(repo: Path, env: dict[str, str], *args: str) -> None:
    print(f"$ radian arc {' '.join(args)}", flush=True)
    done = subprocess.run([str(RADIAN), "arc", *args], cwd=repo, env=env, text=True,
                          capture_output=True)  # fmt: skip
    print(done.stdout + done.stderr, end="", flush=True)
    if done.returncode != 0:
        raise SystemExit(f"radian arc {args[0]} exited {done.returncode}")


def main() -> int:
    cli = find_cli("claude")
    if isinstance(cli, str):
        print(f"claude demo skipped: {cli}")
        return 0
    root = Path(tempfile.mkdtemp(prefix="radian-arc-claude-demo-"))
    try:
        remote, repo = root / "remote.git", root / "example"
        git(root, "init", "-q", "--bare", "-b", "main", str(remote))
        git(root, "init", "-q", "-b", "main", str(repo))
        git(repo, "config", "user.name", "Claude Demo")
        git(repo, "config", "user.email", "demo@example.invalid")
        (repo / "README.md").write_text("# example\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "initial")
        git(repo, "remote", "add", "origin", str(remote))
        git(repo, "push", "-q", "origin", "main")
        config = tomllib.loads(config_with_worker(DEFAULT_CONFIG, "claude-code"))["worker"]
        exec_args = [str(cli.path), *config["exec_args"][1:]]
        (repo / ".radian").mkdir()
        (repo / ".radian" / "arc.toml").write_text(
            "[worker]\n"
            f"exec_args = {json.dumps(exec_args)}\n"
            "stall_secs = 60\nwall_time_secs = 300\n"
        )
        (root / "plan.toml").write_text(PLAN)
        tree = repo / ".radian" / "arc" / "worktrees" / "add-greeting"
        print(f"== Claude Code {cli.version} ({cli.path}) against a local stand-in model\n")
        with AnthropicStandIn(agent=agent_in(tree)) as stand_in:
            env = {**os.environ, **claude_env(stand_in.url, root / "home")}
            env.pop("RADIAN_ARC_FAKE_NOW", None)
            radian(repo, env, "plan", "load", str(root / "plan.toml"))
            radian(repo, env, "confirm", "claude-demo")
            radian(repo, env, "run", "--once")
            radian(repo, env, "show", "add-greeting")
        print("\n== the pushed branch")
        shown = subprocess.run(["git", "log", "--format=%s", "-1", "arc/add-greeting"],
                               cwd=remote, capture_output=True, text=True)  # fmt: skip
        print(shown.stdout, end="")
        pushed = subprocess.run(["git", "show", "arc/add-greeting:GREETING.md"], cwd=remote,
                                capture_output=True, text=True)  # fmt: skip
        if pushed.stdout != "Hello from arc.\n":
            raise SystemExit("claude demo: arc/add-greeting lacks the GREETING.md of its brief")
        print("GREETING.md: " + pushed.stdout, end="")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
