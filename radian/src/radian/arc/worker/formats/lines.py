"""The JSON objects a worker printed on stdout."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any


def json_objects(output: str) -> Iterator[dict[str, Any]]:
    """Every JSON object printed on a line of its own, in order; a JSON array on a line
    (Claude Code's `--output-format json --verbose`) yields its objects. When no line holds
    one, a pretty-printed object that ends the output."""
    found = False
    for line in output.splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] not in "{[":
            continue
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError):  # nested past Python's limit: not a Result
            continue
        for obj in _objects_in(value):
            found = True
            yield obj
    if not found:
        trailing = _trailing_object(output)
        if trailing is not None:
            yield from _objects_in(trailing)


def _objects_in(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, dict)]
    return []


def _trailing_object(output: str) -> Any:
    text = output.rstrip()
    if not text.endswith(("}", "]")):
        return None
    decoder = json.JSONDecoder()
    starts = [m.start() + 1 for m in re.finditer(r"\n[{\[]", text)]
    candidates = ([0] if text[:1] in "{[" else []) + starts
    for start in reversed(candidates[-50:]):
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        if end == len(text):
            return value
    return None
