"""Never the opposite of what was said (issue 29, point 1): a clause that is negated,
conditional, a question or hedged is never a step, on the bank desk of the issue and on
any tool set; the reason names the clause and the words; a turn with one such clause is
refused whole; the words are the grammar's data, read by the core (`selector/mood.py`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from model_shop import scripted, write_shop
from selector_toolsets import bank, clinic, home, hotel, library, shop_specs, specs
from test_selector_properties import PROPERTY_SETTINGS, TOOL_SETS, Call, written_call

from stalwart import Agent, FakeClock
from stalwart.models import Model, PriceTable, ScriptedAdapter, UserMessage
from stalwart.selector import Reading, read_turn
from stalwart.selector.core import read
from stalwart.selector.english import CONDITIONALS, GRAMMAR, HEDGES, NEGATORS, REVERSERS
from stalwart.selector.grammar import Mood, Moods
from stalwart.texts import MOOD_REASONS
from stalwart.tools import ToolSpec, spec_from_function

pytestmark = pytest.mark.unit

BANK = specs(bank)
CLINIC = specs(clinic)
SHOP = shop_specs()
LIBRARY = specs(library)


def refused(turn: str, tools: list[ToolSpec]) -> Reading:
    reading = read_turn(turn, tools)
    assert reading.steps == (), f"{turn!r} was read as {reading.steps}"
    assert not reading.read
    return reading


def said(turn: str, tools: list[ToolSpec]) -> list[tuple[str, dict[str, object]]]:
    reading = read_turn(turn, tools)
    assert reading.read, f"{turn!r} was not read: {reading.reason} ({reading.unread_clause!r})"
    return [(step.tool, step.args) for step in reading.steps]


# --- the issue's table: each turn was offered for confirmation as the very write ---

ISSUE_TABLE = [
    (
        "don't transfer 25.00 from source alice to target bob",
        "don't transfer 25.00 from source alice to target bob",
        'it says not to: "don\'t"',
    ),
    (
        "do not send the statement for account alice",
        "do not send the statement for account alice",
        'it says not to: "do not"',
    ),
    ("never freeze card 4411", "never freeze card 4411", 'it says not to: "never"'),
    (
        "if the balance of account alice is low, transfer 25.00 from source alice to target bob",
        "if the balance of account alice is low, transfer 25.00 from source alice to target bob",
        'it sets a condition: "if"',
    ),
    (
        "transfer 25.00 from source alice to target bob unless the balance is low",
        "transfer 25.00 from source alice to target bob unless the balance is low",
        'it sets a condition: "unless"',
    ),
    ("should I freeze card 4411?", "should I freeze card 4411?", 'it asks a question: "should I"'),
    (
        "what would happen if I send the statement for account alice?",
        "what would happen if I send the statement for account alice?",
        'it asks a question: "what"',
    ),
]


@pytest.mark.parametrize(("turn", "clause", "reason"), ISSUE_TABLE)
def test_every_turn_of_the_issues_table_is_refused_with_its_reason(
    turn: str, clause: str, reason: str
) -> None:
    reading = refused(turn, BANK)
    assert (reading.unread_clause, reading.reason) == (clause, reason)


# --- the family: negations, conditions, questions and hedges in several positions ---

FAMILY = [
    # negated: at the start, after "I", after a plain clause, at the end, in capitals
    ("no need to send the statement for account alice", None, 'it says not to: "no need to"'),
    (
        "I don't want to transfer 25.00 from source alice to target bob",
        None,
        'it says not to: "don\'t"',
    ),
    (
        "send the statement for account alice, then do not freeze card 4411",
        "do not freeze card 4411",
        'it says not to: "do not"',
    ),
    ("pay bill biller gas 40.00 not", None, 'it says not to: "not"'),
    ("DO NOT pay bill biller gas 40.00", None, 'it says not to: "DO NOT"'),
    ("don\u2019t freeze card 4411", None, 'it says not to: "don\u2019t"'),
    ("we shouldn't freeze card 4411", None, 'it says not to: "shouldn\'t"'),
    # conditional: at the start, in the middle, in a second clause
    ("freeze card 4411 only if it was stolen", None, 'it sets a condition: "only if"'),
    ("when the bill comes, pay bill biller gas 40.00", None, 'it sets a condition: "when"'),
    (
        "get the balance of account alice, then if it is above 100 transfer 25.00 "
        "from source alice to target bob",
        "if it is above 100 transfer 25.00 from source alice to target bob",
        'it sets a condition: "if"',
    ),
    # questions: a question mark, a verb before its subject, in a second clause
    ("freeze card 4411?", None, 'it asks a question: "?"'),
    ("should we pay bill biller gas 40.00", None, 'it asks a question: "should we"'),
    (
        "freeze card 4411, then send the statement for account alice?",
        "send the statement for account alice?",
        'it asks a question: "?"',
    ),
    # hedged: at the start, in a second clause, "not sure" (longer than "not")
    ("maybe transfer 25.00 from source alice to target bob", None, 'it is not certain: "maybe"'),
    (
        "send the statement for account alice, then perhaps freeze card 4411",
        "perhaps freeze card 4411",
        'it is not certain: "perhaps"',
    ),
    ("not sure, freeze card 4411 I suppose", None, 'it is not certain: "not sure"'),
]


@pytest.mark.parametrize(("turn", "clause", "reason"), FAMILY)
def test_the_family_of_sixteen_is_refused_and_names_its_clause(
    turn: str, clause: str | None, reason: str
) -> None:
    assert len(FAMILY) == 16
    reading = refused(turn, BANK)
    assert (reading.unread_clause, reading.reason) == (clause or turn, reason)


def test_each_mood_has_its_reason_in_the_texts() -> None:
    assert set(MOOD_REASONS) == {m.value for m in Mood}
    assert set(MOOD_REASONS) == {
        *("negated", "conditional", "question", "hedged", "opposite", "reported", "choice")
    }


# --- the opposite of the tool a clause names ---

OPPOSITES = [
    (BANK, "cancel the transfer of 25.00 from source alice to target bob", "transfer", "cancel"),
    (BANK, "stop the transfer 25.00 from source alice to target bob", "transfer", "stop"),
    (BANK, "undo the transfer 25.00 from source alice to target bob", "transfer", "undo"),
    (BANK, "refuse to pay bill biller gas 40.00", "pay_bill", "refuse"),
    (SHOP, "cancel the charge for order 4411 40.00", "charge_card", "cancel"),
    (SHOP, "take back the charge of order 4411 40.00", "charge_card", "take back"),
    (CLINIC, "cancel the refill of prescription 88", "refill_prescription", "cancel"),
    (specs(hotel), "unbook room hotel Aurora 3 nights check in 2026-12-01", "book_room", "unbook"),
    (specs(home), "undim the lights in room hall to 40 percent", "dim_lights", "undim"),
]


@pytest.mark.parametrize(("tools", "turn", "tool", "words"), OPPOSITES)
def test_a_clause_that_asks_for_the_opposite_of_its_tool_is_no_step_of_it(
    tools: list[ToolSpec], turn: str, tool: str, words: str
) -> None:
    # Each was read as the very tool it asks to undo or refuse.
    reading = refused(turn, tools)
    assert reading.reason == f'it asks for the opposite of {tool}: "{words}"'


def test_a_reverser_that_is_the_tools_own_word_is_its_name() -> None:
    assert said("cancel appointment A-17", CLINIC) == [
        ("cancel_appointment", {"appointment": "A-17"})
    ]
    assert said("cancel the booking B-12", specs(hotel)) == [
        ("cancel_booking", {"booking": "B-12"})
    ]
    assert said("return the book 'Cancel Culture'", LIBRARY) == [
        ("return_book", {"title": "Cancel Culture"})
    ]


REPORTS = [
    (SHOP, "I already charged order 4411 40.00", "charged"),
    (SHOP, "the system charged order 4411 40.00 by mistake", "charged"),
    (BANK, "someone transferred 25.00 from source alice to target bob", "transferred"),
    (BANK, "the statement for account alice was sent", "sent"),
    (BANK, "I paid bill biller gas 40.00", "paid"),
    (CLINIC, "refilled prescription 88", "refilled"),
]


@pytest.mark.parametrize(("tools", "turn", "words"), REPORTS)
def test_a_clause_that_tells_its_tool_was_done_is_no_step_of_it(
    tools: list[ToolSpec], turn: str, words: str
) -> None:
    # Each was read as the write it reports: "I already charged" charged again.
    assert refused(turn, tools).reason == f'it tells what was done: "{words}"'


def _feed_cat(cat: str) -> None:
    """Feed a cat."""


def test_a_tools_own_name_word_is_no_past_form() -> None:
    tools = [spec_from_function(_feed_cat, name="feed_cat")]
    assert said("feed cat Tom", tools) == [("feed_cat", {"cat": "Tom"})]


def test_a_choice_the_step_cannot_make_is_refused() -> None:
    reading = refused("book appointment patient 17 doctor Silva day monday or tuesday", CLINIC)
    assert reading.reason == 'it leaves a choice: "or"'
    assert said("book appointment patient 17 doctor Silva day 'monday or tuesday'", CLINIC) == [
        ("book_appointment", {"patient": 17, "doctor": "Silva", "day": "monday or tuesday"})
    ]


QUALIFIED = [
    (BANK, "transfer 25.00 from source alice to target bob next friday", "transfer", "next"),
    (BANK, "freeze card 4411 tomorrow", "freeze_card", "tomorrow"),
    (BANK, "freeze card 4411 for a week", "freeze_card", "week"),
    (SHOP, "charge order 4411 half of 40.00", "charge_card", "half"),
    (CLINIC, "remind patient 17 every day", "remind_patient", "every"),
    (CLINIC, "refill prescription 88 in two weeks", "refill_prescription", "weeks"),
]


@pytest.mark.parametrize(("tools", "turn", "tool", "word"), QUALIFIED)
def test_a_word_of_when_how_often_or_how_much_the_step_would_drop_is_refused(
    tools: list[ToolSpec], turn: str, tool: str, word: str
) -> None:
    # Each ran now, once and whole: "transfer ... next friday" transferred today.
    assert refused(turn, tools).reason == f'{tool} has no argument for "{word}"'


def test_a_qualifier_that_is_a_value_or_a_parameters_name_is_read() -> None:
    assert said("book appointment patient 17 doctor Silva day friday", CLINIC) == [
        ("book_appointment", {"patient": 17, "doctor": "Silva", "day": "friday"})
    ]
    assert said("refill prescription 88 for 60 days", CLINIC) == [
        ("refill_prescription", {"prescription": 88, "days": 60})
    ]
    assert said("renew loan 88 for 3 weeks", LIBRARY) == [("renew_loan", {"loan": 88, "weeks": 3})]


def test_a_plain_phrase_that_says_a_mood_word_sets_no_mood() -> None:
    assert said("charge order 4411 40.00 as soon as possible", SHOP) == [
        ("charge_card", {"order": 4411, "amount": 40.0})
    ]
    assert refused("charge order 4411 40.00 as soon as it is paid", SHOP).reason == (
        'it sets a condition: "as soon as"'
    )


# --- a turn whose other clauses are plain is refused whole ---


def test_a_turn_with_one_negated_clause_is_refused_whole_naming_that_clause() -> None:
    turn = "freeze card 4411, but don't send the statement for account alice"
    reading = refused(turn, BANK)
    assert reading.unread_clause == "don't send the statement for account alice"
    assert reading.reason == 'it says not to: "don\'t"'
    # Each half alone: the plain one is read; the negated one is refused.
    assert said("freeze card 4411", BANK) == [("freeze_card", {"card": "4411"})]
    refused("don't send the statement for account alice", BANK)


def test_a_mood_is_found_before_any_clause_is_read_as_a_tool() -> None:
    # The first clause names no tool; the second is negated: the negation is the reason.
    reading = refused("water the plants, then never freeze card 4411", BANK)
    assert reading.unread_clause == "never freeze card 4411"
    assert reading.reason == 'it says not to: "never"'


def test_but_separates_clauses_as_then_does() -> None:
    assert said("renew loan 1, but renew loan 2", LIBRARY) == [
        ("renew_loan", {"loan": 1}),
        ("renew_loan", {"loan": 2}),
    ]
    assert said("return the book 'Small, but Mighty'", LIBRARY) == [
        ("return_book", {"title": "Small, but Mighty"})
    ]


# --- the chapter's shop reads exactly as before ---


def test_the_shops_turns_read_as_before() -> None:
    for turn, middle in (
        ("update the crm for order 4411", "update_crm"),
        ("send the receipt for order 4411", "send_receipt"),
    ):
        full = f"charge order 4411 40.00, then {turn}, then provision the account for order 4411"
        assert said(full, SHOP) == [
            ("charge_card", {"order": 4411, "amount": 40.0}),
            (middle, {"order": 4411}),
            ("provision_account", {"order": 4411}),
        ]


# --- what is no mood word: a word that only contains one, a quoted value, a name ---


def _add_item(product: str, quantity: int) -> None:
    """Add a product to the cart."""


def _do_not_disturb(room: int) -> None:
    """Silence the telephone of a room."""


CART = [spec_from_function(_add_item, name="add_item")]
PHONES = [spec_from_function(_do_not_disturb, name="do_not_disturb")]


def test_a_word_that_only_contains_a_mood_word_is_none() -> None:
    assert said("add product knot quantity 2", CART) == [
        ("add_item", {"product": "knot", "quantity": 2})
    ]
    assert said("add product Notley quantity 2, then add product ifrit quantity 1", CART) == [
        ("add_item", {"product": "Notley", "quantity": 2}),
        ("add_item", {"product": "ifrit", "quantity": 1}),
    ]
    assert said("Knot: refill prescription 88", CLINIC) == [
        ("refill_prescription", {"prescription": 88})
    ]


@pytest.mark.parametrize(
    "title", ["Don't Look Now", "What If?", "Maybe Tomorrow", "Never Let Me Go", "If"]
)
def test_a_quoted_value_says_no_mood(title: str) -> None:
    assert said(f'return the book "{title}"', LIBRARY) == [("return_book", {"title": title})]


def test_a_mood_word_as_a_value_is_read_as_a_mood_unless_it_is_quoted() -> None:
    reading = refused("add product not quantity 2", CART)
    assert reading.reason == 'it says not to: "not"'
    assert said("add product 'not' quantity 2", CART) == [
        ("add_item", {"product": "not", "quantity": 2})
    ]


def test_a_tools_own_name_said_in_full_is_its_words() -> None:
    assert said("do not disturb room 12", PHONES) == [("do_not_disturb", {"room": 12})]
    assert said("please set do not disturb for room 12", PHONES) == [
        ("do_not_disturb", {"room": 12})
    ]
    reading = refused("don't do not disturb room 12", PHONES)
    assert reading.reason == 'it says not to: "don\'t"'
    reading = refused("do not do not disturb room 12", PHONES)
    assert reading.reason == 'it says not to: "do not"'


def test_a_request_that_starts_can_you_is_one_unless_it_asks() -> None:
    assert said("can you freeze card 4411", BANK) == [("freeze_card", {"card": "4411"})]
    assert refused("can you freeze card 4411?", BANK).reason == 'it asks a question: "?"'
    assert refused("can I freeze card 4411", BANK).reason == 'it asks a question: "can I"'


# --- the words are the grammar's data; the core reads any grammar's ---


def test_the_moods_are_the_grammars_data_not_the_cores() -> None:
    turn = "nope, freeze card 4411"
    # English says nothing of "nope": read.
    assert [s.tool for s in read(turn, BANK, GRAMMAR).steps] == ["freeze_card"]
    # A grammar that declares it a negator: refused, by the same core.
    strict = replace(GRAMMAR, moods=replace(GRAMMAR.moods, negators=frozenset({"nope"})))
    reading = read(turn, BANK, strict)
    assert (reading.steps, reading.reason) == ((), 'it says not to: "nope"')
    # A grammar with no moods at all reads "never" as any other word.
    bare = replace(GRAMMAR, moods=Moods())
    assert [s.tool for s in read("never freeze card 4411", BANK, bare).steps] == ["freeze_card"]


# --- properties: a plain step with any mood put to it is never a step ---

_SEPARATORS = st.sampled_from([", then ", " then ", "; ", " and then ", ", but "])
_PREFIXES = sorted(
    [*NEGATORS, *CONDITIONALS, *HEDGES, "should I", "what if", "is it true that", "I think"]
)
_SUFFIXES = ["?", " not", " unless it is done", " if you can", " maybe", ", or not?"]


@st.composite
def turns_with_one_mood(draw: st.DrawFn) -> tuple[str, list[ToolSpec], int, str]:
    """A turn of plain written calls, one clause of which has a mood put to it: the turn,
    its tools, which clause, and that clause as written."""
    tools = TOOL_SETS[draw(st.sampled_from(sorted(TOOL_SETS)))]
    calls: list[Call] = [
        draw(written_call(spec)) for spec in draw(st.lists(st.sampled_from(tools), min_size=1))
    ]
    which = draw(st.integers(0, len(calls) - 1))
    clause = calls[which].clause
    if draw(st.booleans()):
        clause = f"{draw(st.sampled_from(_PREFIXES))} {clause}"
    else:
        clause = f"{clause}{draw(st.sampled_from(_SUFFIXES))}"
    clauses = [call.clause for call in calls]
    clauses[which] = clause
    turn = clauses[0]
    for written in clauses[1:]:
        turn += draw(_SEPARATORS) + written
    return turn, tools, which, clause


@PROPERTY_SETTINGS
@given(written=turns_with_one_mood())
def test_a_plain_step_with_any_mood_put_to_it_is_never_a_step(
    written: tuple[str, list[ToolSpec], int, str],
) -> None:
    turn, tools, _, clause = written
    reading = read_turn(turn, tools)
    assert reading.steps == (), turn
    assert reading.unread_clause == clause.strip(), turn
    assert reading.reason is not None
    assert any(reading.reason.startswith(reason + ": ") for reason in MOOD_REASONS.values())


@PROPERTY_SETTINGS
@given(
    negator=st.sampled_from(sorted(NEGATORS)),
    spec=st.sampled_from([*BANK, *CLINIC, *SHOP, *specs(home)]),
    data=st.data(),
)
def test_any_negator_before_a_plain_step_says_not_to(
    negator: str, spec: ToolSpec, data: st.DataObject
) -> None:
    call = data.draw(written_call(spec))
    reading = read_turn(f"{negator} {call.clause}", [spec])
    assert reading.steps == ()
    assert reading.reason == f'it says not to: "{negator}"'


@PROPERTY_SETTINGS
@given(
    reverser=st.sampled_from(sorted(REVERSERS)),
    tool_set=st.sampled_from(sorted(TOOL_SETS)),
    data=st.data(),
)
def test_a_plain_step_with_a_reverser_before_it_is_never_a_step_of_a_tool_not_named_by_it(
    reverser: str, tool_set: str, data: st.DataObject
) -> None:
    tools = TOOL_SETS[tool_set]
    call = data.draw(written_call(data.draw(st.sampled_from(tools))))
    reading = read_turn(f"{reverser} {call.clause}", tools)
    for step in reading.steps:  # read only as a tool whose name says the reverser
        assert set(reverser.split()) <= set(step.tool.split("_")), (call.clause, step)


# --- the agent: refused with the reason, or handed to the model ---

BANK_DESK = """\
agents:
  desk:
    tools: [get_balance, transfer, return_funds, pay_bill, send_statement, freeze_card]
    on_unread: refuse
tools:
  - python: selector_toolsets.bank
record: record.sqlite
"""


def test_the_bank_desk_offers_nothing_to_confirm_for_a_turn_that_says_not_to(
    tmp_path: Path,
) -> None:
    (tmp_path / "agent.yaml").write_text(BANK_DESK)
    desk = Agent.from_file(tmp_path / "agent.yaml")
    try:
        reply = desk.chat("do not send the statement for account alice", user="u")
        assert reply.state == "unread"
        assert not reply.waiting
        assert reply.text == (
            'I could not read "do not send the statement for account alice" '
            '(it says not to: "do not"), so nothing ran.'
        )
        reply = desk.chat(
            "freeze card 4411, but don't send the statement for account alice", user="u"
        )
        assert reply.state == "unread"
        assert not reply.waiting
        assert reply.text == (
            'I could not read "don\'t send the statement for account alice" '
            '(it says not to: "don\'t"), so nothing ran.'
        )
    finally:
        desk.close()


def test_with_on_unread_model_a_negated_turn_goes_to_the_model(tmp_path: Path) -> None:
    shop = write_shop(tmp_path)
    clock = FakeClock()
    adapter = ScriptedAdapter([scripted("Nothing charged.")], selector="scripted:desk")
    prices = PriceTable()
    prices.register("scripted:desk", input_per_mtok="2", output_per_mtok="10")
    model = Model("scripted:desk", adapter, clock=clock, prices=prices)
    desk = shop.agent(clock=clock, model=model)
    try:
        turn = "don't charge order 4411 40.00"
        reply = desk.chat(turn, user="u")
        assert (reply.state, reply.text) == ("done", "Nothing charged.")
        assert shop.calls == []
        (request,) = adapter.requests
        assert request.messages == (UserMessage(text=turn),)
    finally:
        shop.close()
