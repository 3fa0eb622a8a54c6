"""What a person reads when input is past its limits (limits.py)."""

from __future__ import annotations


def input_not_text(what: str, value: object) -> str:
    return f"{what[0].upper()}{what[1:]} must be a text; got {type(value).__name__}."


def input_empty(what: str) -> str:
    return f"{what[0].upper()}{what[1:]} must be a non-empty text."


def input_too_long(what: str, length: int, limit: int) -> str:
    return (
        f"{what[0].upper()}{what[1:]} is {length:,} characters long; at most {limit:,} "
        f"are taken. Nothing was done."
    )


def input_bad_character(what: str, char: str, at: int) -> str:
    return (
        f"{what[0].upper()}{what[1:]} has the character U+{ord(char):04X} at {at}, which "
        f"stalwart does not take (a control character or a lone surrogate). Nothing was done."
    )


def number_too_long(text: str, digits: int, limit: int) -> str:
    shown = text if len(text) <= 40 else f"{text[:20]}…{text[-8:]}"
    return (
        f"The number {shown} has {digits:,} digits; a number in a turn has at most {limit}. "
        f"Nothing was done."
    )


def too_many_steps(count: int, limit: int) -> str:
    return (
        f"This turn asks for {count} steps; one turn is read into at most {limit}. "
        f"Split it into several turns. Nothing was done."
    )


# --- agent.yaml from somewhere else (config/yamldoc.py, config/reading.py) ---


def yaml_too_many_aliases(limit: int) -> str:
    return f"more than {limit} aliases (*name): refused, as an alias bomb would be"


def yaml_too_large(limit: int) -> str:
    return (
        f"the document, its aliases expanded, has more than {limit:,} values: refused, as "
        f"an alias bomb would be"
    )


def yaml_too_deep() -> str:
    return "the document is nested too deeply to be read"


def outside_project(path: str, folder: str, env: str) -> str:
    return (
        f"expected a path inside the project folder {folder}, got {path}; files outside it "
        f"are read or written only when allowed (stalwart --allow-outside-project, or {env}=1)"
    )


def confirm_false_refused(tool: str) -> str:
    return (
        f"{tool} is a write, and every write is confirmed by a person (chapter 34); to let it "
        f"run without asking, say confirm: never under {tool} (lint and verify report it)"
    )
