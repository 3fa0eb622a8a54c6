"""The agent.yaml being read: errors at a key path, pydantic's verdicts as sentences.

Every part of the config (`loader.py`, `catalogue.py`, `mcp.py`) reads through one
`Reading`: it holds the document with its positions (`yamldoc.py`), checks a value against
a raw pydantic shape and turns the first error into the sentence a person reads, at the
line and column the yaml says, and keeps the files the yaml names inside its folder.
"""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from stalwart import texts
from stalwart.errors import ConfigError

from .yamldoc import Loc, YamlDocument

_M = TypeVar("_M", bound=BaseModel)

# An agent's name, an MCP server's prefix: letters, digits, '_' and '-'.
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")

# The environment variable that allows agent.yaml's files outside its folder ("1").
ALLOW_OUTSIDE_ENV = "STALWART_ALLOW_OUTSIDE_PROJECT"


class Raw(BaseModel):
    """A raw shape of agent.yaml: no key it does not name, no value coerced."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Reading:
    """One agent.yaml as it is read: its file, its folder, its document."""

    def __init__(self, source: Path, text: str, *, allow_outside: bool = False) -> None:
        self.source = source
        self.file = str(source)
        self.folder = source.parent
        self.allow_outside = allow_outside
        self.document = YamlDocument(self.file, text)

    def error(self, loc: Loc, expected: str, *, at_key: bool = False) -> ConfigError:
        return self.document.error(loc, expected, at_key=at_key)

    def inside(self, path: Path, loc: Loc) -> Path:
        """`path` (resolved, links followed) if it is inside the project's folder, or the
        caller allowed files outside it; else a ConfigError at `loc`."""
        if self.allow_outside or path.is_relative_to(self.folder):
            return path
        raise self.error(loc, texts.outside_project(str(path), str(self.folder), ALLOW_OUTSIDE_ENV))

    def validate(self, model: type[_M], data: Any, loc: Loc) -> _M:
        try:
            return model.model_validate(data)
        except ValidationError as error:
            first = error.errors()[0]
            error_loc = (*loc, *first["loc"])
            raise self.error(
                error_loc,
                _explain(first, model, tuple(first["loc"])),
                at_key=first["type"] == "extra_forbidden",
            ) from None


_TYPE_NAMES = {
    "string_type": "a string",
    "bool_type": "true or false",
    "dict_type": "a mapping",
    "list_type": "a list",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}


def _explain(error: Any, model: type[BaseModel], loc: Loc) -> str:
    """One pydantic error as the sentence a person reads."""
    kind = error["type"]
    got = error.get("input")
    if kind == "extra_forbidden":
        allowed = ", ".join(_allowed_keys(model, loc[:-1]))
        return f"unknown key {loc[-1]!r}; expected one of: {allowed}"
    if kind == "missing":
        return "a required key is missing"
    if kind == "literal_error":
        return f"expected {error['ctx']['expected']}, got {got!r}"
    if kind in _TYPE_NAMES:
        return f"expected {_TYPE_NAMES[kind]}, got {got!r}"
    return f"{error['msg']}, got {got!r}"


def _allowed_keys(model: Any, loc: Loc) -> list[str]:
    # Walk the model's field types along the error's location to the mapping it names.
    current: Any = model
    for step in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            if not isinstance(step, str) or step not in current.model_fields:
                return []
            current = current.model_fields[step].annotation
        elif typing.get_origin(current) in (dict, list):
            current = typing.get_args(current)[-1]
        else:
            return []
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _unwrap(annotation: Any) -> Any:
    """`X | None` as X."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return members[0]
    return annotation
