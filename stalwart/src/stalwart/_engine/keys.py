"""Idempotency keys: SHA-256 over the session, the step, the tool and the arguments.

The arguments are rendered as canonical JSON (`codec.canonical_json`: sorted keys, no
spaces, numbers rendered stably: an int as its digits, a float by `repr`, the shortest
text that reads back to the same float, a Decimal normalised without exponent; any other
typed value, a datetime, a UUID, an Enum, a model, by its JSON form in the record). So
the same call at the same step of the same session always has the same key, in any
process.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from .. import codec
from ..errors import Unencodable, UnkeyableArgument


def canonical_json(value: Any) -> str:
    """The one text of a JSON-like value (`codec.canonical_json`); `UnkeyableArgument`
    for a value that has none."""
    try:
        return codec.canonical_json(value)
    except Unencodable as refused:
        raise _unkeyable(refused) from None


def idempotency_key(session: str, step: int | str, tool: str, args: Mapping[str, Any]) -> str:
    """The hex SHA-256 of a call: the same inputs give the same key, always."""
    material = _material({"args": dict(args), "session": session, "step": step, "tool": tool})
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


def undo_key(write_key: str, undo_tool: str, args: Mapping[str, Any]) -> str:
    """An undo's own key, derived from the key of the write it undoes."""
    material = _material({"args": dict(args), "undoes": write_key, "tool": undo_tool})
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


# A key's material whose arguments are flat (text names, plain values) is rendered by
# the C encoder: for those it writes exactly what `codec.canonical_json` writes (sorted
# text keys, an int's digits, a float's repr, which for a whole float below 2**53 ends
# ".0"), and a call's key is made for every call sent. NaN and infinities go to
# `canonical_json`, which refuses them. `tests/test_keys.py` holds the two paths equal.
_PLAIN = frozenset({str, int, float, bool, type(None)})
_C_RENDER = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
).encode


def _material(material: dict[str, Any]) -> str:
    args: dict[Any, Any] = material["args"]
    for name, value in args.items():
        if type(name) is not str or type(value) not in _PLAIN:
            return canonical_json(material)
    try:
        return _C_RENDER(material)
    except ValueError:  # NaN or an infinity: refused as `canonical_json` refuses it
        return canonical_json(material)


def _unkeyable(refused: Unencodable) -> UnkeyableArgument:
    value = refused.value
    if refused.reason is Unencodable.Reason.NOT_FINITE:
        return UnkeyableArgument(f"{value!r} has no stable JSON form")
    return UnkeyableArgument(f"{type(value).__name__} {value!r} has no stable JSON form")
