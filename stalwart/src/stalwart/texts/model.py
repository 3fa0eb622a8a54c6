"""What the model reads (its system prompt, its memory of earlier steps) and why a
model's run stopped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .questions import call_text
from .replies import brief

# --- what the model reads ---

DECLINED_RESULT = "declined: the person skipped this call"


def declined_result(reason: str | None) -> str:
    """A skipped call's result, as the model reads it: the person's reason after it."""
    return f"{DECLINED_RESULT}; their reason: {reason}" if reason else DECLINED_RESULT


def memory_call(tool: str, args: Mapping[str, Any]) -> str:
    return f"call {call_text(tool, args)}"


def memory_result(result: Any) -> str:
    return brief(result, limit=2000)


def memory_error(error_type: str, message: str) -> str:
    return f"error: {error_type}: {message}" if message else f"error: {error_type}"


def memory_refused(why: str) -> str:
    return f"refused: {why}"


MEMORY_HAPPENED = "no answer came back; a person said the call took effect"
MEMORY_DID_NOT_HAPPEN = "no answer came back; a person said the call took no effect"
MEMORY_UNDONE_BY_HAND = "a person said this was undone by hand"


# --- the model loop (on_unread: model) ---

# What the model is told about itself; the agent's tools go beside it as JSON schemas.
MODEL_SYSTEM = (
    "You are the agent {agent}. Do what the person asks with your tools. Every write is "
    "shown to the person with its exact arguments and runs only if they approve it. "
    "Take amounts, order numbers and other values from the person's words or from what "
    "a tool returned, never from a guess. When the work is done, answer in plain text."
)


def model_system(agent: str, instructions: str | None) -> str:
    """The system prompt: stalwart's fixed rules first, then the agent's own instructions."""
    rules = MODEL_SYSTEM.format(agent=agent)
    return f"{rules}\n\n{instructions}" if instructions else rules


def model_failed_because(model: str, detail: str) -> str:
    return f"the model {model} could not answer ({detail})"


def model_unavailable_detail(attempts: int, last_status: int | None) -> str:
    last = f"HTTP {last_status}" if last_status is not None else "no connection"
    return f"still unavailable after {attempts} tries, last: {last}"


def model_timed_out_detail(timeout: float, tries: int) -> str:
    return f"no answer within {timeout:g} s, on {tries} tries"


def model_rejected_detail(status: int) -> str:
    return f"it refused the request, HTTP {status}"


MODEL_REPLY_UNREADABLE = "its answer could not be read"


def model_cap_because(model: str, calls: int, not_run: Sequence[str] = ()) -> str:
    """The cap: `not_run` are the calls of the last allowed ask, which never run (no ask is
    left to read their results and finish, so a write would be sent only to be undone)."""
    said = f"the model {model} made {calls} calls without finishing"
    if not not_run:
        return said
    return (
        f"{said}; its last answer asked for {', '.join(not_run)}, which did not run, as no "
        "ask was left to finish the run"
    )


def model_refused_because(model: str, said: str | None) -> str:
    """The model declined the turn (Anthropic's `refusal`, OpenAI's `refusal` message)."""
    return f"the model {model} refused this turn" + (f" (it said {brief(said)})" if said else "")


# The provider withheld the answer (OpenAI's `content_filter`).
MODEL_FILTERED = "the provider's content filter withheld its answer"


def model_cut_off_detail(tools: list[str]) -> str:
    """An answer cut off at the token limit while it asked for tool calls: none of them ran
    (the last one's arguments may be cut short: an amount of 4 for 40.00)."""
    return (
        f"its answer was cut off at its max_tokens limit while asking for {', '.join(tools)}, "
        "so none of its calls ran"
    )


def model_truncated_reply(text: str | None) -> str:
    """The model's last word cut off at the token limit: never shown as if complete."""
    if not text:
        return "The model's answer was cut off at its max_tokens limit before it said anything."
    return (
        f"The model's answer was cut off at its max_tokens limit; what it said is not all: {text}…"
    )


MODEL_NO_ANSWER = "The model finished without a word."
MODEL_NOT_RUN = "this call was not run"


def model_missing(agent: str) -> str:
    return (
        f"agent {agent!r}: on_unread: model needs a model; add model: '<provider>:<model>' "
        "to the agent in agent.yaml, or pass model= to Agent"
    )


def model_history_result(content: str) -> str:
    """A tool's result in an earlier run, as the model reads it back."""
    return f"-> {content}"
