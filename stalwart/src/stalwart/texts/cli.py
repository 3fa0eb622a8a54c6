"""Lines the command line prints of the library's results (stalwart resume, usage)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def resumed_line(session: str, state: str, text: str) -> str:
    """One line of `stalwart resume`: the session, where its run now stands, its text."""
    return f"{session}: {state}: {' '.join(text.split())}"


def nothing_to_resume(agents: Sequence[str]) -> str:
    """`stalwart resume` when no run of the file's agents was left mid-way."""
    names = ", ".join(repr(agent) for agent in agents)
    noun = "agent" if len(agents) == 1 else "agents"
    return f"Nothing to resume: no run of {noun} {names} was left mid-way."


# --- usage (stalwart usage) ---


def usage_line(label: str, calls: int, input_tokens: int, output_tokens: int, cost: Any) -> str:
    """One line of `stalwart usage`: a run, or the total; cost a Decimal or None."""
    noun = "model call" if calls == 1 else "model calls"
    shown = f"${cost}" if cost is not None else "cost unknown"
    return (
        f"{label}: {calls} {noun}, {input_tokens} input tokens, {output_tokens} output tokens, "
        f"{shown}"
    )
