"""A scripted command worker for arc's tests and demo: it does what its scenario file says.

    scripted_worker.py <scenario.json>

The scenario maps an attempt id (RADIAN_ARC_ATTEMPT) to a step, with "default" for any other
attempt; a scenario may instead map task names (RADIAN_ARC_TASK) to such maps.
A step's "do" is one of:
  result   print a Result ("format": "radian" | "claude"), after committing and pushing the
           task's branch when "commit" is true (and "push" is not false)
  crash    print some output and exit 1 without a Result
  silent   print nothing and sleep (a stall)
  chatter  print a line every 0.1 s forever (runs into wall_time)
  stubborn ignore SIGTERM and sleep (the wrapper must SIGKILL it)
  sleep    sleep "secs" seconds (or until the file "until" names exists, at most "secs"),
           then act as "then" (another step)
Other keys: "outcome", "session" (default: the resumed one, else "sess-<attempt>"),
"cost" (the session total the Result reports), "model_error" (an object), "emit" (text
printed as it is before the Result), "progress" (a cost: a progress line naming the session
and what it has spent so far, printed before anything else), "stderr" (a line printed on
stderr first), "file" (the file a commit writes, default "work-{attempt}.txt"; {task} and
{attempt} filled in).
Every attempt keeps what it read on stdin (the brief arc sent it) in
<scenario folder>/sent/<task>-<attempt>.md (sent_path), and appends "<task> <attempt>
<worktree>" to <scenario folder>/ran.log (ran_path): which clone ran what.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def main() -> int:
    scenario_path = Path(sys.argv[1])
    scenario = json.loads(scenario_path.read_text())
    attempt = os.environ.get("RADIAN_ARC_ATTEMPT", "001")
    keep_what_was_sent(scenario_path.parent, attempt)
    scenario = scenario.get(os.environ.get("RADIAN_ARC_TASK", ""), scenario)
    step = scenario.get(attempt, scenario.get("default", {"do": "crash"}))
    if "stderr" in step:
        print(step["stderr"], file=sys.stderr, flush=True)
    if "progress" in step:
        report = {"type": "progress", "session_id": session_of(step, attempt),
                  "cost_usd": step["progress"]}  # fmt: skip
        print(json.dumps(report), flush=True)
    return act(step, attempt)


def ran_path(folder: Path) -> Path:
    """Where every attempt notes its task, attempt and worktree, one line each."""
    return folder / "ran.log"


def sent_path(folder: Path, task: str, attempt: str) -> Path:
    """Where the worker keeps what it read on stdin (its brief), for the tests to read."""
    return folder / "sent" / f"{task}-{attempt}.md"


def keep_what_was_sent(folder: Path, attempt: str) -> None:
    path = sent_path(folder, os.environ.get("RADIAN_ARC_TASK", "task"), attempt)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(sys.stdin.read(), encoding="utf-8")
    line = f"{os.environ.get('RADIAN_ARC_TASK', 'task')} {attempt} {Path.cwd()}\n"
    with ran_path(folder).open("a", encoding="utf-8") as ran:
        ran.write(line)


def session_of(step: dict[str, Any], attempt: str) -> str:
    return step.get("session") or os.environ.get("RADIAN_ARC_SESSION_ID") or f"sess-{attempt}"


def act(step: dict[str, Any], attempt: str) -> int:
    action = step.get("do", "result")
    if action == "crash":
        print("about to crash", flush=True)
        return 1
    if action == "silent":
        time.sleep(3600)
        return 0
    if action == "chatter":
        while True:
            print("working...", flush=True)
            time.sleep(0.1)
    if action == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("ignoring SIGTERM", flush=True)
        time.sleep(3600)
        return 0
    if action == "sleep":
        deadline = time.monotonic() + float(step.get("secs", 1))
        until = Path(step["until"]) if "until" in step else None
        while time.monotonic() < deadline and not (until is not None and until.exists()):
            time.sleep(0.05)
        return act(step.get("then", {"do": "result", "outcome": "failed"}), attempt)
    if step.get("commit"):
        commit_and_push(attempt, push=step.get("push", True),
                        file=step.get("file", "work-{attempt}.txt"))  # fmt: skip
    print(json.dumps({"type": "progress", "text": "done thinking"}), flush=True)
    if "emit" in step:
        print(step["emit"], flush=True)
    print(json.dumps(result(step, attempt)), flush=True)
    return 0


def result(step: dict[str, Any], attempt: str) -> dict[str, Any]:
    session = session_of(step, attempt)
    outcome = step.get("outcome", "completed")
    if step.get("format", "radian") == "claude":
        subtypes = {
            "completed": "success",
            "failed": "error_during_execution",
            "incomplete": "error_max_turns",
            "budget_exceeded": "error_max_budget_usd",
        }
        document = {
            "type": "result",
            "subtype": subtypes.get(outcome, outcome),
            "is_error": outcome != "completed",
            "session_id": session,
            "total_cost_usd": step.get("cost"),
            "result": step.get("text", "done"),
        }
        if "api_error_status" in step:
            document["api_error_status"] = step["api_error_status"]
        return document
    document = {"type": "result", "outcome": outcome, "session_id": session}
    if "cost" in step:
        document["cost_usd"] = step["cost"]
    if "model_error" in step:
        document["model_error"] = step["model_error"]
    return document


def commit_and_push(attempt: str, *, push: bool, file: str) -> None:
    task = os.environ.get("RADIAN_ARC_TASK", "")
    Path(file.format(task=task, attempt=attempt)).write_text(f"{task} attempt {attempt}\n")
    subprocess.run(["git", "add", "-A"], check=True)
    subprocess.run(["git", "commit", "-q", "-m", f"work of attempt {attempt}"], check=True)
    if push:
        branch = os.environ["RADIAN_ARC_BRANCH"]
        remote = os.environ["RADIAN_ARC_REMOTE"]
        subprocess.run(["git", "push", "-q", remote, f"HEAD:refs/heads/{branch}"], check=True)


if __name__ == "__main__":
    sys.exit(main())
