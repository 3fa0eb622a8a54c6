"""What an agent.yaml may set of its model's requests: one typed set, checked at load.

Each is checked against the provider before the first turn (`check_options`), so an
option the provider would refuse fails `Agent.from_file`, not a person's turn.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_TIMEOUT = 120.0

# The Messages API requires max_tokens on every request; this one unless agent.yaml says.
ANTHROPIC_DEFAULT_MAX_TOKENS = 4096

# Claude's extended thinking: the smallest budget the Messages API takes.
MIN_THINKING_BUDGET = 1024

# Temperature ranges the providers accept. The Messages API takes none (its official
# client has no `temperature` since 2.x), so Anthropic is not here.
TEMPERATURE_RANGE = {"openai": (0.0, 2.0)}


@dataclass(frozen=True)
class ModelOptions:
    """`max_tokens` caps each answer (Anthropic needs one: 4096 unless set);
    `temperature` is sent only when set; `thinking_budget` turns on Claude's extended
    thinking with that many tokens; `timeout` is seconds per request (a timeout is tried
    once more, then fails the ask); `stream` streams each answer, with progress."""

    max_tokens: int | None = None
    temperature: float | None = None
    thinking_budget: int | None = None
    timeout: float = DEFAULT_TIMEOUT
    stream: bool = False


def check_options(options: ModelOptions, provider: str | None) -> tuple[str, str] | None:
    """The first option the provider would refuse, as (key, what is expected); else None."""
    if options.max_tokens is not None and options.max_tokens < 1:
        return "max_tokens", f"expected a number of tokens >= 1, got {options.max_tokens}"
    if options.timeout <= 0:
        return "timeout", f"expected seconds > 0, got {options.timeout:g}"
    if options.temperature is not None:
        if provider == "anthropic":
            return "temperature", "the Messages API takes no temperature; leave it out"
        low, high = TEMPERATURE_RANGE.get(provider or "", (0.0, 2.0))
        if not low <= options.temperature <= high:
            return "temperature", (
                f"expected a temperature from {low:g} to {high:g} for {provider}, "
                f"got {options.temperature:g}"
            )
    budget = options.thinking_budget
    if budget is not None:
        if provider != "anthropic":
            return "thinking", f"extended thinking is Claude's; {provider} has no thinking budget"
        if budget < MIN_THINKING_BUDGET:
            return "thinking", f"expected budget_tokens >= {MIN_THINKING_BUDGET}, got {budget}"
        limit = options.max_tokens or ANTHROPIC_DEFAULT_MAX_TOKENS
        if budget >= limit:
            return "thinking", (f"expected budget_tokens below max_tokens ({limit}), got {budget}")
    return None
