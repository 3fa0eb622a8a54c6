"""Idempotency keys: SHA-256 over the session, the step, the tool and the arguments.

The arguments are rendered as canonical JSON (sorted keys, no spaces) with numbers
rendered stably: an int as its digits, a float by `repr` (the shortest text that reads
back to the same float), a Decimal normalised without exponent; any other typed value
(a datetime, a UUID, an Enum, a model) by its JSON form in the record. So the same call at the
same step of the same session always has the same key, in any process.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from ..errors import NotRecordable, UnkeyableArgument


def canonical_json(value: Any) -> str:
    """The one text of a JSON-like value: sorted keys, no spaces, stable numbers."""
    return _render(value)


def idempotency_key(session: str, step: int | str, tool: str, args: Mapping[str, Any]) -> str:
    """The hex SHA-256 of a call: the same inputs give the same key, always."""
    material = _material({"args": dict(args), "session": session, "step": step, "tool": tool})
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


def undo_key(write_key: str, undo_tool: str, args: Mapping[str, Any]) -> str:
    """An undo's own key, derived from the key of the write it undoes."""
    material = _material({"args": dict(args), "undoes": write_key, "tool": undo_tool})
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


# A key's material whose arguments are flat (text names, plain values) is rendered by
# the C encoder: for those it writes exactly what `_render` writes (sorted text keys, an
# int's digits, a float's repr, which for a whole float below 2**53 ends ".0"), and a
# call's key is made for every call sent. NaN and infinities go to `_render`, which
# refuses them. `tests/test_keys.py` holds the two paths equal.
_PLAIN = frozenset({str, int, float, bool, type(None)})
_C_RENDER = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
).encode


def _material(material: dict[str, Any]) -> str:
    args: dict[Any, Any] = material["args"]
    for name, value in args.items():
        if type(name) is not str or type(value) not in _PLAIN:
            return _render(material)
    try:
        return _C_RENDER(material)
    except ValueError:  # NaN or an infinity: refused as `_render` refuses it
        return _render(material)


# The C encoder of one JSON string, non-ASCII kept: what `json.dumps(text,
# ensure_ascii=False)` returns, without building a JSONEncoder on every call (as `dumps`
# does for any non-default option); keys are rendered for every call sent.
_string = json.encoder.encode_basestring
_CONSTANTS = {None: "null", True: "true", False: "false"}


def _render(value: Any) -> str:
    if isinstance(value, str):
        return _string(value)
    if value is None or isinstance(value, bool):
        return _CONSTANTS[value]
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UnkeyableArgument(f"{value!r} has no stable JSON form")
        if value.is_integer() and abs(value) < 2**53:
            return f"{value:.1f}"
        return repr(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise UnkeyableArgument(f"{value!r} has no stable JSON form")
        text = format(value.normalize(), "f")
        return text if "." in text else text + ".0"
    if isinstance(value, Mapping):
        items = sorted((str(k), v) for k, v in value.items())
        return "{" + ",".join(f"{_string(k)}:{_render(v)}" for k, v in items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_render(v) for v in value) + "]"
    return _render(_json_form(value))


def _json_form(value: Any) -> Any:
    """A typed argument (a datetime, an Enum, a model) keyed as the record keeps it."""
    # Imported here: the record's schema reads texts, which reads this module.
    from ..record.schema import json_default

    try:
        return json_default(value)
    except NotRecordable:
        raise UnkeyableArgument(
            f"{type(value).__name__} {value!r} has no stable JSON form"
        ) from None
