"""The demo's worker: a stand-in for a coding agent that does what its brief says.

arc runs it in the task's worktree with the brief on stdin and RADIAN_ARC_* in its
environment. It reads two kinds of instruction from the brief, and nothing else:

    Write `<path>`:            followed by a fenced block: the file's whole text
    In `<path>`, replace `<old>` with `<new>`.

then commits, pushes with the command arc's delivery section gives, and prints a Result in
radian's format (see radian/docs/worker.md). A brief with no instruction it can read (a lost
brief among them) is a failed attempt: the demo cannot pass without its briefs.
Two tasks meet trouble first, as the demo shows: fix-typo's first attempt fails (an ordinary
model-class retry); write-docs' first attempt meets an overloaded model (model_error
unavailable: a model wait, not a retry).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

WRITE = re.compile(r"^Write `([^`]+)`:\s*\n+```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
REPLACE = re.compile(r"^In `([^`]+)`, replace `([^`]+)` with `([^`]+)`\.", re.MULTILINE)
PUSH = re.compile(r"^\s+(git push \S+ HEAD:\S+)\s*$", re.MULTILINE)


def main() -> int:
    task = os.environ["RADIAN_ARC_TASK"]
    attempt = os.environ["RADIAN_ARC_ATTEMPT"]
    session = os.environ.get("RADIAN_ARC_SESSION_ID") or f"demo-{task}-{attempt}"
    brief = sys.stdin.read()
    first = attempt == "001"
    if task == "fix-typo" and first:
        return report("failed", session, 0.04)
    if task == "write-docs" and first:
        error = {"kind": "unavailable", "message": "the model is overloaded"}
        return report("failed", session, 0.01, model_error=error)
    changed = follow(brief)
    push = PUSH.search(brief)
    if not changed or push is None:
        print("the brief names no file to write and no push command", file=sys.stderr)
        return report("failed", session, 0.01)
    subprocess.run(["git", "add", "-A"], check=True)
    subprocess.run(["git", "commit", "-q", "-m", f"{task}: {', '.join(changed)}"], check=True)
    subprocess.run([*shlex.split(push.group(1)), "-q"], check=True)
    return report("completed", session, 0.12 if first else 0.19)


def follow(brief: str) -> list[str]:
    """Carry out the brief's instructions in the worktree; the paths changed."""
    changed: list[str] = []
    for path, text in WRITE.findall(brief):
        Path(path).write_text(text, encoding="utf-8")
        changed.append(path)
    for path, old, new in REPLACE.findall(brief):
        target = Path(path)
        before = target.read_text(encoding="utf-8")
        if old in before:
            target.write_text(before.replace(old, new), encoding="utf-8")
            changed.append(path)
    return changed


def report(outcome: str, session: str, session_total: float, **extra: object) -> int:
    result = {"type": "result", "outcome": outcome, "session_id": session,
              "cost_usd": session_total, **extra}  # fmt: skip
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
