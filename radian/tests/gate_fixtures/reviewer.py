"""A scripted reviewer: prints the verdict JSON its first argument names.

Usage: reviewer.py <mode> <diff_file>. Modes:
  clean         no findings
  minor         one minor finding
  major         one major finding
  pre_existing  one critical finding that was there before the task
  blocking      an earlier build's {"blocking", "suggestions"} verdict
  garbage       no JSON at all
  unavailable   a model_error object
  sleep         never answers (for the timeout)
  todo          a major finding for each added line with TODO in the diff, else none
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

COST_MICROS = 250_000


def main() -> int:
    mode, diff_file = sys.argv[1], sys.argv[2]
    diff = Path(diff_file).read_text(encoding="utf-8")
    # What the review was given to read as the task's brief, kept for the tests.
    brief = Path(os.environ["RADIAN_BRIEF_FILE"]).read_text(encoding="utf-8")
    Path(diff_file).with_suffix(".seen-brief.md").write_text(brief, encoding="utf-8")
    print("reviewing", len(diff), "bytes of diff", file=sys.stderr)
    findings: list[dict[str, object]] = []
    if mode == "garbage":
        print("I think it looks fine, mostly.")
        return 0
    if mode == "sleep":
        time.sleep(60)
        return 0
    if mode == "unavailable":
        error = {"kind": "unavailable", "message": "overloaded"}
        print(json.dumps({"model_error": error, "cost_micros": 1000}))
        return 3
    if mode == "blocking":
        verdict = {
            "blocking": [{"title": "a small thing the old build blocked on", "path": "x.py"}],
            "suggestions": [{"title": "rename", "level": "critical"}],
            "cost_micros": COST_MICROS,
        }
        print(json.dumps(verdict))
        return 0
    if mode in ("minor", "major"):
        findings.append(
            {
                "level": mode,
                "title": f"a {mode} issue",
                "path": "src/calc/ops.py",
                "line": 2,
                "pre_existing": False,
            }
        )
    if mode == "pre_existing":
        findings.append(
            {
                "level": "critical",
                "title": "old problem",
                "path": "src/calc/ops.py",
                "line": 1,
                "pre_existing": True,
            }
        )
    if mode == "todo":
        for line in diff.splitlines():
            if line.startswith("+") and "TODO" in line:
                findings.append(
                    {
                        "level": "major",
                        "title": f"unfinished: {line[1:].strip()}",
                        "path": "src/calc/ops.py",
                        "line": None,
                        "pre_existing": False,
                    }
                )
    print(json.dumps({"findings": findings, "cost_micros": COST_MICROS}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
