"""The @tool decorator: what it records, the JSON schema, and what it refuses."""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

import pytest

from stalwart.tools import (
    ToolDefinitionError,
    UndoSpec,
    parse_undo,
    spec_of,
    tool,
    tools_in_module,
)

pytestmark = pytest.mark.unit


def test_bare_decorator_is_a_read_and_keeps_the_function_callable() -> None:
    @tool
    def get_order(order: int) -> dict[str, int]:
        """Look up an order."""
        return {"order": order}

    spec = spec_of(get_order)
    assert spec is not None
    assert (spec.name, spec.writes, spec.undo, spec.irreversible, spec.retry_safe) == (
        "get_order",
        False,
        None,
        False,
        False,
    )
    assert get_order(4411) == {"order": 4411}


def test_write_facts_are_recorded() -> None:
    @tool(writes=True, undo="refund_card")
    def charge_card(order: int, amount: float) -> None:
        """Charge the card on file for an order."""

    @tool(writes=True, irreversible=True)
    def send_receipt(order: int) -> None:
        """Send the receipt."""

    @tool(writes=True, retry_safe=True)
    def refund_card(order: int, amount: float) -> None:
        """Refund."""

    assert spec_of(charge_card).undo == UndoSpec(tool="refund_card")  # type: ignore[union-attr]
    assert spec_of(send_receipt).irreversible  # type: ignore[union-attr]
    assert spec_of(refund_card).retry_safe  # type: ignore[union-attr]


def test_json_schema_from_hints_and_docstring() -> None:
    @tool
    def book_room(
        hotel: str,
        nights: int,
        rate: float,
        budget: Decimal | None = None,
        kind: Literal["a", "b"] = "a",
    ) -> None:
        """Book a room in a hotel.

        Args:
            hotel: the hotel's name
            nights: how many nights
        """

    spec = spec_of(book_room)
    assert spec is not None
    assert spec.summary == "Book a room in a hotel."
    assert spec.json_schema() == {
        "type": "object",
        "properties": {
            "hotel": {"type": "string", "description": "the hotel's name"},
            "nights": {"type": "integer", "description": "how many nights"},
            "rate": {"type": "number"},
            "budget": {
                "anyOf": [{"type": "string", "format": "decimal"}, {"type": "null"}],
                "default": None,
            },
            "kind": {"enum": ["a", "b"], "type": "string", "default": "a"},
        },
        "required": ["hotel", "nights", "rate"],
        "additionalProperties": False,
    }


def test_idempotency_key_parameter_is_filled_by_the_runtime_not_described() -> None:
    @tool(writes=True, retry_safe=True)
    def pay(amount: float, idempotency_key: str | None = None) -> str | None:
        """Pay."""
        return idempotency_key

    spec = spec_of(pay)
    assert spec is not None
    assert spec.takes_idempotency_key
    assert [p.name for p in spec.params] == ["amount"]
    assert "idempotency_key" not in spec.json_schema()["properties"]
    assert spec.call({"amount": 1.0}, idempotency_key="k1") == "k1"


def test_explicit_undo_bindings() -> None:
    undo = parse_undo({"tool": "cancel_flight", "args": {"booking": "$result.booking"}})
    assert undo == UndoSpec(tool="cancel_flight", args={"booking": "$result.booking"})
    assert UndoSpec.parse_source("$args.order") == ("args", "order")


@pytest.mark.parametrize(
    "bad",
    [
        {"tool": "x", "args": {"a": "result.booking"}},
        {"tool": "x", "args": {"a": "$other.booking"}},
        {"tool": "x", "extra": 1},
        {"args": {}},
        42,
    ],
)
def test_bad_undo_declarations_are_refused(bad: object) -> None:
    with pytest.raises(ToolDefinitionError):
        parse_undo(bad)  # type: ignore[arg-type]


def test_only_writes_can_be_undone_or_irreversible() -> None:
    with pytest.raises(ToolDefinitionError, match="only a write"):

        @tool(undo="refund_card")
        def read_it() -> None:
            """Read."""

    with pytest.raises(ToolDefinitionError, match="both"):

        @tool(writes=True, undo="x", irreversible=True)
        def both() -> None:
            """Both."""


def test_varargs_are_refused() -> None:
    with pytest.raises(ToolDefinitionError, match=r"\*args"):

        @tool
        def loose(*values: int) -> None:
            """Loose."""


def test_tools_in_module_finds_every_marked_function() -> None:
    import types

    module = types.ModuleType("fake_tools")

    @tool
    def one() -> None:
        """One."""

    def plain() -> None:
        """Not a tool."""

    module.one = one  # type: ignore[attr-defined]
    module.plain = plain  # type: ignore[attr-defined]
    assert list(tools_in_module(module)) == ["one"]


def test_yaml_facts_lay_over_decorator_facts() -> None:
    @tool(writes=True)
    def update_crm(order: int) -> None:
        """Update."""

    spec = spec_of(update_crm)
    assert spec is not None
    laid = spec.with_facts(undo=UndoSpec("restore_crm"), retry_safe=True)
    assert laid.undo == UndoSpec("restore_crm") and laid.retry_safe and laid.writes
    assert spec.undo is None
