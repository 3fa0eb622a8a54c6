"""The review stage with a scripted reviewer printing each kind of verdict, on real git."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from gate_fixtures.world import REVIEWER, GitWorld, make_world
from test_gate_stages import gate_job, run

from radian.arc.gate.findings import (
    Finding,
    ReviewOutputError,
    effective_fix_level,
    failing_findings,
    parse_review_output,
)
from radian.arc.gate.verdict import read_verdict, write_verdict

pytestmark = pytest.mark.integration


def review_toml(mode: str, *, fix_level: str = "major", timeout: float = 30) -> str:
    args = json.dumps([sys.executable, str(REVIEWER), mode, "{diff_file}"])
    return f"""
[gate]
stages = ["review"]
fix_level = "{fix_level}"
[gate.review]
exec_args = {args}
timeout_secs = {timeout}
"""


def add_module(world: GitWorld, task: str) -> str:
    """Each task adds its own module, so tasks on one world never collide."""
    module = task.replace("-", "_")
    source = "def double(x):\n    return x * 2\n"
    return world.task_commit(task, {f"src/calc/{module}.py": source})


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> GitWorld:
    return make_world(tmp_path_factory.mktemp("review") / "world")


# Each case is its own task on the shared world; only passing ones integrate.
CASES = [
    ("clean", "major", True, None),
    ("minor", "major", True, None),
    ("minor", "minor", False, "review_findings"),
    ("major", "major", False, "review_findings"),
    ("major", "critical", True, None),
    ("pre_existing", "info", True, None),
    ("blocking", "critical", False, "review_findings"),
    ("garbage", "major", False, "review_output"),
    ("unavailable", "major", False, "review_unavailable"),
]


@pytest.mark.parametrize(("mode", "fix_level", "passes", "reason"), CASES)
def test_reviewer_verdicts(
    world: GitWorld, mode: str, fix_level: str, passes: bool, reason: str | None
) -> None:
    task = f"r-{mode}-{fix_level}"
    head = add_module(world, task)
    gate = run(gate_job(world, task, head, review_toml(mode, fix_level=fix_level)))

    review = gate.verdicts[0]
    assert review.stage == "review"
    assert (review.passed, review.reason) == (passes, reason)
    assert review.fix_level == fix_level
    assert gate.passed is passes  # a passing review goes on to integrate
    if mode in ("garbage",):
        assert review.review_sessions == [None] and review.review_cost_micros == 0
    elif mode == "unavailable":
        assert review.review_cost_micros == 1000
        assert review.detail == "the reviewer's model is unavailable (unavailable): overloaded"
    else:
        assert review.review_cost_micros == 250_000
    if mode == "blocking":
        # The old build's blocking item fails with no level; its critical suggestion does not.
        assert [f.title for f in review.failing_findings] == [
            "a small thing the old build blocked on"
        ]
        assert len(review.findings) == 2
    # The reviewer got the diff against the target branch and the brief.
    task_dir = world.repo / ".radian/arc/runs" / task
    assert "+def double(x):" in (task_dir / "verdicts/0001-review.diff").read_text()
    assert "Add double()." in (task_dir / "verdicts/0001-review.brief.md").read_text()


def test_a_reviewer_past_its_timeout_fails_with_review_timeout(world: GitWorld) -> None:
    head = add_module(world, "r-sleep")
    gate = run(gate_job(world, "r-sleep", head, review_toml("sleep", timeout=0.5)))

    assert gate.failure is not None and gate.failure.reason == "review_timeout"
    assert gate.failure.review_sessions == [None]


def test_levels_order_and_fix_level_resolution() -> None:
    findings = tuple(
        Finding(level=level, title=level) for level in ("info", "minor", "major", "critical")
    )
    assert [f.title for f in failing_findings(findings, "major")] == ["major", "critical"]
    assert [f.title for f in failing_findings(findings, "info")] == [
        "info", "minor", "major", "critical",
    ]  # fmt: skip
    assert effective_fix_level("minor", "critical", "major") == "minor"
    assert effective_fix_level(None, "critical", "major") == "critical"
    assert effective_fix_level(None, None, "info") == "info"


def test_unreadable_reviewer_output_is_refused_clearly() -> None:
    with pytest.raises(ReviewOutputError, match="no JSON object"):
        parse_review_output("looks good to me")
    with pytest.raises(ReviewOutputError, match="findings.0.level"):
        parse_review_output('{"findings": [{"level": "severe", "title": "x"}]}')
    # The last JSON line counts, after any chatter.
    output = parse_review_output('thinking...\n{"findings": [], "cost_micros": 7}\n')
    assert output.cost_micros == 7


def test_an_earlier_builds_review_blocking_verdict_file_is_read(tmp_path: Path) -> None:
    old = {
        "task": "t",
        "attempt_id": "002",
        "stage": "review",
        "passed": False,
        "reason": "review_blocking",
        "main_sha": "a" * 40,
        "head_sha": "b" * 40,
        "blocking": [{"title": "must fix", "level": "info", "path": "a.py", "line": 3}, "also"],
        "suggestions": [{"title": "could fix", "level": "critical"}],
    }
    folder = tmp_path / "verdicts"
    folder.mkdir()
    path = folder / "0004-review.json"
    path.write_text(json.dumps(old))

    verdict = read_verdict(path)
    assert verdict.reason == "review_blocking" and verdict.seq == 4
    assert [f.title for f in verdict.failing_findings] == ["must fix", "also"]
    # Whatever the fix_level, blocking items fail and suggestions never do.
    assert [f.title for f in failing_findings(tuple(verdict.findings), "critical")] == [
        "must fix", "also",
    ]  # fmt: skip
    # Written again by this build, it keeps its reason but no blocking list.
    write_verdict(tmp_path, verdict)
    assert 'blocking":' not in (folder / "0004-review.json").read_text().replace(
        '"blocking": true', ""
    ).replace('"blocking": false', "")
