"""The JSON codec on the ground floor: a typed value's JSON form and its canonical text.

Keys, the record and the texts all render values the same way: a Decimal as its text, a
datetime, date or time as ISO 8601, a UUID as its text, an Enum as its value, a pydantic
model as its JSON mode dump, a dataclass as its fields; sorted keys, no spaces, stable
numbers. This module holds that rendering once. It imports nothing of stalwart's but its
errors and holds no sentences: what it cannot render it refuses with `Unencodable`, naming the value
and why, and each caller says so in its own words (the keys as `UnkeyableArgument`, the
record as `NotRecordable`, a question by showing the value as Python writes it).
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import math
import uuid
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from .errors import Unencodable


def json_form(value: Any) -> Any:
    """The JSON form of a value JSON has no type for, one level down; an encoder renders
    what it returns.

    Each is exact, given the type it is read back as (the typed boundary reads it back
    for a parameter of that type). Anything else (an arbitrary object, a set, whose order
    differs between processes, bytes) is `Unencodable`: kept as `str()` it would come
    back as text, and an undo bound to it would act on that text.
    """
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    raise Unencodable(value, Unencodable.Reason.NO_JSON_FORM)


def canonical_json(value: Any) -> str:
    """The one text of a JSON-like value: sorted keys, no spaces, stable numbers (an int
    as its digits, a float by `repr`, a Decimal normalised without exponent), any other
    typed value by its `json_form`."""
    return _render(value)


def canonical_text(value: Any) -> str:
    """`canonical_json`, the same text, by the C encoder when `value` is a flat object
    (text keys, each value a str, int, float, bool or None): for those it writes exactly
    what `_render` writes (sorted text keys, an int's digits, a float's repr, which for a
    whole float below 2**53 ends ".0"). What a tool returns is shown this way at least
    twice a call (in the model's memory and in the reply); NaN and infinities, and any
    other value, go to `_render`, which refuses or renders them as `canonical_json` does.
    `tests/test_codec.py` holds the two equal."""
    if type(value) is dict:
        for key, item in value.items():
            if type(key) is not str or type(item) not in _PLAIN:
                return _render(value)
        try:
            return "".join(_C_FLAT(value, 0)) if _C_FLAT is not None else _C_RENDER(value)
        except ValueError:  # NaN or an infinity: refused as `_render` refuses it
            pass
    return _render(value)


_PLAIN = frozenset({str, int, float, bool, type(None)})
_C_RENDER = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
).encode


def _no_default(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not plain")  # never called: values are plain


# `_C_RENDER`'s C encoder, made once instead of on every `encode` (which also runs
# `JSONEncoder.iterencode`'s Python set-up): the same text. It keeps no containers (a flat
# object holds none that could hold itself), so one serves every thread. None where json
# has no C encoder: `_C_RENDER` itself.
_make_encoder = getattr(json.encoder, "c_make_encoder", None)
_C_FLAT: Callable[[Any, int], Sequence[str]] | None = (
    _make_encoder(
        None, _no_default, json.encoder.encode_basestring, None, ":", ",", True, False, False
    )
    if _make_encoder is not None
    else None
)

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
            raise Unencodable(value, Unencodable.Reason.NOT_FINITE)
        if value.is_integer() and abs(value) < 2**53:
            return f"{value:.1f}"
        return repr(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise Unencodable(value, Unencodable.Reason.NOT_FINITE)
        text = format(value.normalize(), "f")
        return text if "." in text else text + ".0"
    if type(value) is dict or isinstance(value, Mapping):  # a dict without the ABC's check
        # (str(key), value) pairs made by C's map and zip, not a Python generator per pair.
        items = sorted(zip(map(str, value), value.values(), strict=True))
        return "{" + ",".join([f"{_string(k)}:{_render(v)}" for k, v in items]) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(map(_render, value)) + "]"
    return _render(json_form(value))
