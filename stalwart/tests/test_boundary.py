"""The typed boundary: every type's schema, checking and conversion, through pydantic."""

from __future__ import annotations

import dataclasses
import sys
import textwrap
from collections.abc import Iterator
from datetime import date, datetime
from decimal import Decimal
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal
from uuid import UUID

import pytest
from model_shop import scripted
from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # pydantic takes typing's only from Python 3.12

from stalwart import Agent, FakeClock, tool
from stalwart.errors import ToolDefinitionError
from stalwart.models import Model, PriceTable, ScriptedAdapter
from stalwart.policy.check import Check
from stalwart.policy.rulebook import parse_rulebook
from stalwart.record.schema import as_recorded
from stalwart.tools import ToolSpec, spec_of

pytestmark = pytest.mark.unit

EMPTY = parse_rulebook("")


class Colour(Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    street: str
    zip: int


class Line(TypedDict):
    sku: str
    quantity: int


@dataclasses.dataclass
class Window:
    start: date
    end: date


def spec(function: Any) -> ToolSpec:
    found = spec_of(function)
    assert found is not None
    return found


@tool
def paint(colour: Colour) -> dict[str, str]:
    """Paint in a colour."""
    return {"colour": colour.value}


@tool
def size(size: Literal["s", "m", "l"]) -> dict[str, str]:
    """Pick a size."""
    return {"size": size}


@tool
def meet(at: datetime, on: date | None = None) -> dict[str, str]:
    """Meet at a time."""
    return {}


@tool
def find(order: UUID) -> dict[str, str]:
    """Find an order by its id."""
    return {}


@tool
def pay(amount: Decimal) -> dict[str, str]:
    """Pay an amount."""
    return {}


@tool
def ship(address: Address, lines: list[Line], window: Window | None = None) -> dict[str, str]:
    """Ship lines to an address."""
    return {}


@tool
def tip(
    amount: Annotated[float, Field(gt=0)],
    note: Annotated[str, Field(max_length=5)] = "",
) -> dict[str, str]:
    """Leave a tip."""
    return {}


def refused(function: Any, args: dict[str, Any]) -> str | None:
    tool_spec = spec(function)
    verdict = Check({tool_spec.name: tool_spec}, EMPTY).call(tool_spec.name, args, [])
    return None if verdict.allowed else verdict.reason


def typed(function: Any, args: dict[str, Any]) -> dict[str, Any]:
    return spec(function).typed(args)


def schema(function: Any) -> dict[str, Any]:
    return spec(function).json_schema()


# --- each type: its schema, what it takes (converted), what it refuses --------------------


def test_enum() -> None:
    assert schema(paint)["properties"]["colour"] == {
        "enum": ["red", "blue"],
        "title": "Colour",
        "type": "string",
    }
    assert typed(paint, {"colour": "red"}) == {"colour": Colour.RED}
    assert typed(paint, {"colour": Colour.BLUE}) == {"colour": Colour.BLUE}
    assert refused(paint, {"colour": "green"}) == (
        "its colour is \"green\", not one of 'red' or 'blue'"
    )


def test_literal() -> None:
    assert schema(size)["properties"]["size"] == {"enum": ["s", "m", "l"], "type": "string"}
    assert typed(size, {"size": "m"}) == {"size": "m"}
    assert refused(size, {"size": "xl"}) == "its size is \"xl\", not one of 's', 'm' or 'l'"


def test_datetime_and_date() -> None:
    properties = schema(meet)["properties"]
    assert properties["at"] == {"format": "date-time", "type": "string"}
    assert properties["on"]["anyOf"][0] == {"format": "date", "type": "string"}
    assert typed(meet, {"at": "2026-12-01T10:00:00", "on": "2026-12-02"}) == {
        "at": datetime(2026, 12, 1, 10, 0),
        "on": date(2026, 12, 2),
    }
    assert typed(meet, {"at": datetime(2026, 12, 1, 10)}) == {"at": datetime(2026, 12, 1, 10)}
    assert refused(meet, {"at": "tomorrow"}) == (
        'its at is "tomorrow", not a date and time (ISO 8601, such as 2026-12-01T10:00:00)'
    )
    assert refused(meet, {"at": "2026-12-01T10:00:00", "on": "2026-12-02T10:00:00"}) == (
        'its on is "2026-12-02T10:00:00", not a date (YYYY-MM-DD)'
    )
    assert refused(meet, {"at": 1764583200}) is not None  # a number is not its JSON form


def test_uuid() -> None:
    assert schema(find)["properties"]["order"] == {"format": "uuid", "type": "string"}
    text = "12345678-1234-5678-1234-567812345678"
    assert typed(find, {"order": text}) == {"order": UUID(text)}
    assert refused(find, {"order": "4411"}) == 'its order is "4411", not a UUID'


def test_decimal() -> None:
    assert schema(pay)["properties"]["amount"] == {"type": "string", "format": "decimal"}
    assert typed(pay, {"amount": "40.00"}) == {"amount": Decimal("40.00")}
    assert str(typed(pay, {"amount": "40.00"})["amount"]) == "40.00"  # its digits kept
    assert typed(pay, {"amount": 40}) == {"amount": Decimal(40)}
    assert refused(pay, {"amount": 40.5}) == "its amount is 40.5, not a decimal number"
    assert refused(pay, {"amount": "Infinity"}) == (
        'its amount is "Infinity", not a decimal number'
    )


def test_pydantic_model_typed_dict_and_dataclass() -> None:
    described = schema(ship)
    # A parameter's own model is inlined; models inside it are gathered in `$defs`.
    assert described["properties"]["address"]["required"] == ["street", "zip"]
    assert described["properties"]["lines"] == {
        "items": {"$ref": "#/$defs/Line"},
        "type": "array",
    }
    assert set(described["$defs"]) == {"Line", "Window"}
    assert described["$defs"]["Line"]["required"] == ["sku", "quantity"]
    args = {
        "address": {"street": "Main", "zip": 1000},
        "lines": [{"sku": "A1", "quantity": 2}],
        "window": {"start": "2026-12-01", "end": "2026-12-03"},
    }
    assert typed(ship, args) == {
        "address": Address(street="Main", zip=1000),
        "lines": [{"sku": "A1", "quantity": 2}],
        "window": Window(date(2026, 12, 1), date(2026, 12, 3)),
    }
    # A typed value passes again (the engine checks what it converted), by its JSON form.
    assert refused(ship, typed(ship, args)) is None
    assert refused(ship, {**args, "address": {"street": "Main", "zip": "1000"}}) == (
        'its address.zip is "1000", not a whole number'
    )
    assert refused(ship, {**args, "lines": [{"sku": "A1"}]}) == (
        "it needs lines[0].quantity, and the call leaves it out"
    )
    assert refused(ship, {**args, "address": "Main 1000"}) == (
        'its address is "Main 1000", not a mapping'
    )


def test_annotated_constraints() -> None:
    properties = schema(tip)["properties"]
    assert properties["amount"] == {"exclusiveMinimum": 0, "type": "number"}
    assert properties["note"] == {"maxLength": 5, "type": "string", "default": ""}
    assert typed(tip, {"amount": 2}) == {"amount": 2.0}
    assert refused(tip, {"amount": 0}) == "its amount is 0, not greater than 0"
    assert refused(tip, {"amount": 1, "note": "thanks!"}) == (
        'its note is "thanks!", not text of at most 5 characters'
    )


def test_a_union_names_each_alternative() -> None:
    @tool
    def label(code: int | str) -> dict[str, str]:
        """Label."""
        return {}

    assert refused(label, {"code": 7}) is None
    assert refused(label, {"code": [7]}) == "its code is [7], not a whole number or text"


class Opaque:
    """A class pydantic knows nothing about."""


def test_a_hint_that_cannot_be_checked_is_refused_when_the_tool_is_declared() -> None:
    with pytest.raises(ToolDefinitionError, match="parameter 'thing' is a Opaque"):

        @tool
        def use(thing: Opaque) -> None:
            """Use."""


# --- through a run: the tool receives typed values -------------------------------------------

TYPED_TOOLS = '''
from __future__ import annotations

import datetime
import enum

from pydantic import BaseModel

from stalwart import tool

CALLS: list[tuple[str, dict[str, object]]] = []


class Colour(enum.Enum):
    RED = "red"


class Address(BaseModel):
    street: str
    zip: int


@tool(writes=True, undo="unbook", retry_safe=True)
def book(at: datetime.datetime, colour: Colour, address: Address) -> dict[str, object]:
    """Book a slot."""
    CALLS.append(("book", {"at": at, "colour": colour, "address": address}))
    return {"slot": at, "colour": colour}


@tool(writes=True, retry_safe=True)
def unbook(slot: datetime.datetime, colour: Colour) -> dict[str, object]:
    """Give a slot back."""
    CALLS.append(("unbook", {"slot": slot, "colour": colour}))
    return {}


@tool
def fail() -> None:
    """Fail at once."""
    raise RuntimeError("down")
'''


@pytest.fixture
def typed_agent(tmp_path: Path) -> Iterator[tuple[Agent, Any]]:
    module = "typed_tools_" + tmp_path.name.replace("-", "_")[-20:]
    (tmp_path / f"{module}.py").write_text(TYPED_TOOLS)
    (tmp_path / "agent.yaml").write_text(
        textwrap.dedent(f"""\
        agents:
          desk:
            tools: [book, unbook, fail]
            on_unread: model
        tools:
          - python: {module}
        record: record.sqlite
        """)
    )
    at = "2026-12-01T10:00:00"
    script = [
        scripted(
            None,
            [("c1", "book", {"at": at, "colour": "red", "address": {"street": "M", "zip": 1}})],
        ),
        scripted(None, [("c2", "fail", {})]),
    ]
    adapter = ScriptedAdapter(script, selector="scripted:typed")
    prices = PriceTable()
    prices.register("scripted:typed", input_per_mtok="0", output_per_mtok="0")
    clock = FakeClock()
    model = Model("scripted:typed", adapter, clock=clock, prices=prices)
    agent = Agent.from_file(tmp_path / "agent.yaml", clock=clock, model=model)
    yield agent, sys.modules[module]
    agent.close()
    sys.modules.pop(module, None)
    sys.path[:] = [p for p in sys.path if p != str(tmp_path)]


def test_a_run_gives_the_tool_typed_values_and_its_undo_typed_results(
    typed_agent: tuple[Agent, Any],
) -> None:
    agent, module = typed_agent
    reply = agent.chat("please book the slot", user="u")
    assert reply.waiting[0].kind == "confirm"
    reply = agent.confirm_current("u", "approve")
    assert reply.state == "rolled_back", reply.text
    (book_name, book_args), (undo_name, undo_args) = module.CALLS
    assert book_name == "book" and undo_name == "unbook"
    assert book_args["at"] == datetime(2026, 12, 1, 10)
    assert book_args["colour"] is module.Colour.RED
    assert book_args["address"] == module.Address(street="M", zip=1)
    # The undo is bound to what book returned, as the record keeps it, and typed again.
    assert undo_args == {"slot": datetime(2026, 12, 1, 10), "colour": module.Colour.RED}
    [write, _, undo] = [c for c in agent.record("u") if c.kind != "model"]
    assert write.args == {
        "address": {"street": "M", "zip": 1},
        "at": "2026-12-01T10:00:00",
        "colour": "red",
    }
    assert write.result == {"colour": "red", "slot": "2026-12-01T10:00:00"}
    assert undo.args == {"colour": "red", "slot": "2026-12-01T10:00:00"}


def test_the_record_keeps_typed_values_exactly() -> None:
    assert as_recorded(
        {
            "at": datetime(2026, 12, 1, 10),
            "colour": Colour.RED,
            "id": UUID(int=1),
            "amount": Decimal("40.00"),
            "address": Address(street="M", zip=1),
            "window": Window(date(2026, 12, 1), date(2026, 12, 2)),
        }
    ) == {
        "at": "2026-12-01T10:00:00",
        "colour": "red",
        "id": "00000000-0000-0000-0000-000000000001",
        "amount": "40.00",
        "address": {"street": "M", "zip": 1},
        "window": {"start": "2026-12-01", "end": "2026-12-02"},
    }
