"""The mutation stage: real mutmut on the one module a task changed."""

from __future__ import annotations

import importlib.util
import os

import pytest
from gate_fixtures.world import GitWorld
from test_gate_stages import gate_job, run

from radian.arc.gate.mutation import mutant_glob, mutation_candidates

pytestmark = pytest.mark.integration

# mutmut is a dev tool, not a dependency of radian: `make test-min-radian` runs the suite on
# the declared floors without it (mutmut itself needs a newer click). CI must have it.
if importlib.util.find_spec("mutmut") is None:
    if os.environ.get("CI"):
        raise RuntimeError("mutmut is not installed: the mutation stage cannot be tested")
    pytest.skip("mutmut is not installed here (pip install mutmut)", allow_module_level=True)

SCALE = """\
def double(x):
    return x * 2
"""
STRONG_CHECK = """\
from calc.scale import double


def test_double():
    assert double(3) == 6
"""
# double(0) == 0 whatever the operator: every mutant survives.
WEAK_CHECK = """\
from calc.scale import double


def test_double():
    assert double(0) == 0
"""


def mutation_toml(min_killed: float) -> str:
    return f"""
[gate]
stages = ["mutation"]
[gate.mutation]
min_killed = {min_killed}
timeout_secs = 120
"""


def test_a_well_tested_change_passes_the_killed_share(world: GitWorld) -> None:
    head = world.task_commit(
        "scale", {"src/calc/scale.py": SCALE, "tests/check_scale.py": STRONG_CHECK}
    )
    gate = run(gate_job(world, "scale", head, mutation_toml(0.8)))

    mutation = gate.verdicts[0]
    assert mutation.passed, mutation.detail
    assert mutation.mutation is not None
    # Only the changed module was mutated (ops.py's mutants were never run).
    assert mutation.mutation.files == ["src/calc/scale.py"]
    assert mutation.mutation.killed == mutation.mutation.checked > 0
    assert mutation.mutation.score == 1.0
    assert gate.passed


def test_a_weakly_tested_change_fails_with_mutation_score(world: GitWorld) -> None:
    head = world.task_commit(
        "scale", {"src/calc/scale.py": SCALE, "tests/check_scale.py": WEAK_CHECK}
    )
    gate = run(gate_job(world, "scale", head, mutation_toml(0.5)))

    assert gate.failure is not None
    assert (gate.failure.stage, gate.failure.reason) == ("mutation", "mutation_score")
    counts = gate.failure.mutation
    assert counts is not None and counts.survived > 0 and counts.score is not None
    assert counts.score < 0.5
    assert gate.failure.detail is not None and "below min_killed 50%" in gate.failure.detail


def test_a_change_without_python_sources_has_no_mutant_and_passes(world: GitWorld) -> None:
    head = world.task_commit("docs", {"README.md": "calc\n"})
    gate = run(gate_job(world, "docs", head, mutation_toml(1.0)))
    assert gate.verdicts[0].passed
    assert gate.verdicts[0].detail == "no mutant in the changed files"


def test_candidates_and_mutant_names() -> None:
    changed = ["src/calc/ops.py", "tests/check_ops.py", "tests/test_x.py", "README.md",
               "lib/other.py"]  # fmt: skip
    assert mutation_candidates(changed, None) == [
        "src/calc/ops.py", "tests/check_ops.py", "lib/other.py",
    ]  # fmt: skip
    assert mutation_candidates(changed, ["src"]) == ["src/calc/ops.py"]
    assert mutant_glob("src/calc/ops.py") == "calc.ops.x*"
    assert mutant_glob("lib/other.py") == "lib.other.x*"


def test_mutmut_failing_on_its_own_is_command_failed_not_a_pass(world: GitWorld) -> None:
    failing_check = STRONG_CHECK.replace("== 6", "== 7")  # mutmut's clean run fails
    head = world.task_commit(
        "scale", {"src/calc/scale.py": SCALE, "tests/check_scale.py": failing_check}
    )
    gate = run(gate_job(world, "scale", head, mutation_toml(0.0)))

    assert gate.failure is not None
    assert (gate.failure.stage, gate.failure.reason) == ("mutation", "command_failed")
    assert gate.failure.detail is not None and gate.failure.detail.startswith("mutmut exited")
