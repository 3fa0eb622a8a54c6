"""A scripted worker for the gate's tests and demo: writes files, commits, pushes, reports.

    gate_worker.py <scenario.json>

The scenario maps a task (RADIAN_ARC_TASK) to attempts ("001", ...; "default" for others).
A step:
  files      {path: text}: written in the worktree ("{attempt}" in a text is the attempt id)
  main_push  {"clone": path, "files": {path: text}}: after pushing the task's branch, a
             colleague commits these on main in that clone and pushes (a conflict or a
             moved target, made at a known moment)
  outcome    the Result's outcome (default "completed"); cost: the session total in USD
  sleep      seconds to sleep first; stubborn: ignore SIGTERM and sleep (SIGKILL ends it)
Mid-merge (the attempt started with MERGE_HEAD), the step's files resolve the conflict and
the commit concludes the merge. Each attempt appends a line to <scenario>.log saying whether
it started mid-merge, and keeps what it read on stdin (its brief) in
<scenario folder>/sent/<task>-<attempt>.md.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def write_files(root: Path, files: dict[str, str], attempt: str) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("{attempt}", attempt), encoding="utf-8")


def main() -> int:
    scenario_path = Path(sys.argv[1])
    task = os.environ["RADIAN_ARC_TASK"]
    attempt = os.environ["RADIAN_ARC_ATTEMPT"]
    sent = scenario_path.parent / "sent" / f"{task}-{attempt}.md"
    sent.parent.mkdir(parents=True, exist_ok=True)
    sent.write_text(sys.stdin.read(), encoding="utf-8")  # the brief arc sent, for the tests
    steps = json.loads(scenario_path.read_text())[task]
    step = steps.get(attempt, steps.get("default", {}))
    if step.get("stubborn"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(3600)
    time.sleep(float(step.get("sleep", 0)))
    here = Path.cwd()
    mid_merge = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", "MERGE_HEAD"], capture_output=True
    ).returncode == 0  # fmt: skip
    with scenario_path.with_suffix(".log").open("a") as log:
        log.write(f"{task} {attempt} mid_merge={mid_merge}\n")
    write_files(here, step.get("files", {}), attempt)
    git(here, "add", "-A")
    git(here, "commit", "-q", "--allow-empty", "--no-edit", "-m", f"{task} attempt {attempt}")
    branch, remote = os.environ["RADIAN_ARC_BRANCH"], os.environ["RADIAN_ARC_REMOTE"]
    git(here, "push", "-q", remote, f"HEAD:refs/heads/{branch}")
    if "main_push" in step:
        clone = Path(step["main_push"]["clone"])
        git(clone, "fetch", "-q", "origin")
        git(clone, "checkout", "-q", "-B", "main", "origin/main")
        write_files(clone, step["main_push"]["files"], attempt)
        git(clone, "add", "-A")
        git(clone, "commit", "-q", "-m", f"main moves during {task} attempt {attempt}")
        git(clone, "push", "-q", "origin", "main")
    result = {"type": "result", "outcome": step.get("outcome", "completed"),
              "session_id": f"{task}-session", "cost_usd": step.get("cost", 0.0)}  # fmt: skip
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
