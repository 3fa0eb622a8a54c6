"""The demo's worker: a stand-in for a coding agent, scripted per task.

arc runs it in the task's worktree with the brief on stdin and RADIAN_ARC_* in its
environment. It prints a Result in radian's format (see radian/docs/worker.md):
- add-greeting: writes greet.py, commits, pushes the task branch, reports completed;
- fix-typo: its first attempt fails (an ordinary model-class retry), the next one delivers;
- write-docs: its first attempt meets an overloaded model (model_error unavailable: a model
  wait, not a retry), the next one delivers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

WORK = {
    "add-greeting": ("greet.py", 'def greet(name):\n    return f"Hello, {name}!"\n'),
    "fix-typo": ("README.md", "# Example\n\nA small example project.\n"),
    "write-docs": ("docs.md", "# Docs\n\nCall greet(name) to greet someone.\n"),
}


def main() -> int:
    task = os.environ["RADIAN_ARC_TASK"]
    attempt = os.environ["RADIAN_ARC_ATTEMPT"]
    session = os.environ.get("RADIAN_ARC_SESSION_ID") or f"demo-{task}-{attempt}"
    sys.stdin.read()  # the brief
    first = attempt == "001"
    if task == "fix-typo" and first:
        return report("failed", session, 0.04)
    if task == "write-docs" and first:
        error = {"kind": "unavailable", "message": "the model is overloaded"}
        return report("failed", session, 0.01, model_error=error)
    path, text = WORK[task]
    Path(path).write_text(text)
    subprocess.run(["git", "add", "-A"], check=True)
    subprocess.run(["git", "commit", "-q", "-m", f"{task}: done"], check=True)
    branch, remote = os.environ["RADIAN_ARC_BRANCH"], os.environ["RADIAN_ARC_REMOTE"]
    subprocess.run(["git", "push", "-q", remote, f"HEAD:refs/heads/{branch}"], check=True)
    return report("completed", session, 0.12 if first else 0.19)


def report(outcome: str, session: str, session_total: float, **extra: object) -> int:
    result = {"type": "result", "outcome": outcome, "session_id": session,
              "cost_usd": session_total, **extra}  # fmt: skip
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
