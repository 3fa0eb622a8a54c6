"""The check: the rulebook on every call; an undo's bindings and their provenance."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest

from stalwart import tool
from stalwart.policy.check import Check, UndoPlan
from stalwart.policy.rulebook import PastCall, parse_rulebook
from stalwart.record.schema import CallRow
from stalwart.tools import ToolSpec, UndoSpec, spec_of

pytestmark = pytest.mark.unit


@tool(writes=True, undo="cancel_flight")
def book_flight(passenger: str, flight: str) -> dict[str, str]:
    """Book a seat on a flight."""
    return {"booking": "B1", "seat": "12A"}


@tool(writes=True)
def cancel_flight(
    booking: str, passenger: str, idempotency_key: str, note: str = ""
) -> dict[str, str]:
    """Cancel a booking."""
    return {}


def _tools(undo: UndoSpec | None = None) -> dict[str, ToolSpec]:
    book = spec_of(book_flight)
    cancel = spec_of(cancel_flight)
    assert book is not None and cancel is not None
    if undo is not None:
        book = book.with_facts(undo=undo)
    return {"book_flight": book, "cancel_flight": cancel}


def _write(**changes: Any) -> CallRow:
    row = CallRow(
        call_id="s#1:1",
        run_id="s#1",
        session="s",
        agent="a",
        seq=1,
        step=1,
        kind="write",
        tool="book_flight",
        args={"passenger": "Ada", "flight": "LX1"},
        key="k",
        status="ran",
        allowed="ok",
        result={"booking": "B1", "seat": "12A"},
        error=None,
        undoes=None,
        undone_by=None,
        bindings=None,
        created=0.0,
        finished=1.0,
    )
    return replace(row, **changes)


EMPTY = parse_rulebook("")


def test_an_undo_binds_by_name_from_the_arguments_then_the_result() -> None:
    plan = Check(_tools(), EMPTY).plan_undo(_write())
    assert plan == UndoPlan(
        tool="cancel_flight",
        args={"booking": "B1", "passenger": "Ada"},
        sources={"booking": "$result.booking", "passenger": "$args.passenger"},
    )


def test_explicit_bindings_win_over_names() -> None:
    undo = UndoSpec("cancel_flight", {"booking": "$result.seat"})
    plan = Check(_tools(undo), EMPTY).plan_undo(_write())
    assert isinstance(plan, UndoPlan)
    assert plan.args["booking"] == "12A"
    assert plan.sources["booking"] == "$result.seat"


def test_an_undo_that_cannot_be_bound_says_which_argument() -> None:
    check = Check(_tools(), EMPTY)
    assert check.plan_undo(_write(result="a plain text")) == (
        "cancel_flight: nothing of the step binds booking"
    )
    explicit = Check(_tools(UndoSpec("cancel_flight", {"booking": "$result.nope"})), EMPTY)
    assert explicit.plan_undo(_write()) == "cancel_flight: nothing of the step binds booking"
    missing = Check({"book_flight": _tools()["book_flight"]}, EMPTY)
    assert missing.plan_undo(_write()) == "cancel_flight is not one of this agent's tools"


def test_an_undo_is_allowed_only_for_a_step_that_ran_and_was_not_undone() -> None:
    check = Check(_tools(), EMPTY)
    plan = check.plan_undo(_write())
    assert isinstance(plan, UndoPlan)
    assert check.undo(_write(), plan, []).allowed
    assert check.undo(_write(status="failed"), plan, []).text == (
        "cancel_flight: the step it undoes did not run"
    )
    assert check.undo(_write(undone_by="s#1:1:undo"), plan, []).text == (
        "cancel_flight: the step it undoes was undone already"
    )


def test_an_undo_never_takes_an_argument_from_anywhere_else() -> None:
    check = Check(_tools(), EMPTY)
    plan = check.plan_undo(_write())
    assert isinstance(plan, UndoPlan)
    forged = replace(plan, args={**plan.args, "booking": "B999"})
    verdict = check.undo(_write(), forged, [])
    assert not verdict.allowed
    assert (
        verdict.text
        == "cancel_flight: booking does not match $result.booking of the step it undoes"
    )
    smuggled = replace(plan, args={**plan.args, "note": "free text"})
    assert check.undo(_write(), smuggled, []).text == (
        "cancel_flight: note is not bound to the step it undoes"
    )


def test_the_rulebook_decides_calls_and_undos() -> None:
    rules = parse_rulebook("cancel_flight only after book_flight with same passenger\n")
    check = Check(_tools(), rules)
    assert check.call("book_flight", {"passenger": "Ada", "flight": "LX1"}, []).allowed
    plan = check.plan_undo(_write())
    assert isinstance(plan, UndoPlan)
    refused = check.undo(_write(), plan, [])
    assert not refused.allowed
    assert refused.text == (
        "the check refused cancel_flight, because line 1 of the rulebook allows it only after "
        "book_flight with the same passenger, and this session has no book_flight with "
        "passenger 'Ada' that ran and was not undone"
    )
    history = [PastCall("book_flight", {"passenger": "Ada", "flight": "LX1"}, True, False)]
    assert check.undo(_write(), plan, history).allowed


@tool(writes=True, irreversible=True)
def pay_bill(
    bill: int, amount: Decimal, rate: float, paid: bool, memo: str, note: str | None = None
) -> dict[str, str]:
    """Pay a bill."""
    return {}


def test_a_value_of_the_wrong_type_is_refused_naming_the_type_it_should_have() -> None:
    spec = spec_of(pay_bill)
    assert spec is not None
    check = Check({"pay_bill": spec}, EMPTY)
    good = {"bill": 7, "amount": "40.00", "rate": 1, "paid": False, "memo": "rent"}
    assert check.call("pay_bill", good, []).allowed
    assert check.call("pay_bill", {**good, "amount": Decimal("40.00"), "rate": 0.5}, []).allowed
    assert check.call("pay_bill", {**good, "note": None}, []).allowed
    wrong: list[tuple[dict[str, object], str]] = [
        ({"bill": "7"}, 'its bill is "7", not a whole number'),
        ({"bill": True}, "its bill is true, not a whole number"),
        ({"bill": 7.5}, "its bill is 7.5, not a whole number"),
        ({"amount": "forty"}, 'its amount is "forty", not a decimal number'),
        ({"amount": "NaN"}, 'its amount is "NaN", not a decimal number'),
        ({"amount": 40.0}, "its amount is 40.0, not a decimal number"),
        ({"rate": "1.5"}, 'its rate is "1.5", not a number'),
        ({"paid": "no"}, 'its paid is "no", not true or false'),
        ({"memo": 12}, "its memo is 12, not text"),
        ({"note": 3}, "its note is 3, not text"),
        ({"memo": None}, "its memo is null, not text"),
    ]
    for change, reason in wrong:
        verdict = check.call("pay_bill", {**good, **change}, [])
        assert (verdict.allowed, verdict.reason) == (False, reason), change
        assert verdict.text == f"pay_bill is refused: {reason}."
