"""radian arc's demo: a three-task plan on a fresh example repository, run by a scripted worker.

    .venv/bin/python radian/examples/demo.py        (or: make demo)

It creates a repository with a bare remote in a temporary folder, loads plan.toml, and runs
`radian arc run --once` three times through the real command line; the worker does what each
task's brief says (demo_worker.py), and the demo ends by finding each brief's file on the
remote:
  pass 1  add-greeting delivers; fix-typo fails (retry in 10 s); write-docs waits on an
          unavailable model (5 minutes);
  pass 2  ten seconds later: fix-typo's retry is due and it delivers;
  pass 3  five minutes later: write-docs' wait is over and it delivers.
Nobody waits for those minutes: each pass sets RADIAN_ARC_FAKE_NOW, which makes arc's clock
start at that time (it runs on in real time from there). The workers and their stall
timers run in real time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent
RADIAN = Path(sys.executable).parent / "radian"
PASSES = (
    ("2026-11-30T07:00:00Z", "pass 1 at 07:00:00"),
    ("2026-11-30T07:00:15Z", "pass 2 at 07:00:15: fix-typo's retry is due"),
    ("2026-11-30T07:05:05Z", "pass 3 at 07:05:05: write-docs' model wait is over"),
)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def make_repository(root: Path) -> Path:
    remote, repo = root / "remote.git", root / "example"
    git(root, "init", "-q", "--bare", "-b", "main", str(remote))
    git(root, "init", "-q", "-b", "main", str(repo))
    git(repo, "config", "user.name", "Demo Worker")
    git(repo, "config", "user.email", "demo@example.invalid")
    (repo / "README.md").write_text("# exmaple\n\nA small example project.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    return repo


def write_config(repo: Path) -> None:
    config = repo / ".radian" / "arc.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        "[limits]\nparallel = 3\nmax_attempts = 2\n\n"
        f'[worker]\nexec_args = ["{sys.executable}", "{EXAMPLES / "demo_worker.py"}"]\n'
        "stall_secs = 20\nwall_time_secs = 60\n"
    )


def radian(repo: Path, *args: str, fake_now: str | None = None) -> None:
    env = dict(os.environ)
    env.pop("RADIAN_ARC_FAKE_NOW", None)
    if fake_now:
        env["RADIAN_ARC_FAKE_NOW"] = fake_now
    print(f"$ radian arc {' '.join(args)}", flush=True)
    done = subprocess.run([str(RADIAN), "arc", *args], cwd=repo, env=env, text=True,
                          capture_output=True)  # fmt: skip
    print(done.stdout + done.stderr, end="", flush=True)
    if done.returncode != 0:
        raise SystemExit(f"radian arc {args[0]} exited {done.returncode}")


# What each task's brief asks for, looked up on the remote's task branch at the end: a worker
# that was not sent its brief writes nothing, and the demo fails.
DELIVERED = (
    ("add-greeting", "greet.py", 'return f"Hello, {name}!"'),
    ("fix-typo", "README.md", "# Example"),
    ("write-docs", "docs.md", "Call greet(name) to greet someone."),
)


def check_delivered(remote: Path) -> None:
    print("\n== what each brief asked for, on the remote's task branches")
    for task, path, expected in DELIVERED:
        shown = subprocess.run(["git", "show", f"arc/{task}:{path}"], cwd=remote,
                               capture_output=True, text=True)  # fmt: skip
        if expected not in shown.stdout:
            raise SystemExit(f"arc/{task} lacks what its brief asked for in {path}")
        print(f"arc/{task}: {path} has {expected!r}")


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="radian-arc-demo-"))
    try:
        repo = make_repository(root)
        write_config(repo)
        print(f"== an example repository with a bare remote: {repo}\n")
        radian(repo, "plan", "load", str(EXAMPLES / "plan.toml"))
        radian(repo, "confirm", "demo")
        for fake_now, title in PASSES:
            print(f"\n== {title} (RADIAN_ARC_FAKE_NOW={fake_now})")
            radian(repo, "run", "--once", fake_now=fake_now)
        print("\n== where the tasks are (no [gate] configured: delivered tasks wait in review)")
        radian(repo, "show")
        print("\n== one task in full")
        radian(repo, "show", "write-docs")
        check_delivered(root / "remote.git")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
