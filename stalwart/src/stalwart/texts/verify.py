"""stalwart verify's findings, their fixes, and the turns file's errors (verify/)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .questions import IRREVERSIBLE_IN_ATOMIC_RUN

# --- stalwart verify (see verify/): each code's finding and its fix ---

# `{tool}` is the tool the finding is about, `{agent}` its agent; the others are the
# code's own facts. Each entry is (what is wrong, how to fix it).
VERIFY_TEXTS: Mapping[str, tuple[str, str]] = {
    "QG013": (
        "{tool} is irreversible and can come before {later}, which a failed run would undo, "
        "but {why}",
        "let a person confirm {tool} (drop confirm: never), so its confirmation says: "
        + IRREVERSIBLE_IN_ATOMIC_RUN,
    ),
    "QG014": (
        "{tool} is a write that runs without a person confirming it (confirm: never); "
        "every write is confirmed by a person",
        "drop confirm: never from {tool} in agent.yaml",
    ),
    "QG015": (
        "{tool} is an MCP tool its server lists differently from when it was first seen "
        "({changes})",
        "read the change, then delete {tool}'s entry in {file} to accept it",
    ),
    "QG105": (
        "{tool} is a write with neither an undo nor irreversible; if {later} fails after it, "
        "the run cannot undo {tool}, and nothing says so",
        "name the tool that undoes {tool} (undo: <tool>), or mark it irreversible: true so "
        "its confirmation warns",
    ),
    "QG106": (
        "if {failing} fails after {tool}, the rollback's {undo} is refused ({why}), "
        "and {tool} stays done",
        "change the rule the refusal names so it allows {undo} after {tool}, "
        "or bind {undo}'s arguments so the rule holds",
    ),
    "QG107": (
        "{undo}, which undoes {tool}, cannot be bound ({why}), and {tool} stays done",
        "return the field from {tool} (in its declared return type), or bind the argument "
        "to one it has: undo: {{tool: {undo}, args: {{<argument>: $result.<field>}}}}",
    ),
    "QG108": (
        "{tool} can run, but {undo}, which undoes it, {where}, so a failed run of agent "
        "'{agent}' cannot undo it",
        "add {undo} to agent '{agent}''s tools",
    ),
    "QG201": (
        "the turn {turn!r} now reads as {got}, not as {expected}",
        "if the new reading is meant, write it in the turns file; else change back the tool "
        "names, docstrings or parameters that changed it",
    ),
}

VERIFY_NOT_CONFIRMED = "it asks for no confirmation (confirm: never)"
VERIFY_NOT_WARNED = f"its confirmation does not say: {IRREVERSIBLE_IN_ATOMIC_RUN}"


def verify_undo_missing(in_catalogue: bool) -> str:
    if in_catalogue:
        return "is not one of its tools"
    return "is not in the catalogue"


def verify_undo_unknown_fix(
    undo: str, tool: str, agent: str, closest: str | None, *, closest_in_agent: bool
) -> str:
    """QG108's fix when no tool of the catalogue is named `undo` (a misspelt name): the name
    is what to change, to `closest` when a tool's name is close, not the agent's tools."""
    if closest is None:
        return (
            f"no tool named '{undo}': name a tool of the catalogue as {tool}'s undo, "
            f"or add a tool named '{undo}' to the catalogue"
        )
    fix = f"no tool named '{undo}' (did you mean '{closest}'?): correct {tool}'s undo"
    if not closest_in_agent:
        fix += f", and add {closest} to agent '{agent}''s tools"
    return fix


def verify_finding(code: str, **facts: str) -> tuple[str, str]:
    """A finding's text and its fix, with its facts filled in."""
    text, fix = VERIFY_TEXTS[code]
    return text.format(**facts), fix.format(**facts)


def verify_route(route: Sequence[str]) -> str:
    return " -> ".join(route) if route else "(no route)"


def verify_line(code: str, agent: str, route: Sequence[str], text: str, fix: str) -> str:
    """One finding as `stalwart verify` prints it."""
    return f"{code} {agent} [{verify_route(route)}]: {text}. Fix: {fix}."


def verify_unreached(agent: str, tool: str, max_steps: int) -> str:
    return f"note: {agent}/{tool} is on no route of up to {max_steps} steps; raise --max-steps"


def verify_passed(agents: int, max_steps: int) -> str:
    return f"verified {agents} agent(s) on every route of up to {max_steps} steps: no findings"


def verify_unread(reason: str) -> str:
    return f"unread ({reason})"


def verify_steps(calls: Sequence[str]) -> str:
    return ", then ".join(calls) if calls else "no steps"


TURNS_STEPS_OR_UNREAD = "expected either steps: [...] or unread: <reason>, not both or neither"


def turns_agent_missing(agents: Sequence[str]) -> str:
    return f"the agent.yaml has several agents ({', '.join(agents)}); name one with agent:"


def turns_agent_unknown(agent: str, agents: Sequence[str]) -> str:
    return f"no agent named {agent!r}; the agent.yaml has: {', '.join(agents)}"
