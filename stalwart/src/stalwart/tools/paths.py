"""Binding paths: where in a write's arguments or result an undo's argument comes from.

A binding is `$args.<path>` or `$result.<path>`. A path is a name followed by steps:

- `.field`: a field of an object (`$result.charge.id`);
- `[n]`: the n-th item of a list, from 0 (`$result.items[0].sku`);
- `[*]`: every item of a list, the rest of the path taken from each, giving a list
  (`$args.entities[*].name` is the list of every entity's name).

A path that meets a missing field, an index past the end, or a value of the wrong kind
is not found, and the undo cannot be bound (the check says so; nothing guesses).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\*|[0-9]+)\]")
_HEAD = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*")

EACH = "*"
Step = str | int  # a field name, an index, or EACH


def parse_path(path: str) -> tuple[Step, ...] | None:
    """'entities[*].name' as ('entities', '*', 'name'); None if it is not a path."""
    head = _HEAD.match(path)
    if head is None:
        return None
    steps: list[Step] = [head.group(0)]
    at = head.end()
    while at < len(path):
        step = _STEP.match(path, at)
        if step is None:
            return None
        field, index = step.groups()
        if field is not None:
            steps.append(field)
        else:
            steps.append(EACH if index == EACH else int(index))
        at = step.end()
    return tuple(steps)


def resolve(value: Any, steps: Sequence[Step]) -> tuple[bool, Any]:
    """The value the steps reach from `value`: (found, value)."""
    if not steps:
        return True, value
    step, rest = steps[0], steps[1:]
    if step == EACH:
        if not isinstance(value, list):
            return False, None
        found = [resolve(item, rest) for item in value]
        if not all(ok for ok, _ in found):
            return False, None
        return True, [item for _, item in found]
    if isinstance(step, int):
        if not isinstance(value, list) or step >= len(value):
            return False, None
        return resolve(value[step], rest)
    # A dict is told by its type first: isinstance against the Mapping ABC is a call into
    # abc's Python __instancecheck__ (every binding of every undo resolves some steps).
    if not (type(value) is dict or isinstance(value, Mapping)) or step not in value:
        return False, None
    return resolve(value[step], rest)


def in_schema(schema: Mapping[str, Any], steps: Sequence[Step]) -> bool:
    """Whether a JSON schema (an object's) describes this path; a schema that says
    nothing of a level (no `properties`, no `items`) is given the benefit of the doubt."""
    current: Mapping[str, Any] = schema
    for step in steps:
        if isinstance(step, str) and step != EACH:
            properties = current.get("properties")
            if not isinstance(properties, Mapping):
                return current.get("type") in (None, "object")
            if step not in properties:
                return False
            current = properties[step]
        else:
            if current.get("type") not in (None, "array"):
                return False
            items = current.get("items")
            if not isinstance(items, Mapping):
                return True
            current = items
    return True
