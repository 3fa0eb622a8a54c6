#!/usr/bin/env python3
"""A scripted worker that does what its options say, then prints a prepared Result.

--record PATH   write what it was given (argv, RADIAN_ARC_* environment, stdin, the brief
                file, cwd, merge state) to PATH as JSON
--commit NAME   write NAME in the worktree and commit it (after a merge in progress, if any)
--push          push HEAD to the task's branch on the remote
--dirty         leave an untracked file behind
--emit PATH     print PATH's text verbatim on stdout (the Result, in any format)
--exit CODE     exit with CODE
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record")
    parser.add_argument("--commit")
    parser.add_argument("--push", action="store_true")
    parser.add_argument("--dirty", action="store_true")
    parser.add_argument("--emit")
    parser.add_argument("--exit", type=int, default=0)
    options, _rest = parser.parse_known_args()
    stdin_text = sys.stdin.read()
    if options.record:
        brief_file = os.environ.get("RADIAN_ARC_BRIEF_FILE", "")
        record = {
            "argv": sys.argv[1:],
            "env": {k: v for k, v in os.environ.items() if k.startswith("RADIAN_ARC_")},
            "stdin": stdin_text,
            "brief_file_text": Path(brief_file).read_text() if brief_file else None,
            "cwd": os.getcwd(),
            "merge_head": subprocess.run(
                ["git", "rev-parse", "-q", "--verify", "MERGE_HEAD"], capture_output=True
            ).returncode
            == 0,
            "conflicts": git("diff", "--name-only", "--diff-filter=U").split(),
            "files": sorted(p.name for p in Path.cwd().iterdir() if p.name != ".git"),
        }
        Path(options.record).write_text(json.dumps(record))
    print("working on the brief", flush=True)
    print("a note on stderr", file=sys.stderr, flush=True)
    if options.commit:
        for path in git("diff", "--name-only", "--diff-filter=U").split():
            Path(path).write_text("resolved\n")
        Path(options.commit).write_text(f"{options.commit}\n")
        git("add", "-A")
        git("commit", "-q", "-m", f"worker: {options.commit}")
    if options.push:
        branch = os.environ["RADIAN_ARC_BRANCH"]
        git("push", "-q", os.environ["RADIAN_ARC_REMOTE"], f"HEAD:{branch}")
    if options.dirty:
        Path("left-behind.txt").write_text("uncommitted\n")
    if options.emit:
        sys.stdout.write(Path(options.emit).read_text())
        sys.stdout.flush()
    exit_code: int = options.exit
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
