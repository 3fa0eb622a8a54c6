"""Role words (issue 29, point 2): a preposition a tool's docstring puts before a
parameter's name names that parameter in a turn ("transfer 25.00 from alice to bob"),
never another; a value a role word gives is certain or not taken; no value is bound to a
parameter the turn's words do not tie it to."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from selector_toolsets import bank, clinic, hotel, shop_specs, specs
from test_selector_properties import PROPERTY_SETTINGS, TOOL_SETS, noisy_turns

from stalwart.selector import explain_turn, read_turn
from stalwart.selector.english import GRAMMAR
from stalwart.selector.vocabulary import vocabulary
from stalwart.tools import ToolSpec

pytestmark = pytest.mark.unit

BANK = specs(bank)
CLINIC = specs(clinic)


def said(turn: str, tools: list[ToolSpec]) -> list[tuple[str, dict[str, object]]]:
    reading = read_turn(turn, tools)
    assert reading.read, f"{turn!r} was not read: {reading.reason} ({reading.unread_clause!r})"
    return [(step.tool, step.args) for step in reading.steps]


def reason(turn: str, tools: list[ToolSpec]) -> str | None:
    reading = read_turn(turn, tools)
    assert reading.steps == (), f"{turn!r} was read as {reading.steps}"
    return reading.reason


def test_the_docstring_gives_each_parameter_its_role_words() -> None:
    roles = {
        (tool.spec.name, param.name): param.roles
        for tool in vocabulary(BANK + CLINIC, GRAMMAR)
        for param in tool.params
        if param.roles
    }
    assert roles[("transfer", "source")] == {"from"}  # "Move money from the source account
    assert roles[("transfer", "target")] == {"to"}  # to the target account."
    assert roles[("pay_bill", "biller")] == {"to"}  # "Pay a bill to a biller."
    assert roles[("book_appointment", "doctor")] == {"with"}
    # "List the free times in a doctor's schedule": the doctor owns it; "in" is no role.
    assert ("check_schedule", "doctor") not in roles


def test_from_and_to_bind_source_and_target_in_either_order() -> None:
    args = {"source": "alice", "target": "bob", "amount": Decimal("25.00")}
    assert said("transfer 25.00 from alice to bob", BANK) == [("transfer", args)]
    assert said("transfer 25.00 to bob from alice", BANK) == [("transfer", args)]
    assert said("transfer $25.00 from alice to target bob", BANK) == [("transfer", args)]
    assert said("pay 40.00 to gas", BANK) == [
        ("pay_bill", {"biller": "gas", "amount": Decimal("40.00")})
    ]
    assert said("make an appointment for patient 17 with doctor Silva on monday", CLINIC) == [
        ("book_appointment", {"patient": 17, "doctor": "Silva", "day": "monday"})
    ]
    assert said("book a room at Aurora for 3 nights, check in 2026-12-01", specs(hotel)) == [
        ("book_room", {"hotel": "Aurora", "nights": 3, "check_in": "2026-12-01"})
    ]


def test_a_value_a_role_word_gives_is_taken_only_when_certain() -> None:
    # "Dr" or "Dr Silva"? Neither is guessed.
    assert reason("book patient 17 in with Dr Silva on monday", CLINIC) == (
        "required argument doctor of book_appointment is not given"
    )
    # "gas" or "gas company"?
    assert reason("pay 40.00 to gas company", BANK) == (
        "required argument biller of pay_bill is not given"
    )
    # A possessive is not the account's name.
    assert reason("move $25 from alice's account to bob's", BANK) == (
        "required argument source of transfer is not given"
    )
    # A number after "at" is no hotel's name.
    assert reason("book a room at 5 for 3 nights, check in 2026-12-01", specs(hotel)) == (
        "required argument hotel of book_room is not given"
    )
    # Two values for one role: neither.
    assert reason("transfer 25.00 from alice to bob to carol", BANK) == (
        "the value of target of transfer is unclear: bob or carol"
    )


def test_an_unquoted_value_after_its_name_is_not_cut_short() -> None:
    # "City" or "City Water"? Read as biller "City" before: the word after it was dropped.
    assert reason("pay bill biller City Water 40.10", BANK) == (
        'pay_bill has no argument for "Water"'
    )
    assert said('pay bill biller "City Water" 40.10', BANK) == [
        ("pay_bill", {"biller": "City Water", "amount": Decimal("40.10")})
    ]
    # a value followed by another name, a value or the end is whole
    assert said("pay bill biller gas amount 40.00", BANK) == [
        ("pay_bill", {"biller": "gas", "amount": Decimal("40.00")})
    ]


def test_a_role_word_is_one_more_stop_word_where_the_name_is_said() -> None:
    assert said("charge order 4411 for 40.00", shop_specs()) == [
        ("charge_card", {"order": 4411, "amount": 40.0})
    ]


_NAMES = st.sampled_from(["alice", "bob", "carol", "dave", "erin", "frank"])


@PROPERTY_SETTINGS
@given(
    source=_NAMES,
    target=_NAMES,
    cents=st.integers(1, 10**7),
    order=st.permutations(["amount", "from", "to"]),
    noise=st.lists(st.sampled_from(["please", "the", "now", "account", "money"]), max_size=2),
)
def test_from_and_to_are_never_swapped(
    source: str, target: str, cents: int, order: list[str], noise: list[str]
) -> None:
    amount = f"{cents // 100}.{cents % 100:02d}"
    said_as = {"amount": amount, "from": f"from {source}", "to": f"to {target}"}
    turn = " ".join(["transfer", *(said_as[part] for part in order), *noise])
    reading = read_turn(turn, BANK)
    for step in reading.steps:  # read, or refused: never the other way round
        assert step.tool == "transfer", turn
        assert (step.args["source"], step.args["target"]) == (source, target), turn
        assert step.args["amount"] == Decimal(amount), turn


@PROPERTY_SETTINGS
@given(tool_set=st.sampled_from(sorted(TOOL_SETS)), turn=noisy_turns())
def test_no_value_is_bound_to_a_parameter_the_turns_words_do_not_tie_it_to(
    tool_set: str, turn: str
) -> None:
    tools = TOOL_SETS[tool_set]
    words = {tool.spec.name: tool for tool in vocabulary(tools, GRAMMAR)}
    for clause in explain_turn(turn, tools).clauses:
        if clause.tool is None:
            continue
        params = {param.name: param for param in words[clause.tool].params}
        for argument in clause.arguments:
            param = params[argument.name]
            said_words = {GRAMMAR.stem(w) for w in argument.words.lower().split()}
            said_words |= {w.strip(".,;:'\"()") for w in argument.words.lower().split()}
            if argument.by == "name":  # its name, or a role word of it, is in its words
                tie = {param.joined, *param.stems, *param.roles}
                assert not tie.isdisjoint(said_words) or any(
                    part in argument.words.lower() for part in param.joined.split("_")
                ), (turn, argument)
            else:  # by type: the value alone, a number or a quoted string
                assert argument.words.strip("'\"") == str(argument.value) or (
                    not isinstance(argument.value, str)
                ), (turn, argument)
