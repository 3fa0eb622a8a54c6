"""An ACP prompt turn's stop reason to the attempt's outcome: the chapter's table, as data.

Read beside radian/docs/acp.md. An outcome not in `radian.arc.worker.result.KNOWN_OUTCOMES`
(an unknown stop reason, kept as the agent sent it) is "an outcome this build does not know".
A stop the agent reports as `cancelled` after arc's own session/cancel is never printed as a
Result: the wrapper's class (cancelled, stall, wall_time) decides that attempt.
"""

from __future__ import annotations

STOP_REASON_OUTCOMES: dict[str, str] = {
    "end_turn": "completed",
    "refusal": "refused",
    "max_tokens": "incomplete",
    "max_turn_requests": "incomplete",
    "cancelled": "cancelled",  # cancelled from inside the worker: arc asked for nothing
}

# A prompt response whose _meta.radian.error is set ended on a model error: the attempt
# failed, whatever the stop reason says.
MODEL_ERROR_OUTCOME = "failed"


def outcome_of(stop_reason: str, *, model_error: str | None) -> str:
    """The attempt's outcome for a prompt turn that ended by itself."""
    if model_error is not None:
        return MODEL_ERROR_OUTCOME
    return STOP_REASON_OUTCOMES.get(stop_reason, stop_reason)
