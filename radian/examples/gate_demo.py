"""The gate, end to end: three tasks of one plan on a real git repository.

    python radian/examples/gate_demo.py

- `double` passes its gate (pytest, then the review) and is integrated into main;
- `halve` leaves a TODO the reviewer flags as major: arc writes "## Rework 1" listing the
  finding, the next attempt fixes it, and the task is integrated;
- `tidy-add` changes a line a colleague changes on main meanwhile: the gate finds the
  conflict, arc writes "## Rework 1 (conflict with main)", the next attempt starts
  mid-merge, resolves it, and the task is integrated.

Everything is real (a bare remote, clones, `radian arc` through its console script, pytest
as the commands stage) except the worker and the reviewer, which are small scripts.
`run_demo(root)` returns the printed lines; `main()` exits non-zero if a task did not end
in done.integrated.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

PYTHON = sys.executable
RADIAN = str(Path(PYTHON).parent / "radian")

PROJECT = {
    "src/calc/__init__.py": "",
    "src/calc/ops.py": "def add(a, b):\n    return a + b\n",
    "tests/check_ops.py": (
        "from calc.ops import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    ),
    "pyproject.toml": textwrap.dedent(
        """\
        [tool.pytest.ini_options]
        pythonpath = ["src"]
        python_files = ["check_*.py"]
        addopts = "-p no:cacheprovider -p no:hypothesispytest"
        """
    ),
    ".gitignore": "__pycache__/\n",
}

# The scripted worker: per task and attempt, the files it writes, each only when its brief
# names it; optionally a colleague's push to main right after (the conflict). Mid-merge, its
# files resolve the conflict.
WORKER = textwrap.dedent(
    """\
    import json, os, subprocess, sys
    from pathlib import Path

    def git(cwd, *args):
        subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)

    scenario = json.loads(Path(sys.argv[1]).read_text())[os.environ["RADIAN_ARC_TASK"]]
    step = scenario.get(os.environ["RADIAN_ARC_ATTEMPT"], scenario["default"])
    brief = sys.stdin.read()
    unasked = [name for name in step["files"] if name not in brief]
    if unasked:  # it writes only files its brief names: a lost brief gets nothing done
        print("the brief does not name " + ", ".join(unasked), file=sys.stderr)
        print(json.dumps({"type": "result", "outcome": "failed", "session_id": "s-" +
                          os.environ["RADIAN_ARC_TASK"], "cost_usd": 0.01}))
        sys.exit(0)
    for name, text in step["files"].items():
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_text(text)
    git(".", "add", "-A")
    git(".", "commit", "-q", "--no-edit", "-m", "work on " + os.environ["RADIAN_ARC_TASK"])
    branch = os.environ["RADIAN_ARC_BRANCH"]
    git(".", "push", "-q", os.environ["RADIAN_ARC_REMOTE"], "HEAD:" + branch)
    colleague = step.get("colleague")
    if colleague:
        clone = Path(colleague["clone"])
        git(clone, "pull", "-q", "origin", "main")
        for name, text in colleague["files"].items():
            (clone / name).write_text(text)
        git(clone, "commit", "-qam", "a colleague's change")
        git(clone, "push", "-q", "origin", "main")
    print(json.dumps({"type": "result", "outcome": "completed", "session_id": "s-" +
                      os.environ["RADIAN_ARC_TASK"], "cost_usd": 0.01}))
    """
)

# The scripted reviewer: every added line with a TODO is a major finding.
REVIEWER = textwrap.dedent(
    """\
    import json, sys
    from pathlib import Path

    findings = [
        {"level": "major", "title": "unfinished: " + line[1:].strip(), "path": None,
         "line": None, "pre_existing": False}
        for line in Path(sys.argv[1]).read_text().splitlines()
        if line.startswith("+") and "TODO" in line
    ]
    print(json.dumps({"findings": findings, "cost_micros": 20000}))
    """
)


# The plan, loaded as a person would load it; each brief names the files to write.
PLAN = textwrap.dedent(
    """\
    [plan]
    name = "demo"
    auto_rework = 1

    [[task]]
    name = "double"
    brief = "# double\\n\\nAdd double(x) in src/calc/double.py, tested in tests/check_double.py.\\n"

    [[task]]
    name = "halve"
    brief = "# halve\\n\\nAdd halve(x) in src/calc/halve.py, tested in tests/check_halve.py.\\n"

    [[task]]
    name = "tidy-add"
    brief = "# tidy-add\\n\\nWrite add() in src/calc/ops.py with sum().\\n"
    """
)


def module(name: str, body: str) -> str:
    return f"def {name}(x):\n{body}"


def scenario(colleague_clone: Path) -> dict[str, object]:
    check = "from calc.{0} import {0}\n\n\ndef test_{0}():\n    assert {0}(4) == {1}\n"
    return {
        "double": {"default": {"files": {
            "src/calc/double.py": module("double", "    return x * 2\n"),
            "tests/check_double.py": check.format("double", 8)}}},
        "halve": {
            "001": {"files": {
                "src/calc/halve.py": module("halve", "    # TODO odd numbers\n    return x // 2\n"),
                "tests/check_halve.py": check.format("halve", 2)}},
            "default": {"files": {
                "src/calc/halve.py": module("halve", "    return x / 2\n"),
                "tests/check_halve.py": check.format("halve", 2)}},
        },
        "tidy-add": {
            "001": {
                "files": {"src/calc/ops.py": "def add(a, b):\n    return sum((a, b))\n"},
                "colleague": {"clone": str(colleague_clone), "files": {
                    "src/calc/ops.py": "def add(a, b):\n    return b + a  # commutative\n"}},
            },
            "default": {"files": {
                "src/calc/ops.py": "def add(a, b):\n    return sum((a, b))  # commutative\n"}},
        },
    }  # fmt: skip


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def clone(remote: Path, path: Path, name: str) -> Path:
    git(remote.parent, "clone", "-q", str(remote), str(path))
    git(path, "config", "user.name", name)
    git(path, "config", "user.email", f"{name}@example.invalid")
    return path


def arc(repo: Path, *args: str, lines: list[str] | None) -> str:
    """Run `radian arc <args>`; print it and what it printed unless `lines` is None."""
    done = subprocess.run([RADIAN, "arc", "--repo", str(repo), *args], capture_output=True,
                          text=True, check=False)  # fmt: skip
    if lines is not None:
        shown = f"$ radian arc {' '.join(args)}"
        print(shown)
        lines.append(shown)
        for line in (done.stdout + done.stderr).splitlines():
            print(f"  {line}")
            lines.append(line)
    if done.returncode != 0:
        raise SystemExit(f"radian arc {args[0]} exited {done.returncode}")
    return done.stdout


def run_demo(root: Path) -> list[str]:
    remote = root / "remote.git"
    git(root, "init", "-q", "--bare", "--initial-branch=main", str(remote))
    seed = clone(remote, root / "seed", "seed")
    for name, text in PROJECT.items():
        (seed / name).parent.mkdir(parents=True, exist_ok=True)
        (seed / name).write_text(text)
    git(seed, "add", "-A")
    git(seed, "commit", "-qm", "calc")
    git(seed, "push", "-q", "origin", "HEAD:main")
    repo = clone(remote, root / "repo", "lead")
    colleague = clone(remote, root / "colleague", "colleague")

    tools = root / "tools"
    tools.mkdir()
    (tools / "worker.py").write_text(WORKER)
    (tools / "reviewer.py").write_text(REVIEWER)
    (tools / "scenario.json").write_text(json.dumps(scenario(colleague)))
    pytest = f"{PYTHON} -m pytest -q"
    config = f"""\
[limits]
parallel = 2
[worker]
exec_args = [{json.dumps(PYTHON)}, {json.dumps(str(tools / "worker.py"))}, \
{json.dumps(str(tools / "scenario.json"))}]
[integration]
commands = [{{ run = {json.dumps(pytest)}, timeout_secs = 120 }}]
[gate]
stages = ["commands", "review"]
commands = [{{ run = {json.dumps(pytest)}, timeout_secs = 120 }}]
fix_level = "major"
[gate.review]
exec_args = [{json.dumps(PYTHON)}, {json.dumps(str(tools / "reviewer.py"))}, "{{diff_file}}"]
timeout_secs = 60
"""
    (repo / ".radian").mkdir()
    (repo / ".radian" / "arc.toml").write_text(config)

    lines: list[str] = []
    plan = tools / "plan.toml"
    plan.write_text(PLAN)
    arc(repo, "plan", "load", str(plan), lines=lines)
    arc(repo, "confirm", "demo", lines=lines)
    arc(repo, "run", lines=lines)
    for task in ("double", "halve", "tidy-add"):
        arc(repo, "show", task, lines=lines)
    for task in ("halve", "tidy-add"):
        brief = repo / ".radian" / "arc" / "runs" / task / "brief.md"
        print(f"$ cat .radian/arc/runs/{task}/brief.md")
        print(textwrap.indent(brief.read_text(), "  "))
    document = json.loads(arc(repo, "show", "--json", lines=None))
    states = {t["name"]: t["state"] for plan in document["plans"] for t in plan["tasks"]}
    print("$ git log --oneline main")
    print(textwrap.indent(git(remote, "log", "--oneline", "main"), "  "))
    if set(states.values()) != {"done.integrated"}:
        raise SystemExit(f"gate demo: not every task was integrated: {states}")
    return lines


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="radian-gate-demo-") as folder:
        run_demo(Path(folder))
    print("gate demo: every task integrated")


if __name__ == "__main__":
    main()
