"""The `review` stage: a reviewer command reads the diff and the brief, prints its verdict.

The reviewer is configured like the worker ([gate.review] exec_args, with the placeholders
{diff_file} {brief_file} {worktree} {task} {attempt_id} {fix_level}; the same paths are in
RADIAN_DIFF_FILE, RADIAN_BRIEF_FILE and RADIAN_FIX_LEVEL). What it prints is read by
`radian.arc.gate.findings`.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from radian.arc.config import ReviewConfig
from radian.arc.gate import texts
from radian.arc.gate.findings import ReviewOutputError, failing_findings, parse_review_output
from radian.arc.gate.process import StopRequested, run_program
from radian.arc.gate.stage import StageResult, failed, passed
from radian.arc.gate.verdict import (
    REVIEW_FINDINGS,
    REVIEW_OUTPUT,
    REVIEW_TIMEOUT,
    REVIEW_UNAVAILABLE,
)


def run_review(
    settings: ReviewConfig,
    *,
    fix_level: str,
    diff: str,
    brief: str,
    values: dict[str, str],
    cwd: Path,
    files_stem: Path,
    log_path: Path,
    stop: threading.Event,
) -> StageResult:
    """Run the reviewer once on the diff and the brief; read its verdict JSON.

    `files_stem` names the files the reviewer reads and writes: <stem>.diff, <stem>.brief.md,
    <stem>.out (its standard output).
    """
    if not settings.exec_args:
        return failed(REVIEW_UNAVAILABLE, texts.review_not_configured(), **_costs(None, fix_level))
    diff_file = files_stem.with_suffix(".diff")
    brief_file = files_stem.with_suffix(".brief.md")
    out_file = files_stem.with_suffix(".out")
    diff_file.write_text(diff, encoding="utf-8")
    brief_file.write_text(brief, encoding="utf-8")
    fill = {**values, "diff_file": str(diff_file), "brief_file": str(brief_file),
            "worktree": str(cwd), "fix_level": fix_level}  # fmt: skip
    try:
        argv = [arg.format_map(fill) for arg in settings.exec_args]
    except (KeyError, IndexError, ValueError) as error:
        detail = f"[gate.review] exec_args has a placeholder arc does not know: {error}"
        return failed(REVIEW_UNAVAILABLE, detail, **_costs(None, fix_level))
    outcome = run_program(
        argv,
        cwd=cwd,
        timeout_secs=settings.timeout_secs,
        log_path=log_path,
        stop=stop,
        header="$ " + " ".join(argv),
        stdout_path=out_file,
        env={**os.environ, "RADIAN_DIFF_FILE": str(diff_file),
             "RADIAN_BRIEF_FILE": str(brief_file), "RADIAN_FIX_LEVEL": fix_level},
    )  # fmt: skip
    if outcome.stopped:
        raise StopRequested("reviewer")
    if outcome.timed_out:
        detail = texts.review_timed_out(settings.timeout_secs)
        return failed(REVIEW_TIMEOUT, detail, **_costs(None, fix_level))
    try:
        review = parse_review_output(outcome.output)
    except ReviewOutputError as error:
        return failed(REVIEW_OUTPUT, str(error), **_costs(None, fix_level))
    costs = _costs(review.cost_micros, fix_level)
    if review.model_error is not None:
        detail = texts.review_unavailable(review.model_error.kind, review.model_error.message)
        return failed(REVIEW_UNAVAILABLE, detail, **costs)
    failing = failing_findings(review.findings, fix_level)
    fields = {**costs, "findings": list(review.findings), "failing_findings": failing}
    if failing:
        return failed(REVIEW_FINDINGS, texts.review_findings(len(failing), fix_level), **fields)
    return passed(texts.review_passed(len(review.findings), fix_level), **fields)


def _costs(cost_micros: int | None, fix_level: str) -> dict[str, Any]:
    return {
        "fix_level": fix_level,
        "review_sessions": [cost_micros],
        "review_cost_micros": cost_micros or 0,
    }
