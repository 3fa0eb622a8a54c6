"""Why an undo was not sent, as a stopped run's reply lists it; a rollback left for another
worker, or stopped at an undo no agent of the project has."""

from __future__ import annotations

from .questions import undo_maybe_done

# --- why an undo was not sent ---


def undo_not_in_catalogue(undo: str) -> str:
    return f"{undo} is not one of this agent's tools"


def undo_unbound(undo: str, argument: str) -> str:
    return f"{undo}: nothing of the step binds {argument}"


def undo_bound_elsewhere(undo: str, argument: str, source: str) -> str:
    return f"{undo}: {argument} does not match {source} of the step it undoes"


def undo_argument_not_bound(undo: str, argument: str) -> str:
    return f"{undo}: {argument} is not bound to the step it undoes"


def undo_of_step_not_run(undo: str) -> str:
    return f"{undo}: the step it undoes did not run"


def undo_already_done(undo: str) -> str:
    return f"{undo}: the step it undoes was undone already"


def undo_refused(undo: str, reason: str) -> str:
    return f"the check refused {undo}, because {reason}"


def undo_result_unseen(undo: str, argument: str) -> str:
    return f"{undo}: {argument} comes from the step's result, which nobody saw"


def call_left_for_another_worker(tool: str) -> str:
    """A worker whose agent.yaml lacks the tool of a call its process left in flight."""
    return (
        f"This run stopped while {tool} was being sent, and this worker's agent.yaml "
        f"lacks {tool}, so it is left for a worker that has it."
    )


def undo_left_for_another_worker(write_tool: str, undo_tool: str) -> str:
    """A worker whose agent.yaml lacks the undo a write declared when it ran."""
    return (
        f"This run is being undone: undoing {write_tool} needs {undo_tool}, which this "
        f"worker's agent.yaml lacks, so it is left for a worker that has it."
    )


def undo_in_no_agent(undo: str) -> str:
    """Why an undo was not sent: its tool is in no agent of the project (a misspelt name)."""
    return f"no agent of this project has a tool named {undo}"


def undo_missing_question(
    write_tool: str,
    undo_tool: str,
    remaining: int,
    *,
    closest: str | None = None,
    maybe_done: bool = False,
) -> str:
    """The question of a rollback stopped at an undo no agent of the project has: what to
    fix, and that `retry` works once it is fixed. `closest`: this agent's tool nearest the
    name; `maybe_done`: a try of it, made by a worker that had it, got no answer."""
    meant = f" (did you mean {closest}?)" if closest else ""
    doubt = f" {undo_maybe_done(undo_tool)}" if maybe_done else ""
    return (
        f"Undoing {write_tool} needs {undo_tool}, and no agent of this project has a tool "
        f"named {undo_tool}{meant}. The rollback stopped there, before the writes below "
        f"it; once agent.yaml names the undo's tool and the process is restarted, answer "
        f"retry.{doubt} {remaining} step(s) still need undoing."
    )
