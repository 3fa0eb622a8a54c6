"""Where an argument of a model's step came from: the turn, an earlier step, or the model."""

from __future__ import annotations

import dataclasses
import re

import pytest

from stalwart.policy.provenance import SeenResult, all_from_turn, sources_of
from stalwart.selector import GRAMMAR as ENGLISH

pytestmark = pytest.mark.unit

TURN = 'please charge order #4411 $40 and note "gift wrap" for Ada'
GET_ORDER = SeenResult(step=1, tool="get_order", result={"order": "4411", "amount": "40.00"})
GET_CUSTOMER = SeenResult(step=2, tool="get_customer", result={"name": "Ada", "card": ["c-7"]})


def test_numbers_in_the_turn_match_by_value_whatever_their_type() -> None:
    sources = sources_of({"order": 4411, "amount": "40.00", "again": 40.0}, TURN, [], ENGLISH)
    assert sources == {"order": "turn", "amount": "turn", "again": "turn"}


def test_text_in_the_turn_matches_as_a_whole_span_ignoring_case() -> None:
    sources = sources_of({"note": "Gift Wrap", "who": "ada", "part": "gif"}, TURN, [], ENGLISH)
    assert sources == {"note": "turn", "who": "turn", "part": "model"}


def test_a_value_only_a_step_returned_names_that_step_the_latest_first() -> None:
    seen = [GET_ORDER, GET_CUSTOMER, SeenResult(3, "get_order", {"amount": "12.50"})]
    sources = sources_of(
        {"card": "c-7", "amount": "12.5", "order": "4411"}, "settle up", seen, ENGLISH
    )
    assert sources == {
        "card": "step 2 (get_customer)",
        "amount": "step 3 (get_order)",
        "order": "step 1 (get_order)",
    }


def test_the_turn_wins_over_a_step_and_anything_else_is_the_models() -> None:
    sources = sources_of(
        {"amount": "40", "order": "4412", "flag": True}, TURN, [GET_ORDER], ENGLISH
    )
    assert sources == {"amount": "turn", "order": "model", "flag": "model"}


def test_a_step_the_selector_read_takes_every_value_from_the_turn() -> None:
    assert all_from_turn({"order": 4411, "amount": 40.0}) == {"order": "turn", "amount": "turn"}


def test_the_turn_is_read_in_the_grammar_given_not_in_english() -> None:
    # A grammar that writes its decimals with a comma, as Portuguese does.
    comma = dataclasses.replace(
        ENGLISH, decimal=re.compile(r"[+-]?\d+,\d+"), decimal_point=",", number_marks="R$"
    )
    turn = "cobrar pedido 4411 40,00"
    args = {"order": 4411, "amount": "40.00", "wrong": 4000}
    assert sources_of(args, turn, [], comma) == {
        "order": "turn",
        "amount": "turn",
        "wrong": "model",
    }
    assert sources_of(args, turn, [], ENGLISH)["amount"] == "model"


def test_the_turn_is_read_in_each_of_the_agents_languages() -> None:
    from stalwart.selector.portuguese import GRAMMAR as PORTUGUESE

    both = (ENGLISH, PORTUGUESE)
    args = {"amount": "40.00", "thousand": 1250, "order": 4411}
    # a Portuguese turn: "40,00" and "1.250,00" are read as Portuguese writes them
    assert sources_of(args, "cobrar R$ 40,00 e 1.250,00 do pedido 4411", [], both) == {
        "amount": "turn",
        "thousand": "turn",
        "order": "turn",
    }
    # an English turn is read as before
    assert sources_of(args, "charge $ 40.00 and 1,250.00 for order 4411", [], both) == {
        "amount": "turn",
        "thousand": "turn",
        "order": "turn",
    }
    # a number that is two amounts is neither, in any language
    assert sources_of({"amount": 1250}, "cobrar 1.250", [], both) == {"amount": "model"}
    assert sources_of({"amount": "1.25"}, "cobrar 1.250", [], both) == {"amount": "model"}


def test_a_number_two_grammars_read_as_two_amounts_is_none_of_the_turns() -> None:
    # Grammars that do not refuse "1,250" themselves: 1250 in one, 1.25 in the other.
    thousands = dataclasses.replace(ENGLISH, ambiguous_number=None)
    comma = dataclasses.replace(
        ENGLISH,
        ambiguous_number=None,
        malformed_number=None,
        integer=re.compile(r"[+-]?\d+"),
        decimal=re.compile(r"[+-]?\d+,\d+"),
        decimal_point=",",
        thousands_separator="",
    )
    args = {"a": 1250, "b": "1.25", "order": 4411}
    assert sources_of(args, "pay 1,250 for order 4411", [], thousands)["a"] == "turn"
    assert sources_of(args, "pay 1,250 for order 4411", [], comma)["b"] == "turn"
    assert sources_of(args, "pay 1,250 for order 4411", [], (thousands, comma)) == {
        "a": "model",
        "b": "model",
        "order": "turn",
    }
