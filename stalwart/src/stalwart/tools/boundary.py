"""The typed boundary: a tool's parameters, their JSON schema, and the checking and
conversion of every argument, from the tool's type hints, through pydantic.

An argument reaches a tool from a turn (the selector), a model (JSON), the record (JSON,
read back by any process) or an undo's binding (a field of what the write returned, as
the record keeps it). Whatever its source, it is checked in one way: its JSON form (see
`record.schema.json_default`) is validated by the parameter's `TypeAdapter` in strict mode,
as JSON. So each type takes exactly its JSON form and nothing looser:

- `int` a whole number (not `"7"`, not `true`, not `7.0`); `float` a number (an integer
  too); `bool` true or false; `str` text;
- `Decimal` its text (`"40.00"`) or a whole number; a float is refused at the top level,
  since its digits are not exact (pydantic's own rule, a float taken, holds inside
  containers and models);
- `datetime`, `date`, `time` their ISO 8601 text; `UUID` its text; an `Enum` its value;
  a `Literal` one of its values;
- a pydantic model, a `TypedDict` or a dataclass a mapping of its fields; lists, tuples
  and mappings of any of these;
- `Annotated[...]` constraints (`Field(gt=0)`, `max_length=...`) hold;
- `Any` (or no hint) takes any JSON value.

What the tool receives is the converted value: a `datetime`, an `Enum` member, a model
instance. A refusal is stalwart's own text (`texts.expected_type` names what the value
should have been), never pydantic's message.

The schema of each parameter is pydantic's (validation mode) except for `Decimal`, which
is described as the text it takes: `{"type": "string", "format": "decimal"}`. Models'
definitions are gathered into one `$defs` at the top of the tool's schema.
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pydantic import ConfigDict, PydanticUserError, TypeAdapter, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from stalwart import texts
from stalwart.errors import ArgumentRefused, NotRecordable
from stalwart.record.schema import recorded_text

_STRICT = ConfigDict(strict=True, allow_inf_nan=False)


@dataclass(frozen=True)
class Refusal:
    """Why a value does not fit: the argument (a path inside it, `address.zip`), the value
    found there, and what it should have been."""

    argument: str
    value: Any
    expected: str
    missing: bool = False  # a field inside the value is left out

    @property
    def reason(self) -> str:
        if self.missing:
            return texts.missing_argument_reason(self.argument)
        return texts.wrong_type_reason(self.argument, self.value, self.expected)


class _Schema(GenerateJsonSchema):
    """Pydantic's schema, with a Decimal described as the text it is given as."""

    def decimal_schema(self, schema: core_schema.DecimalSchema) -> JsonSchemaValue:
        return {"type": "string", "format": "decimal"}


class ParamType:
    """One parameter's type: its adapter, its schema, and how a value is checked."""

    def __init__(self, annotation: Any) -> None:
        """PydanticSchemaGenerationError for a hint pydantic cannot check (`spec.py` makes
        it a ToolDefinitionError when the tool is declared)."""
        self.annotation = annotation
        try:
            self.adapter: TypeAdapter[Any] = TypeAdapter(annotation, config=_STRICT)
        except PydanticUserError as error:
            if error.code != "type-adapter-config-unused":
                raise
            # A model, TypedDict or dataclass has its own config; strictness is asked for
            # on each validation instead.
            self.adapter = TypeAdapter(annotation)
        self._top_decimal = _strip_optional(annotation) is Decimal
        # A plain int, float or str hint: a value of exactly that type that JSON carries
        # unchanged is what the round trip below would give back, and is taken as it is.
        self._plain: type | None = annotation if annotation in (int, float, str) else None

    def schema(self) -> dict[str, Any]:
        return self.adapter.json_schema(
            schema_generator=_Schema, ref_template="#/$defs/{model}", mode="validation"
        )

    def convert(self, name: str, value: Any) -> Any:
        """The value as the tool takes it; a `Refusal` (raised as `ArgumentRefused`) if it
        does not fit."""
        plain = self._plain
        if plain is not None and type(value) is plain and _CARRIED[plain](value):
            return value
        if self._top_decimal and isinstance(value, float):
            raise ArgumentRefused(Refusal(name, value, texts.EXPECTED_DECIMAL))
        try:
            text = recorded_text(value)
        except (NotRecordable, ValueError):  # ValueError: a circular value
            raise ArgumentRefused(Refusal(name, value, texts.EXPECTED_JSON)) from None
        try:
            return self.adapter.validate_json(text, strict=True)
        except ValidationError as error:
            refusal = _refusal(name, value, error.errors())
            if self._top_decimal and refusal.argument == name:
                refusal = Refusal(name, value, texts.EXPECTED_DECIMAL)  # "NaN", not finite
            raise ArgumentRefused(refusal) from None

    def refusal(self, name: str, value: Any) -> Refusal | None:
        """None if the value fits, else why not."""
        try:
            self.convert(name, value)
        except ArgumentRefused as refused:
            return refused.refusal
        return None


def _int_carried(value: int) -> bool:
    return -_INT64 <= value < _INT64


_INT64 = 2**63

# Whether JSON gives a value of exactly the plain type back as it is, and strict
# validation takes it, by that type: an int of up to 64 bits, a finite float, an ASCII
# text (a lone surrogate is no character). A float's and a text's is a C method.
_CARRIED: Mapping[type, Callable[[Any], bool]] = {
    str: str.isascii,
    float: math.isfinite,
    int: _int_carried,
}


def _refusal(name: str, value: Any, errors: Sequence[Mapping[str, Any]]) -> Refusal:
    """The first error as stalwart says it; a union's alternatives joined with "or"."""
    first = errors[0]
    loc = tuple(first["loc"])
    # A union's errors are one per member, each under the member's tag: the value fits
    # none of them; say every member's expectation at that one place.
    tags = {tuple(e["loc"])[:1] for e in errors}
    if len(errors) > 1 and all(len(tuple(e["loc"])) == 1 for e in errors) and len(tags) > 1:
        kinds = (texts.expected_type(e["type"], e.get("ctx")) for e in errors)
        expected = " or ".join(dict.fromkeys(kinds))
        return Refusal(name, value, expected)
    path = _path(name, loc)
    shown = first.get("input", value) if loc else value
    if first["type"] == "missing":
        return Refusal(path, None, "", missing=True)
    return Refusal(path, shown, texts.expected_type(first["type"], first.get("ctx")))


def _path(name: str, loc: tuple[Any, ...]) -> str:
    path = name
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _strip_optional(annotation: Any) -> Any:
    """The hint less Optional[...] and Annotated[...]'s constraints."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _strip_optional(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return _strip_optional(members[0])
    return annotation
