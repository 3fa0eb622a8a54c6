"""`explain` (issue 29, point 3): how a turn is read, clause by clause, each argument with
the words it came from and each clause not read with its reason; in the library and as
`stalwart explain agent.yaml "turn"`. It runs nothing, asks nothing, writes no record."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from selector_toolsets import bank, library, shop_specs, specs
from test_selector_properties import (
    PROPERTY_SETTINGS,
    TOOL_SETS,
    Call,
    noisy_turns,
    written_turns,
)

from stalwart import Agent
from stalwart.cli import main
from stalwart.errors import InputRefused
from stalwart.selector import (
    GRAMMAR,
    ArgumentRead,
    ClauseRead,
    Explanation,
    explain_turn,
    read_turn,
)
from stalwart.selector.vocabulary import vocabulary_memo
from stalwart.texts import NOT_ENGLISH
from stalwart.tools import ToolSpec

pytestmark = pytest.mark.unit

BANK = specs(bank)
SHOP = shop_specs()
LIBRARY = specs(library)
SHOP_YAML = Path(__file__).resolve().parents[1] / "examples" / "shop" / "agent.yaml"


def test_each_clause_its_tool_and_each_argument_with_its_words() -> None:
    turn = "charge order 4411 for an amount of 40.00, then update the crm for order #4411"
    explanation = explain_turn(turn, SHOP)
    assert explanation.clauses == (
        ClauseRead(
            clause="charge order 4411 for an amount of 40.00",
            start=0,
            tool="charge_card",
            arguments=(
                ArgumentRead("order", 4411, "order 4411", "name"),
                ArgumentRead("amount", 40.0, "amount of 40.00", "name"),
            ),
        ),
        ClauseRead(
            clause="update the crm for order #4411",
            start=47,
            tool="update_crm",
            arguments=(ArgumentRead("order", 4411, "order #4411", "name"),),
        ),
    )
    assert explanation.reading == read_turn(turn, SHOP)


def test_an_argument_bound_by_type_shows_its_own_words() -> None:
    (clause,) = explain_turn('borrow book "The Dispossessed" 17', LIBRARY).clauses
    assert clause.arguments == (
        ArgumentRead("title", "The Dispossessed", '"The Dispossessed"', "type"),
        ArgumentRead("member", 17, "17", "type"),
    )


def test_every_clause_is_shown_also_after_one_not_read() -> None:
    turn = "freeze card 4411, but don't send the statement for account alice; water the plants"
    explanation = explain_turn(turn, BANK)
    assert [(c.clause, c.tool, c.reason) for c in explanation.clauses] == [
        ("freeze card 4411", "freeze_card", None),
        ("don't send the statement for account alice", None, 'it says not to: "don\'t"'),
        ("water the plants", None, "no tool matches"),
    ]
    # What would run is the turn's own reading: nothing.
    assert explanation.reading.steps == ()
    assert explanation.reading.unread_clause == "don't send the statement for account alice"


def test_a_turn_in_portuguese_shows_no_clause() -> None:
    explanation = explain_turn("cobrar o pedido 4411 40,00", SHOP)
    assert explanation.clauses == ()
    assert explanation.reading.reason == NOT_ENGLISH


def test_the_json_is_plain_and_a_decimal_is_its_exact_text() -> None:
    explanation = explain_turn("pay bill biller gas 40.10", BANK)
    document = json.loads(json.dumps(explanation.to_json()))
    assert document["read"] is True
    assert document["steps"] == [{"tool": "pay_bill", "args": {"biller": "gas", "amount": "40.10"}}]
    assert document["clauses"][0]["arguments"][1] == {
        "name": "amount",
        "value": "40.10",
        "words": "40.10",
        "by": "type",
    }


def test_explaining_keeps_nothing_in_the_shape_memo() -> None:
    memo = vocabulary_memo(SHOP, GRAMMAR)[1]
    memo.clear()
    explain_turn("charge order 4411 40.00, then update the crm for order 4411", SHOP)
    # `explain` reads the turn once as read_turn does (which keeps its shapes) and each
    # clause again, keeping none of its own.
    kept = len(memo)
    explain_turn("charge order 17 5.00, then update the crm for order 17", SHOP)
    assert len(memo) == kept


def _same_as_the_reading(explanation: Explanation, tools: list[ToolSpec]) -> None:
    reading = explanation.reading
    assert reading == read_turn(explanation.turn, tools)
    if reading.read:
        assert [(c.tool, {a.name: a.value for a in c.arguments}) for c in explanation.clauses] == [
            (step.tool, step.args) for step in reading.steps
        ]
        for clause in explanation.clauses:
            for argument in clause.arguments:
                assert argument.words in clause.clause
    elif explanation.clauses:
        unread = [c for c in explanation.clauses if c.clause == reading.unread_clause]
        assert unread and unread[0].reason == reading.reason


@PROPERTY_SETTINGS
@given(written=written_turns())
def test_a_written_turn_explained_is_its_reading(
    written: tuple[str, list[ToolSpec], list[Call]],
) -> None:
    turn, tools, _ = written
    _same_as_the_reading(explain_turn(turn, tools), tools)


@PROPERTY_SETTINGS
@given(tool_set=st.sampled_from(sorted(TOOL_SETS)), turn=noisy_turns())
def test_any_turn_explained_agrees_with_its_reading(tool_set: str, turn: str) -> None:
    tools = TOOL_SETS[tool_set]
    _same_as_the_reading(explain_turn(turn, tools), tools)


# --- the command ---


def test_the_command_prints_each_clause_and_exits_0_for_a_turn_read() -> None:
    turn = "charge order 4411 40.00, then update the crm for order 4411"
    result = CliRunner().invoke(main, ["explain", str(SHOP_YAML), turn])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        '1. "charge order 4411 40.00" reads as charge_card',
        '   order = 4411, from "order 4411" (by name)',
        '   amount = 40.0, from "40.00" (by type)',
        '2. "update the crm for order 4411" reads as update_crm',
        '   order = 4411, from "order 4411" (by name)',
        "The turn reads as 2 steps. Nothing was run.",
    ]


BANK_DESK = """\
agents:
  desk:
    tools: [get_balance, transfer, return_funds, pay_bill, send_statement, freeze_card]
    on_unread: refuse
tools:
  - python: selector_toolsets.bank
record: record.sqlite
"""


def test_the_command_says_why_a_clause_is_not_read_exits_1_and_writes_no_record(
    tmp_path: Path,
) -> None:
    (tmp_path / "agent.yaml").write_text(BANK_DESK)
    turn = "freeze card 4411, but don't send the statement for account alice"
    result = CliRunner().invoke(main, ["explain", str(tmp_path / "agent.yaml"), turn])
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines() == [
        '1. "freeze card 4411" reads as freeze_card',
        '   card = 4411, from "card 4411" (by name)',
        '2. "don\'t send the statement for account alice" is not read: it says not to: "don\'t"',
        'The turn is not read: "don\'t send the statement for account alice" '
        '(it says not to: "don\'t"). Nothing would run.',
    ]
    json_result = CliRunner().invoke(
        main, ["explain", str(tmp_path / "agent.yaml"), turn, "--json"]
    )
    assert json_result.exit_code == 1
    document = json.loads(json_result.stdout)
    assert (document["read"], document["reason"]) == (False, 'it says not to: "don\'t"')
    assert [c["tool"] for c in document["clauses"]] == ["freeze_card", None]
    assert not (tmp_path / "record.sqlite").exists()


def test_the_command_exits_2_for_a_bad_file_or_an_empty_turn(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text("agents:\n  desk:\n    on_unread: ask\n")
    result = CliRunner().invoke(main, ["explain", str(tmp_path / "agent.yaml"), "x"])
    assert result.exit_code == 2
    assert "on_unread" in result.stderr
    result = CliRunner().invoke(main, ["explain", str(SHOP_YAML), "   "])
    assert result.exit_code == 2
    assert result.stderr.strip()


def test_a_decimal_argument_prints_as_written() -> None:
    explanation = explain_turn("pay the fine of member 17 for an amount of 3.50", LIBRARY)
    (clause,) = explanation.clauses
    assert clause.arguments[1] == ArgumentRead("amount", Decimal("3.50"), "amount of 3.50", "name")


# --- Agent.explain ---


def test_agent_explain_is_the_selectors_over_its_tools_and_records_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "agent.yaml").write_text(BANK_DESK)
    turn = "freeze card 4411, but don't send the statement for account alice"
    with Agent.from_file(tmp_path / "agent.yaml") as agent:
        explanation = agent.explain(turn)
        assert explanation == explain_turn(turn, list(agent.tools.values()))
        assert [c.tool for c in explanation.clauses] == ["freeze_card", None]
        assert not explanation.reading.read
        read = agent.explain("freeze card 4411")
        assert [(s.tool, s.args) for s in read.reading.steps] == [("freeze_card", {"card": "4411"})]
        # Nothing was asked, run or recorded: the default session has no record.
        assert agent.store.load(agent.session_id("ana")) is None
        assert agent.pending("ana") is None


def test_agent_explain_refuses_a_turn_past_the_limits_as_chat_does(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text(BANK_DESK)
    with Agent.from_file(tmp_path / "agent.yaml") as agent:
        with pytest.raises(InputRefused):
            agent.explain("   ")
        with pytest.raises(InputRefused):
            agent.explain("freeze card 4411 " * 10_000)
