"""The selector reads English turns into steps over four unrelated tool sets, with no model."""

from __future__ import annotations

from decimal import Decimal

import pytest
from selector_toolsets import clinic, home, hotel, library, shop_specs, specs

from stalwart.selector import Reading, Step, read_turn
from stalwart.selector.english import GRAMMAR
from stalwart.selector.tokens import Kind, split_clauses, tokenize
from stalwart.tools import ToolSpec, spec_from_function

pytestmark = pytest.mark.unit

SHOP = shop_specs()
HOTEL = specs(hotel)
HOME = specs(home)
LIBRARY = specs(library)
CLINIC = specs(clinic)


def steps(turn: str, tools: list[ToolSpec]) -> list[tuple[str, dict[str, object]]]:
    reading = read_turn(turn, tools)
    assert reading.read, f"{turn!r} was not read: {reading.reason} ({reading.unread_clause!r})"
    return [(step.tool, step.args) for step in reading.steps]


def unread(turn: str, tools: list[ToolSpec]) -> Reading:
    reading = read_turn(turn, tools)
    assert not reading.read, f"{turn!r} was read as {reading.steps}"
    assert reading.steps == ()
    return reading


# --- the chapter's turns (chapter 34, "The failed order") ---


def test_the_first_failed_order_reads_as_charge_update_provision() -> None:
    turn = (
        "charge order 4411 40.00, then update the crm for order 4411, "
        "then provision the account for order 4411"
    )
    reading = read_turn(turn, SHOP)
    assert reading == Reading(
        steps=(
            Step("charge_card", {"order": 4411, "amount": 40.0}, "charge order 4411 40.00"),
            Step("update_crm", {"order": 4411}, "update the crm for order 4411"),
            Step("provision_account", {"order": 4411}, "provision the account for order 4411"),
        )
    )
    assert reading.read
    assert type(reading.steps[0].args["amount"]) is float
    assert type(reading.steps[0].args["order"]) is int


def test_the_second_failed_order_sends_the_receipt_before_provisioning() -> None:
    turn = (
        "charge order 4411 40.00, then send the receipt for order 4411, "
        "then provision the account for order 4411"
    )
    assert steps(turn, SHOP) == [
        ("charge_card", {"order": 4411, "amount": 40.0}),
        ("send_receipt", {"order": 4411}),
        ("provision_account", {"order": 4411}),
    ]


def test_name_words_outweigh_docstring_words() -> None:
    # refund_card's docstring says "charge"; charge_card's name does.
    assert steps("charge order 4411 40.00", SHOP)[0][0] == "charge_card"
    assert steps("refund order 4411 40.00", SHOP)[0][0] == "refund_card"
    # Both name "crm"; only one is named "update".
    assert steps("update the crm for order 4411", SHOP)[0][0] == "update_crm"


def test_a_docstring_word_alone_can_name_a_tool() -> None:
    assert steps("look up order 4411", SHOP) == [("get_order", {"order": 4411})]


def _transfer(source: str, target: str, amount: Decimal) -> None:
    """Move money from the source account to the target account."""


def _reverse_transfer(source: str, target: str, amount: Decimal) -> None:
    """Reverse an earlier transfer: the money goes back from the target to the source."""


def test_a_tool_and_its_undo_do_not_tie() -> None:
    # Both are named by "transfer", and the undo's docstring says it too: "transfer ..."
    # tied, or read as the undo. A tool named for undoing needs its undoing word said.
    tools = [
        spec_from_function(_transfer, name="transfer", writes=True),
        spec_from_function(_reverse_transfer, name="reverse_transfer", writes=True),
    ]
    args = {"source": "alice", "target": "bob", "amount": Decimal("25.00")}
    assert steps("transfer 25.00 from source alice to target bob", tools) == [("transfer", args)]
    assert steps("reverse the transfer 25.00 from source alice to target bob", tools) == [
        ("reverse_transfer", args)
    ]
    assert unread("undo the transfer 25.00 from source alice to target bob", tools).reason == (
        'it asks for the opposite of transfer: "undo"'
    )


# --- clauses ---


@pytest.mark.parametrize(
    "turn",
    [
        "renew loan 1, then renew loan 2; renew loan 3 then renew loan 4 and then renew loan 5",
        "renew loan 1 THEN renew loan 2, And Then renew loan 3; renew loan 4, then renew loan 5",
        "then renew loan 1;; renew loan 2, then renew loan 3; renew loan 4 then renew loan 5;",
    ],
)
def test_a_turn_splits_on_then_and_then_and_semicolons(turn: str) -> None:
    assert steps(turn, LIBRARY) == [("renew_loan", {"loan": n}) for n in range(1, 6)]


def test_separators_are_whole_words_and_not_inside_quotes() -> None:
    assert steps('return the book "Then We Came to the End; a novel"', LIBRARY) == [
        ("return_book", {"title": "Then We Came to the End; a novel"})
    ]
    assert steps("return the book 'Athens and thence'", LIBRARY) == [
        ("return_book", {"title": "Athens and thence"})
    ]


def test_clauses_are_kept_as_written_and_located_in_the_turn() -> None:
    turn = "  Renew loan 7 ,  then  return the book 'Dune'.  "
    reading = read_turn(turn, LIBRARY)
    assert [step.clause for step in reading.steps] == ["Renew loan 7", "return the book 'Dune'."]
    for clause, offset in split_clauses(turn, GRAMMAR):
        assert turn[offset : offset + len(clause)] == clause


# --- arguments by name, in either order ---


def test_the_hotel_reads_names_before_and_after_values() -> None:
    assert steps("book a room at hotel Aurora for 3 nights, check in 2026-12-01", HOTEL) == [
        ("book_room", {"hotel": "Aurora", "nights": 3, "check_in": "2026-12-01"})
    ]
    assert steps("book room check_in 2026-12-01 nights 3 hotel Aurora", HOTEL) == [
        ("book_room", {"hotel": "Aurora", "nights": 3, "check_in": "2026-12-01"})
    ]


def test_a_value_between_two_names_goes_to_the_one_that_has_no_other() -> None:
    assert steps('book room hotel "Grand Aurora" 2 guests 3 nights check in 2027-01-02', HOTEL) == [
        ("book_room", {"hotel": "Grand Aurora", "nights": 3, "check_in": "2027-01-02", "guests": 2})
    ]
    assert steps("book room hotel Aurora nights 3 guests 2 check in 2027-01-02", HOTEL) == [
        ("book_room", {"hotel": "Aurora", "nights": 3, "check_in": "2027-01-02", "guests": 2})
    ]


def test_singular_and_plural_name_the_same_parameter() -> None:
    assert steps("extend booking B-12 by 1 night", HOTEL) == [
        ("extend_stay", {"booking": "B-12", "nights": 1})
    ]
    assert steps("set temperature room hall 18 degree", HOME) == [
        ("set_temperature", {"room": "hall", "degrees": 18.0})
    ]


def test_a_parameter_name_said_by_one_tool_does_not_vote_for_another() -> None:
    # "booking" stems to "book", a word of book_room's name; cancel_booking reads it
    # as its own parameter's name, and is the reading.
    assert steps("cancel booking B-12", HOTEL) == [("cancel_booking", {"booking": "B-12"})]


def test_a_value_that_is_a_tool_word_does_not_vote() -> None:
    # "Extend" is a word of extend_stay's name, but here it is the booking's value.
    assert steps("cancel booking Extend", HOTEL) == [("cancel_booking", {"booking": "Extend"})]


def test_stop_words_may_stand_between_a_name_and_a_number() -> None:
    assert steps("pay the fine of member 17 for an amount of 3.50", LIBRARY) == [
        ("pay_fine", {"member": 17, "amount": Decimal("3.50")})
    ]


def test_yes_and_no_are_bound_by_name() -> None:
    assert steps("set temperature room kitchen 21.5 eco yes", HOME)[0][1]["eco"] is True
    assert steps("set temperature room kitchen 21.5 eco off", HOME)[0][1]["eco"] is False
    assert "eco" not in steps("set temperature room kitchen 21.5", HOME)[0][1]


def test_a_yes_or_no_named_without_one_is_not_left_to_its_default() -> None:
    # "urgently" names urgent; its default (no) is the opposite of what was said.
    assert unread("remind patient 17 urgently", CLINIC).reason == (
        "urgent of remind_patient is named without a yes or no"
    )
    assert unread("set temperature room hall 18 eco", HOME).reason == (
        "eco of set_temperature is named without a yes or no"
    )
    assert steps("remind patient 17 urgent yes", CLINIC) == [
        ("remind_patient", {"patient": 17, "urgent": True})
    ]
    assert steps("remind patient 17", CLINIC) == [("remind_patient", {"patient": 17})]


# --- arguments by type, for what is left ---


def test_a_number_whose_next_word_says_what_it_counts_is_not_bound_by_type() -> None:
    # 2 is no count of days: bound by type to days, it refilled for 2 days.
    assert unread("refill prescription 88 for 2 months", CLINIC).reason == (
        "refill_prescription has no argument for 2 months"
    )
    assert steps("refill prescription 88 for 60 days", CLINIC) == [
        ("refill_prescription", {"prescription": 88, "days": 60})
    ]
    # A word of the tool, a parameter's name or a currency after the number says no count.
    assert steps("give the 40.00 back for order 4411", SHOP) == [
        ("refund_card", {"order": 4411, "amount": 40.0})
    ]
    assert steps("set temperature room kitchen 21.5 eco yes", HOME)[0][1]["degrees"] == 21.5
    assert steps("charge order 4411 40.00 USD", SHOP) == [
        ("charge_card", {"order": 4411, "amount": 40.0})
    ]
    assert steps("pay fine member 17 3.50 dollars", LIBRARY) == [
        ("pay_fine", {"member": 17, "amount": Decimal("3.50")})
    ]


def test_values_left_go_to_the_one_parameter_of_their_type() -> None:
    assert steps('borrow book "The Dispossessed" 17', LIBRARY) == [
        ("borrow_book", {"title": "The Dispossessed", "member": 17})
    ]
    assert steps("pay fine member 17 $12.50", LIBRARY) == [
        ("pay_fine", {"member": 17, "amount": Decimal("12.50")})
    ]


def test_an_integer_goes_to_a_float_only_when_the_tool_takes_no_integer() -> None:
    assert steps("set the temperature in room kitchen to 21", HOME) == [
        ("set_temperature", {"room": "kitchen", "degrees": 21.0})
    ]
    reading = unread("pay fine 17 12", LIBRARY)
    assert reading.reason == "pay_fine has no argument for 12"


def test_numbers_are_converted_to_their_hints_exactly() -> None:
    ((_, args),) = steps("pay fine member 0017 amount 12.50", LIBRARY)
    assert args == {"member": 17, "amount": Decimal("12.50")}
    assert str(args["amount"]) == "12.50"
    ((_, args),) = steps("charge order #4411 -0.50", SHOP)
    assert args == {"order": 4411, "amount": -0.5}


def test_an_optional_parameter_may_stay_unbound_or_be_given() -> None:
    assert steps("renew loan 88", LIBRARY) == [("renew_loan", {"loan": 88})]
    assert steps("renew loan 88 for 3 weeks", LIBRARY) == [("renew_loan", {"loan": 88, "weeks": 3})]


def test_the_idempotency_key_is_never_bound() -> None:
    assert steps("dim the lights in room hall to 40 percent", HOME) == [
        ("dim_lights", {"room": "hall", "percent": 40})
    ]
    reading = unread('dim lights room hall 40 percent idempotency_key "k-1"', HOME)
    assert reading.reason == "dim_lights has no argument for k-1"


# --- turns that are not read ---


def test_a_clause_that_names_no_tool_is_not_read() -> None:
    reading = unread("order 4411, then water the plants", SHOP)
    assert reading.unread_clause == "order 4411"
    assert reading.reason == "no tool matches"
    assert unread("water the plants", SHOP).reason == "no tool matches"


def test_a_clause_that_names_two_tools_equally_is_not_read() -> None:
    reading = unread("charge order 4411 40.00 and refund it", SHOP)
    assert reading.reason == "two tools match equally: charge_card, refund_card"
    assert unread("temperature room hall", HOME).reason == (
        "two tools match equally: set_temperature, read_temperature"
    )


def test_a_missing_required_argument_leaves_the_whole_turn_unread() -> None:
    reading = unread(
        "charge order 4411 40.00, then update the crm, then provision the account for order 4411",
        SHOP,
    )
    assert reading.unread_clause == "update the crm"
    assert reading.reason == "required argument order of update_crm is not given"
    assert unread("cancel the booking", HOTEL).reason == (
        "required argument booking of cancel_booking is not given"
    )


def test_a_value_two_parameters_could_take_is_not_read() -> None:
    reading = unread("book room at hotel Aurora 3 2 check in 2026-12-01", HOTEL)
    assert reading.reason == "3 could be nights or guests of book_room"
    reading = unread("book room 'Aurora' '2026-12-01' 3 nights", HOTEL)
    assert reading.reason == "Aurora could be hotel or check_in of book_room"


def test_a_parameter_given_two_values_is_not_read() -> None:
    reading = unread("charge order 4411 order 4412 40.00", SHOP)
    assert reading.reason == "the value of order of charge_card is unclear: 4411 or 4412"
    # The same value said twice is one value.
    assert steps("charge order 4411 40.00 for order 4411", SHOP) == [
        ("charge_card", {"order": 4411, "amount": 40.0})
    ]


def test_a_value_no_argument_takes_is_not_dropped() -> None:
    assert unread("update the crm for order 4411 40.00", SHOP).reason == (
        "update_crm has no argument for 40.00"
    )
    assert unread("cancel booking B-12 B-13", HOTEL).reason == (
        "cancel_booking has no argument for B-13"
    )


def test_an_unquoted_word_is_never_bound_by_type() -> None:
    assert unread("list rooms Aurora", HOTEL).reason == (
        "required argument hotel of list_rooms is not given"
    )


def test_an_empty_turn_says_nothing() -> None:
    for turn in ("", "   ", " ; then ;"):
        reading = unread(turn, SHOP)
        assert reading.reason == "the turn says nothing"


# --- language ---


@pytest.mark.parametrize(
    "turn",
    [
        "cobrar o pedido 4411 40,00, depois atualizar o crm",
        "cobrar o pedido 4411 40.00, então atualizar o crm para o pedido 4411",
        "atualizar o crm do pedido 4411 e provisionar a conta",
        "enviar o recibo para o pedido 4411",
        "por favor, cobrar pedido 4411 40.00",
    ],
)
def test_a_turn_in_portuguese_is_not_read_as_anything(turn: str) -> None:
    reading = unread(turn, SHOP)
    assert reading.unread_clause == turn
    assert reading.reason is not None and "not English" in reading.reason


def test_english_with_a_foreign_word_or_a_quoted_title_is_still_english() -> None:
    assert steps("set the temperature in room café to 21 degrees", HOME) == [
        ("set_temperature", {"room": "café", "degrees": 21.0})
    ]
    assert steps('return the book "O Tempo e o Vento"', LIBRARY) == [
        ("return_book", {"title": "O Tempo e o Vento"})
    ]
    assert steps("send the receipt for order 4411 by e-mail", SHOP) == [
        ("send_receipt", {"order": 4411})
    ]


# --- the reading's shape ---


def test_read_means_no_reason_and_steps_for_every_clause() -> None:
    reading = read_turn("renew loan 1; renew loan 2", LIBRARY)
    assert reading.read and reading.unread_clause is None and reading.reason is None
    assert len(reading.steps) == 2
    bad = read_turn("renew loan 1; renew the moon", LIBRARY)
    assert not bad.read and bad.steps == () and bad.unread_clause == "renew the moon"


def test_a_tool_listed_twice_is_one_tool() -> None:
    assert steps("renew loan 1", LIBRARY + LIBRARY) == [("renew_loan", {"loan": 1})]


# --- tokens, number forms and parameter types ---


def test_every_token_is_a_span_of_the_turn() -> None:
    turn = "  pay fine of (member #17), amount $3.50; return 'The Dispossessed' it's check-in."
    for clause, offset in split_clauses(turn, GRAMMAR):
        for token in tokenize(clause, offset, GRAMMAR):
            assert turn[token.start : token.start + len(token.text)] == token.text
    kinds = [(t.kind, t.text) for t in tokenize("order #17 $3.50 'x y' B-12 it's", 0, GRAMMAR)]
    assert kinds == [
        (Kind.WORD, "order"),
        (Kind.INTEGER, "17"),
        (Kind.DECIMAL, "3.50"),
        (Kind.QUOTED, "x y"),
        (Kind.OTHER, "B-12"),
        (Kind.WORD, "it's"),
    ]


def test_a_comma_never_makes_an_english_decimal() -> None:
    # The reason names the number and what is not understood, not the tool's arguments.
    assert unread("charge order 4411 40,00", SHOP).reason == (
        "40,00 is not read as a number: a comma only separates thousands, as in 1,250.00"
    )


def test_thousands_are_separated_by_commas_and_a_number_that_is_two_amounts_is_neither() -> None:
    assert steps("charge order 4411 1,040.00", SHOP) == [
        ("charge_card", {"order": 4411, "amount": 1040.0})
    ]
    assert steps("pay fine member 17 amount $1,003.50", LIBRARY) == [
        ("pay_fine", {"member": 17, "amount": Decimal("1003.50")})
    ]
    assert steps("renew loan 1,000,000", LIBRARY) == [("renew_loan", {"loan": 1000000})]
    assert steps("charge order 4411 0.125", SHOP) == [
        ("charge_card", {"order": 4411, "amount": 0.125})
    ]
    # "1,250" is 1250 in English and 1.25 where a comma is the point; "1.250" the reverse.
    assert unread("charge order 4411 1,250", SHOP).reason == (
        "1,250 could be 1250 or 1.250, so it is read as neither"
    )
    assert unread("charge order 4411 1.250", SHOP).reason == (
        "1.250 could be 1.250 or 1250, so it is read as neither"
    )
    assert unread("charge order 4,411 40.00", SHOP).reason == (
        "4,411 could be 4411 or 4.411, so it is read as neither"
    )


def test_a_currency_sign_written_apart_from_its_number_is_the_numbers() -> None:
    # Refused before: "charge_card has no argument for $".
    assert steps("charge order 4411 $ 40.00", SHOP) == [
        ("charge_card", {"order": 4411, "amount": 40.0})
    ]
    assert steps("charge order 4411 40.00 $", SHOP) == [
        ("charge_card", {"order": 4411, "amount": 40.0})
    ]
    assert steps("pay fine member 17 amount £ 1,003.50", LIBRARY) == [
        ("pay_fine", {"member": 17, "amount": Decimal("1003.50")})
    ]
    # the number is still named when it is two amounts
    assert unread("charge order 4411 $ 1,250", SHOP).reason == (
        "1,250 could be 1250 or 1.250, so it is read as neither"
    )
    # a sign with no number beside it is a value no argument takes
    assert unread("charge order 4411 40.00 in $", SHOP).reason == (
        "charge_card has no argument for $"
    )


def _note(text, pinned: bool = False):  # type: ignore[no-untyped-def]  # no hint: read as str
    """Write a note on the board."""


def _schedule(days: list[str], hour: int) -> None:
    """Schedule a backup on some days."""


def test_an_unhinted_parameter_is_a_string_and_a_list_is_never_bound() -> None:
    tools = [spec_from_function(_note, name="write_note"), spec_from_function(_schedule)]
    assert steps('write a note text "milk" pinned yes', tools) == [
        ("write_note", {"text": "milk", "pinned": True})
    ]
    assert unread("schedule backup hour 3 days 'mon'", tools).reason == (
        "_schedule has no argument for mon"
    )
    assert unread("schedule backup hour 3", tools).reason == (
        "required argument days of _schedule is not given"
    )
