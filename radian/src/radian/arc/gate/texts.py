"""Every line the gate prints and every brief section it writes, in one place.

The chapter fixes `<task> conflict with main -> review.rework_pending: <reason>` and the
heading `## Rework <n> (conflict with main)`; the other lines follow the loop's shape,
`<task> <what happened> -> <where the task goes>`.
"""

from __future__ import annotations

from collections.abc import Sequence

from radian.arc.gate.findings import Finding


def short(sha: str | None) -> str:
    return (sha or "?")[:12]


# -- a stage's detail: the one line a verdict carries ---------------------------------------
def command_failed(command: str, exit_code: int | None) -> str:
    return f"`{command}` exited {exit_code}"


def command_timed_out(command: str, timeout_secs: float) -> str:
    return f"`{command}` timed out after {timeout_secs:g}s"


def commands_passed(count: int) -> str:
    return f"{count} command(s) passed"


def mutation_below(killed: int, checked: int, score: float, min_killed: float) -> str:
    return f"killed {killed} of {checked} mutants ({score:.0%}), below min_killed {min_killed:.0%}"


def mutation_passed(killed: int, checked: int, score: float | None) -> str:
    if score is None:
        return "no mutant in the changed files"
    return f"killed {killed} of {checked} mutants ({score:.0%})"


def mutation_tool_failed(exit_code: int | None) -> str:
    return f"mutmut exited {exit_code}; see the log"


def mutmut_missing() -> str:
    return "mutmut is not installed where radian runs (pip install mutmut)"


def mutation_timed_out(timeout_secs: float) -> str:
    return f"mutmut timed out after {timeout_secs:g}s"


def review_findings(count: int, fix_level: str) -> str:
    return f"{count} finding(s) at or above fix_level {fix_level}"


def review_passed(count: int, fix_level: str) -> str:
    return f"{count} finding(s), none failing at fix_level {fix_level}"


def review_timed_out(timeout_secs: float) -> str:
    return f"the reviewer timed out after {timeout_secs:g}s"


def review_unavailable(kind: str, message: str | None) -> str:
    return f"the reviewer's model is unavailable ({kind}){': ' + message if message else ''}"


def review_not_configured() -> str:
    return "[gate.review] exec_args is empty"


def conflict(stage: str, main_sha: str, paths: Sequence[str]) -> str:
    return f"{stage}: conflicts with main at {short(main_sha)[:8]} in {', '.join(paths)}"


def integration_merge_failed(output: str) -> str:
    return f"the merge failed: {output.strip().splitlines()[-1] if output.strip() else '?'}"


def integration_moved() -> str:
    return "the push was rejected twice: the target branch kept moving"


def integration_push_failed(output: str) -> str:
    return f"git push failed: {output.strip()}"


def integration_push_unreachable(stderr: str) -> str:
    return f"git push: {stderr.strip() or 'no answer from the remote'}"


def integrated(sha: str, target: str) -> str:
    return f"merged as {short(sha)} and pushed to {target}"


def integrated_before(sha: str, target: str) -> str:
    return f"integrated before as {short(sha)} on {target} (found there, not merged again)"


def integration_lock_lost() -> str:
    return "the integration's lock was lost to another host before the push: nothing pushed"


def integration_lock_taken_again() -> str:
    return "the integration's lock was lost and taken again before the push: from a fresh fetch"


def gate_remote_unreachable_log(error: str) -> str:
    return f"the remote cannot be reached (no verdict for this stage; the gate waits): {error}"


def gate_error(error: str) -> str:
    return f"the gate could not run: {error}"


# -- what `radian arc run` prints when it applies a gate ------------------------------------
def gate_integrated(task: str, sha: str | None, target: str) -> str:
    return f"{task} integrated -> done.integrated ({short(sha)} on {target})"


def gate_remote_unreachable(task: str, when: str) -> str:
    return (
        f"{task} gate: remote unreachable -> review.verifying, gate again at {when} (no retry used)"
    )


def stage_failed(task: str, stage: str, reason: str, detail: str | None) -> str:
    return f"{task} {stage} failed ({reason}) -> review.rework_pending: {detail or reason}"


def review_rework_written(task: str, number: int) -> str:
    return f"{task} review findings -> todo.ready (Rework {number})"


def conflict_rework_written(task: str, number: int) -> str:
    return f"{task} conflict with main -> todo.ready (Rework {number}, starts mid-merge)"


def conflict_pending(task: str, reason: str) -> str:
    return f"{task} conflict with main -> review.rework_pending: {reason}"


def conflict_limit_reason(limit: int) -> str:
    return f"max_conflict_rework {limit} conflict rework(s) in a row written, none more"


def conflict_merge_main_off() -> str:
    return "merge-main is off"


def review_budget_paused(task: str, scope: str, spent: float, limit: float) -> str:
    return (
        f"{task} review cost reached the budget -> todo.paused_budget "
        f"({scope} budget: ${spent:.2f} of ${limit:.2f} used)"
    )


def auto_reverify_started(task: str, attempt_id: str, old_sha: str | None, new_sha: str) -> str:
    return (
        f"{task} target branch moved {short(old_sha)[:8]} -> {short(new_sha)[:8]} "
        f"-> review.verifying (automatic reverify, attempt {attempt_id})"
    )


def auto_reverify_limit(task: str, limit: int) -> str:
    return (
        f"{task} target branch moved -> review.rework_pending: "
        f"max_auto_reverify {limit} automatic reverify(s) used up"
    )


def reverify_started(task: str, attempt_id: str) -> str:
    return f"{task} reverify -> review.verifying (attempt {attempt_id})"


def cannot_reverify(task: str, state: str) -> str:
    return (
        f"{task} is {state}: reverify applies to a review.rework_pending (or todo.ready) "
        "task that has delivered a head"
    )


def no_head_sha(task: str) -> str:
    return f"{task} has no head_sha to verify"


def no_gate_to_reverify(task: str) -> str:
    return (
        f"{task}: .radian/arc.toml has no [gate], so there is no gate to run again "
        "(add [gate]; stages = [] runs the integration alone)"
    )


def gate_running(task: str) -> str:
    return f"{task}: a gate is running for this task; wait for it to end"


# -- briefs: the body under "## Rework <n>", written by radian.arc.brief.append_rework ------
CONFLICT_HEADING_SUFFIX = " (conflict with main)"


def _finding_line(finding: Finding) -> str:
    level = finding.level or "blocking"
    where = f" ({finding.where()})" if finding.where() else ""
    return f"- [{level}] {finding.title}{where}"


def review_rework_body(fix_level: str, findings: Sequence[Finding]) -> str:
    lines = [
        f"The review found these at or above fix_level {fix_level}; fix each one, and change "
        "nothing else:",
        "",
        *(_finding_line(finding) for finding in findings),
    ]
    return "\n".join(lines)


def conflict_rework_body(main_sha: str, stage: str, paths: Sequence[str]) -> str:
    main = short(main_sha)[:8]
    lines = [
        f"The {stage} stage found that this task's commit does not merge with main at {main}. "
        "Conflicted paths:",
        "",
        *(f"- {path}" for path in paths),
        "",
        f"This attempt starts mid-merge: `git merge` of main ({main}) has already run in your "
        "worktree and left these paths conflicted.",
        "Resolve the conflict keeping both sides' intent, commit the merge, rebuild, run the "
        "tests these paths touch, and change nothing else.",
    ]
    return "\n".join(lines)
