"""The `mutation` stage: real mutmut (3.x) on the Python files the task changed.

mutmut reads its own configuration from the project (`[tool.mutmut]` in pyproject.toml or
`[mutmut]` in setup.cfg) and writes `mutants/` in the tree it runs in, which is why the gate
runs it in its own scratch worktree. arc selects the mutants of the changed files by name
(mutmut names a mutant `<module>.x<function>__mutmut_<n>`, the module from the file's path
without a leading `src.`) and reads each file's results from `mutants/<path>.meta`.

The killed share is killed / checked, where checked counts every mutant mutmut ran a test
for (survived, killed, timed out, suspicious, ...; not skipped or not checked).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from radian.arc.config import MutationConfig
from radian.arc.gate import texts
from radian.arc.gate.process import StopRequested, run_program
from radian.arc.gate.stage import StageResult, failed, passed
from radian.arc.gate.verdict import COMMAND_FAILED, MUTATION_SCORE, TIMEOUT, MutationCounts

# mutmut's exit codes per mutant (mutmut.stats.status_by_exit_code).
_KILLED = frozenset({1, 3})
_SURVIVED = frozenset({0})
_UNCHECKED = frozenset({None, 34})  # not checked, skipped
# What mutmut says when the selection matches no mutant (mutmut 3's assertion message).
_NOTHING_MATCHES = "Filtered for specific mutants, but nothing matches"
# mutmut uses both cores by default; a gate shares the machine with workers, so one less.
_MAX_CHILDREN = 1


def mutation_candidates(changed: Sequence[str], paths_to_mutate: Sequence[str] | None) -> list[str]:
    """The changed files mutmut may mutate: Python sources, within paths_to_mutate if set."""
    chosen = []
    for path in changed:
        if not path.endswith(".py"):
            continue
        name = Path(path).name
        if name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
            continue
        if paths_to_mutate and not any(_within(path, prefix) for prefix in paths_to_mutate):
            continue
        chosen.append(path)
    return chosen


def _within(path: str, prefix: str) -> bool:
    prefix = prefix.rstrip("/")
    return path == prefix or path.startswith(prefix + "/")


def mutant_glob(path: str) -> str:
    module = path[: -len(".py")].replace("/", ".")
    module = module.removeprefix("src.")
    return f"{module}.x*"


def run_mutation(
    changed: Sequence[str],
    settings: MutationConfig,
    *,
    cwd: Path,
    log_path: Path,
    stop: threading.Event,
) -> StageResult:
    files = [path for path in mutation_candidates(changed, settings.paths_to_mutate)
             if (cwd / path).is_file()]  # fmt: skip
    if not files:
        return passed(texts.mutation_passed(0, 0, None))
    if importlib.util.find_spec("mutmut") is None:
        return failed(COMMAND_FAILED, texts.mutmut_missing())
    argv = [sys.executable, "-m", "mutmut", "run", "--max-children", str(_MAX_CHILDREN)]
    argv += [mutant_glob(path) for path in files]
    outcome = run_program(
        argv,
        cwd=cwd,
        timeout_secs=settings.timeout_secs,
        log_path=log_path,
        stop=stop,
        header="$ " + " ".join(argv[1:]),
    )
    if outcome.stopped:
        raise StopRequested("mutmut")
    if outcome.timed_out:
        return failed(TIMEOUT, texts.mutation_timed_out(settings.timeout_secs))
    counts = read_counts(cwd, files, settings.min_killed)
    if counts.total == 0 and (outcome.exit_code == 0 or _NOTHING_MATCHES in outcome.output):
        # mutmut refuses a selection that matches no mutant; that is a pass, not a failure.
        return passed(texts.mutation_passed(0, 0, None), mutation=counts)
    if outcome.exit_code != 0:
        return failed(COMMAND_FAILED, texts.mutation_tool_failed(outcome.exit_code),
                      mutation=counts)  # fmt: skip
    if counts.score is not None and counts.score < settings.min_killed:
        return failed(
            MUTATION_SCORE,
            texts.mutation_below(counts.killed, counts.checked, counts.score, settings.min_killed),
            mutation=counts,
        )
    return passed(
        texts.mutation_passed(counts.killed, counts.checked, counts.score), mutation=counts
    )


def _meta_path(cwd: Path, path: str) -> Path:
    return cwd / "mutants" / f"{path}.meta"


def _exit_codes(cwd: Path, files: Sequence[str]) -> list[int | None]:
    codes: list[int | None] = []
    for path in files:
        meta = _meta_path(cwd, path)
        if meta.is_file():
            codes.extend(json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"].values())
    return codes


def read_counts(cwd: Path, files: Sequence[str], min_killed: float) -> MutationCounts:
    codes = _exit_codes(cwd, files)
    killed = sum(1 for code in codes if code in _KILLED)
    survived = sum(1 for code in codes if code in _SURVIVED)
    checked = sum(1 for code in codes if code not in _UNCHECKED)
    return MutationCounts(
        killed=killed,
        survived=survived,
        checked=checked,
        total=len(codes),
        score=killed / checked if checked else None,
        min_killed=min_killed,
        # The files mutmut mutated: those under its source_paths among the candidates.
        files=[path for path in files if _meta_path(cwd, path).is_file()],
    )
