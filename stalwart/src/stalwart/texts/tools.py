"""Texts of the typed boundary (tools/boundary.py), calling a tool (tools/invoke.py)
and what the record holds (record/schema.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# --- the typed boundary (tools/boundary.py) and what the record holds (record/schema.py) ---


def not_recordable(value: Any) -> str:
    kind = type(value).__name__
    if isinstance(value, set | frozenset):
        return f"{kind} has no order the record can keep; return a sorted list"
    return f"{kind} has no exact JSON form the record can keep"


def not_encodable(problem: str) -> str:
    """Why a value cannot be written at all (`problem`: the encoder's error, named)."""
    return f"it cannot be written as JSON ({problem})"


def unrecordable_because(tool: str, detail: str) -> str:
    """A run's cause: a step returned what the record cannot hold; nothing is bound to it."""
    return f"{tool} returned a value the record cannot hold exactly ({detail})"


# --- calling a tool (tools/invoke.py) ---


def tool_timed_out(tool: str, timeout: float) -> str:
    return f"{tool} took longer than its timeout of {timeout:g} seconds"


def bad_timeout(tool: str, timeout: Any) -> str:
    return f"tool {tool!r}: timeout must be a number of seconds above 0; got {timeout!r}"


def phrases_not_a_list(tool: str, phrases: Any) -> str:
    """`phrases=` (or agent.yaml's `phrases:`) that is not a list of phrases."""
    return f'tool {tool!r}: phrases must be a list of phrases, as ["send money"]; got {phrases!r}'


def phrase_without_words(tool: str, phrase: Any) -> str:
    return f"tool {tool!r}: a phrase is a text with a word in it; got {phrase!r}"


def phrase_names_no_parameter(tool: str, phrase: str, name: str, params: Sequence[str]) -> str:
    """A declared phrase's `{name}` that is none of the tool's parameters."""
    known = ", ".join(params) or "none"
    return (
        f"tool {tool!r}: the phrase {phrase!r} names {{{name}}}, which is not a parameter "
        f"of {tool} (its parameters: {known})"
    )


def phrase_names_parameter_twice(tool: str, phrase: str, name: str) -> str:
    return f"tool {tool!r}: the phrase {phrase!r} names {{{name}}} twice"


# What a value should have been, by the kind of pydantic error that refused it: the tail of
# "its <argument> is <value>, not <expected>". `{...}` are the error's context.
EXPECTED_TYPES: Mapping[str, str] = {
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "decimal_type": "a decimal number",
    "decimal_parsing": "a decimal number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "text",
    "literal_error": "one of {expected}",
    "enum": "one of {expected}",
    "datetime_type": "a date and time (ISO 8601, such as 2026-12-01T10:00:00)",
    "datetime_parsing": "a date and time (ISO 8601, such as 2026-12-01T10:00:00)",
    "datetime_from_date_parsing": "a date and time (ISO 8601, such as 2026-12-01T10:00:00)",
    "date_type": "a date (YYYY-MM-DD)",
    "date_parsing": "a date (YYYY-MM-DD)",
    "date_from_datetime_parsing": "a date (YYYY-MM-DD)",
    "date_from_datetime_inexact": "a date (YYYY-MM-DD)",
    "time_type": "a time (HH:MM:SS)",
    "time_parsing": "a time (HH:MM:SS)",
    "uuid_type": "a UUID",
    "uuid_parsing": "a UUID",
    "uuid_version": "a UUID of version {expected_version}",
    "greater_than": "greater than {gt}",
    "greater_than_equal": "at least {ge}",
    "less_than": "less than {lt}",
    "less_than_equal": "at most {le}",
    "multiple_of": "a multiple of {multiple_of}",
    "decimal_max_digits": "a decimal number of at most {max_digits} digits",
    "decimal_max_places": "a decimal number of at most {decimal_places} decimal places",
    "string_too_short": "text of at least {min_length} characters",
    "string_too_long": "text of at most {max_length} characters",
    "string_pattern_mismatch": "text matching {pattern}",
    "too_short": "a list of at least {min_length} items",
    "too_long": "a list of at most {max_length} items",
    "list_type": "a list",
    "tuple_type": "a list",
    "set_type": "a list",
    "frozen_set_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "dataclass_type": "a mapping",
    "dataclass_exact_type": "a mapping",
    "typed_dict_type": "a mapping",
    "extra_forbidden": "a field it takes",
    "none_required": "null",
}
EXPECTED_DECIMAL = EXPECTED_TYPES["decimal_type"]
EXPECTED_JSON = "a JSON value"


def expected_type(kind: str, context: Mapping[str, Any] | None) -> str:
    """What a value should have been, for a pydantic error of this kind."""
    template = EXPECTED_TYPES.get(kind)
    if template is None:
        return f"valid ({kind.replace('_', ' ')})"
    return template.format(**{k: _context_shown(v) for k, v in (context or {}).items()})


def _context_shown(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def unchecked_parameter(tool: str, parameter: str, annotation: Any, error: Exception) -> str:
    shown = getattr(annotation, "__name__", None) or str(annotation)
    detail = str(error).split("\n", 1)[0]
    return (
        f"tool {tool!r}: parameter {parameter!r} is a {shown}, which cannot be checked or "
        f"given as JSON; use a JSON type, a pydantic model, a TypedDict or a dataclass "
        f"({detail})"
    )
