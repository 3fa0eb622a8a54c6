"""The selector works a tool set's words out once, and binds a clause once per parameter
list; neither may change what a turn is read as."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selector_toolsets import home, hotel, library, shop_specs, specs

from stalwart.selector import read_turn
from stalwart.selector.english import GRAMMAR
from stalwart.selector.vocabulary import vocabulary
from stalwart.tools import ToolSpec

pytestmark = pytest.mark.unit

SHOP = shop_specs()


def test_a_tool_set_is_worked_out_once() -> None:
    first = vocabulary(SHOP, GRAMMAR)
    assert vocabulary(list(SHOP), GRAMMAR) is first
    assert [words.spec.name for words in first] == [spec.name for spec in SHOP]


def test_a_changed_tool_is_worked_out_again() -> None:
    before = vocabulary(SHOP, GRAMMAR)
    renamed = [dataclasses.replace(SHOP[0], description="Find a parcel."), *SHOP[1:]]
    after = vocabulary(renamed, GRAMMAR)
    assert after is not before
    assert "parcel" in after[0].doc_stems and "parcel" not in before[0].doc_stems


@pytest.mark.parametrize(
    ("turn", "reason"),
    [
        # every shop tool takes `order`: the binding is shared, the reason names the tool
        ("update the crm for order 4411 4412", "update_crm has no argument for 4412"),
        (
            "provision the account for order 4411 40.00",
            "provision_account has no argument for 40.00",
        ),
        (
            "send the receipt for order 4411 order 4412",
            "the value of order of send_receipt is unclear: 4411 or 4412",
        ),
        (
            "restore crm order 4411",
            "required argument previous_status of restore_crm is not given",
        ),
        ("charge order 4411", "required argument amount of charge_card is not given"),
    ],
)
def test_a_shared_binding_names_the_tool_it_was_read_as(turn: str, reason: str) -> None:
    reading = read_turn(turn, SHOP)
    assert (reading.steps, reading.unread_clause, reading.reason) == ((), turn, reason)


def test_steps_do_not_share_their_arguments() -> None:
    turn = "update the crm for order 4411, then send the receipt for order 4411"
    first, second = read_turn(turn, SHOP).steps
    assert first.args == second.args == {"order": 4411}
    first.args["order"] = 1
    assert second.args == {"order": 4411}
    assert read_turn(turn, SHOP).steps[0].args == {"order": 4411}


TOOL_SETS = [SHOP, specs(hotel), specs(home), specs(library)]
WORDS = sorted(
    {part for tools in TOOL_SETS for spec in tools for part in spec.name.split("_")}
    | {p.name for tools in TOOL_SETS for spec in tools for p in spec.params}
    | {"the", "for", "then", ",", "4411", "40.00", "3", "B-12", '"Aurora"', "yes", "no"}
)


@settings(max_examples=150, deadline=None)
@given(
    tools=st.sampled_from(TOOL_SETS),
    words=st.lists(st.sampled_from(WORDS), max_size=14),
)
def test_fresh_copies_of_the_tools_read_a_turn_the_same(
    tools: list[ToolSpec], words: list[str]
) -> None:
    """Whatever is worked out once per tool set is what each turn would work out anew."""
    turn = " ".join(words) or "nothing"
    copies = [dataclasses.replace(spec) for spec in tools]
    assert read_turn(turn, copies) == read_turn(turn, tools)
    assert read_turn(turn, tools) == read_turn(turn, tools)
