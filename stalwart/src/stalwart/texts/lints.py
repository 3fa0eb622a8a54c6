"""The registration lints' texts (verify/lints.py, stalwart lint)."""

from __future__ import annotations

from collections.abc import Mapping

# --- the registration lints (verify/lints.py, stalwart lint) ---

# The chapter's table, as printed; `{...}` are its placeholders.
LINT_TEXTS: Mapping[str, str] = {
    "write_without_compensation": "a write neither compensated nor marked irreversible",
    "write_not_retry_safe": "a write with no idempotency, so an ambiguous failure goes to a person",
    "irreversible_without_confirmation": "an irreversible operation that asks for no confirmation",
    "compensation_unknown_tool": "the compensation names '{undo}', which the catalogue lacks",
    "compensation_not_retry_safe": "'{undo}' undoes it and is not retry-safe",
    "compensation_unbound": "{argument} <- {source}",
    "compensation_cycle": "its compensations return to '{at}'",
    "compensation_out_of_reach": (
        "agent '{agent_name}' can call it but not '{undo}', which undoes it, "
        "so a run of that agent cannot undo it"
    ),
}

# stalwart's own lints, beyond the chapter's eight.
EXTRA_LINT_TEXTS: Mapping[str, str] = {
    "read_from_hint": (
        "a read only because its MCP server hints readOnlyHint, so it runs unconfirmed; "
        "say writes: true or false under its name"
    ),
    "retry_safe_from_hint": (
        "retry-safe only because its MCP server hints idempotentHint, so it is resent "
        "after an ambiguous failure; say retry_safe: under its name"
    ),
    "binding_not_in_schema": "{argument} <- {source}, which its schema does not have",
    "mcp_tool_changed": (
        "its MCP server lists it differently from when it was first seen ({changes}); read "
        "the change, then delete its entry in {file} to accept it"
    ),
    "write_without_confirmation": (
        "a write that asks for no confirmation (confirm: never), though every write is "
        "confirmed by a person"
    ),
    "phrase_shared": (
        "'{phrase}' is also a phrase of '{other}': a turn it alone decides names both, "
        "and is not read"
    ),
    "phrase_ties_nothing": (
        "the phrase '{phrase}' ties no word to {{{parameter}}}: the word before it is no "
        "role word of {languages} (as 'from', 'to'), so no value of a turn is read as "
        "{parameter} by it"
    ),
    "probe_out_of_reach": (
        "agent '{agent_name}' can call it but not '{probe}', its probe, so when its outcome "
        "is in doubt that agent's person is shown no evidence"
    ),
    "probe_binding_not_in_schema": (
        "its probe's {argument} <- {source}, which its schema does not have"
    ),
    "undeclared_tool": (
        "a {framework} tool agent.yaml does not declare, so it is taken as a write: "
        "confirmed, with no undo; declare it under its name (writes:, undo:, retry_safe:)"
    ),
}

# What `<from>` says when an argument of the undo has no source at all.
UNBOUND_SOURCE = "nothing (no argument or result field named {argument})"


# What `mcp_tool_changed` and QG015 say changed (tools/mcp_seen.py).
MCP_SCHEMA_CHANGED: Mapping[str, str] = {
    "input_schema": "its input schema",
    "output_schema": "its output schema",
}


def mcp_hint_changed(hint: str, before: object, now: object) -> str:
    """`readOnlyHint true -> false`; a hint the server no longer gives is `(none)`."""
    return f"{hint} {_hint_shown(before)} -> {_hint_shown(now)}"


def _hint_shown(value: object) -> str:
    if value is None:
        return "(none)"
    return "true" if value is True else "false" if value is False else str(value)
