"""Declared phrases (issue 29, point 2): `@tool(phrases=[...])` and agent.yaml's `phrases:`
give a tool a few phrasings a person says for it, read by the selector as the tool's words
when said in full; a phrase two of an agent's tools declare is linted."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from selector_toolsets import bank, specs, wallet

from stalwart import texts
from stalwart.config import load_agent
from stalwart.errors import ConfigError, ToolDefinitionError
from stalwart.selector import read_turn
from stalwart.tools import ToolSpec, tool
from stalwart.verify.lints import lint_agent

pytestmark = pytest.mark.unit

WALLET = specs(wallet)
BANK = specs(bank)


def _steps(turn: str, tools: list[ToolSpec]) -> list[tuple[str, dict[str, object]]]:
    reading = read_turn(turn, tools)
    assert reading.read, (turn, reading.reason)
    return [(step.tool, {k: str(v) for k, v in step.args.items()}) for step in reading.steps]


def _with_phrases(tools: list[ToolSpec], **phrases: tuple[str, ...]) -> list[ToolSpec]:
    return [dataclasses.replace(t, phrases=phrases.get(t.name, ())) for t in tools]


PAYMENT = {"source": "alice", "target": "bob", "amount": "25.00"}


def test_the_decorator_keeps_the_phrases_with_single_spaces() -> None:
    @tool(writes=True, phrases=["send  money", "wire"])
    def move(amount: float) -> None:
        """Move an amount."""

    spec = move.__stalwart_tool__  # type: ignore[attr-defined]
    assert spec.phrases == ("send money", "wire")
    assert specs(wallet)[1].phrases == ("send money", "wire", "pay out")


@pytest.mark.parametrize(
    ("phrases", "said"),
    [
        ("send money", texts.phrases_not_a_list("move", "send money")),
        ([""], texts.phrase_without_words("move", "")),
        (["40"], texts.phrase_without_words("move", "40")),
        ([7], texts.phrase_without_words("move", 7)),
    ],
)
def test_a_phrase_that_is_no_phrase_is_refused(phrases: object, said: str) -> None:
    with pytest.raises(ToolDefinitionError) as raised:
        tool(name="move", phrases=phrases)(lambda amount: None)  # type: ignore[call-overload]
    assert str(raised.value) == said


def test_a_phrase_said_in_full_reaches_its_tool() -> None:
    assert _steps("send money 25.00 from alice to bob", WALLET) == [("make_payment", PAYMENT)]
    assert _steps("wire 25.00 from alice to bob", WALLET) == [("make_payment", PAYMENT)]
    # stop words between its words are aside
    assert _steps("send the money 25.00 from alice to bob", WALLET) == [("make_payment", PAYMENT)]
    assert _steps("lock my card 4411", WALLET) == [("suspend_card", {"card": "4411"})]
    # and the tool's own name still reaches it
    assert _steps("make a payment of 25.00 from alice to bob", WALLET) == [
        ("make_payment", PAYMENT)
    ]


def test_a_phrases_words_said_apart_or_in_part_are_not_it() -> None:
    for turn in [
        "send 25.00 money from alice to bob",  # a value between its words
        "block money 4411",
        "top 40.00 wallet alice",  # "top up" without its "up"
        "get the money back 25.00 from alice to bob",  # "get my money back": "the" is no "my"
    ]:
        assert read_turn(turn, WALLET).steps == (), turn


def test_a_phrase_reaches_an_undo_without_its_undoing_word_and_never_ties_with_its_write() -> None:
    assert _steps("claw back 25.00 from alice to bob", WALLET) == [("reverse_payment", PAYMENT)]
    assert _steps("reverse the payment of 25.00 from alice to bob", WALLET) == [
        ("reverse_payment", PAYMENT)
    ]
    # "back" is the phrase's own word, not the opposite of the tool it names
    assert _steps("get my money back 25.00 from alice to bob", WALLET) == [
        ("reverse_payment", PAYMENT)
    ]


def test_a_phrase_is_the_tools_word_and_its_moods_are_still_read() -> None:
    # a mood word inside a declared phrase said in full is the tool's ("how much")
    assert _steps("how much is left in wallet alice", WALLET) == [
        ("show_balance", {"wallet": "alice"})
    ]
    for turn, reason in [
        ("don't send money 25.00 from alice to bob", 'it says not to: "don\'t"'),
        ("should I wire 25.00 from alice to bob?", 'it asks a question: "should I"'),
        ("how much is left", 'it asks a question: "how"'),
        (
            "cancel the wire of 25.00 from alice to bob",
            texts.clause_opposite("make_payment", "cancel"),
        ),
        ("I already wired 25.00 from alice to bob", 'it tells what was done: "wired"'),
    ]:
        reading = read_turn(turn, WALLET)
        assert (reading.steps, reading.reason) == ((), reason), turn


def test_a_phrase_outweighs_one_word_of_another_tools_name() -> None:
    # "send" is a word of send_statement's name; "send money", transfer's whole phrase
    tools = _with_phrases(BANK, transfer=("send money",))
    payment = {"source": "alice", "target": "bob", "amount": "25.00"}
    assert _steps("send money 25.00 from alice to bob", tools) == [("transfer", payment)]
    assert _steps("send the statement for account alice", tools) == [
        ("send_statement", {"account": "alice"})
    ]
    # without the phrase, the same turn is not read
    assert read_turn("send money 25.00 from alice to bob", BANK).steps == ()


def test_a_phrase_two_tools_declare_names_neither() -> None:
    tools = _with_phrases(BANK, transfer=("move it",), pay_bill=("move it",))
    reading = read_turn("move it 25.00", tools)
    assert reading.steps == ()


# --- agent.yaml and the lint ---

DESK = """\
agents:
  desk:
    tools: [get_balance, transfer, return_funds, pay_bill, send_statement, freeze_card]
    on_unread: refuse
tools:
  - python: selector_toolsets.bank
  - transfer: {phrases: ["send money", "Pay Out"]}
  - pay_bill: {phrases: ["pay out", "settle"]}
record: record.sqlite
"""


def test_agent_yaml_gives_a_tool_its_phrases(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text(DESK)
    agent = load_agent(tmp_path / "agent.yaml")
    assert agent.tools["transfer"].phrases == ("send money", "Pay Out")
    tools = list(agent.tools.values())
    assert _steps("send money 25.00 from alice to bob", tools) == [("transfer", PAYMENT)]
    assert _steps("settle biller gas 40.10", tools) == [
        ("pay_bill", {"biller": "gas", "amount": "40.10"})
    ]


def test_a_phrase_two_tools_share_is_linted_on_each(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text(DESK)
    found = [str(lint) for lint in lint_agent(load_agent(tmp_path / "agent.yaml"))]
    shared = [line for line in found if ": phrase_shared: " in line]
    template = texts.EXTRA_LINT_TEXTS["phrase_shared"]
    assert shared == [
        "transfer: phrase_shared: " + template.format(phrase="Pay Out", other="pay_bill"),
        "pay_bill: phrase_shared: " + template.format(phrase="pay out", other="transfer"),
    ]
    (tmp_path / "agent.yaml").write_text(DESK.replace('"pay out", ', ""))
    found = [str(lint) for lint in lint_agent(load_agent(tmp_path / "agent.yaml"))]
    assert not [line for line in found if ": phrase_shared: " in line]


@pytest.mark.parametrize("phrases", ['"send money"', "[3]", '[""]'])
def test_agent_yaml_refuses_phrases_that_are_none(tmp_path: Path, phrases: str) -> None:
    (tmp_path / "agent.yaml").write_text(
        DESK.replace('{phrases: ["send money", "Pay Out"]}', f"{{phrases: {phrases}}}")
    )
    with pytest.raises(ConfigError) as raised:
        load_agent(tmp_path / "agent.yaml")
    assert "agent.yaml" in str(raised.value) and "tools[1].transfer" in str(raised.value), (
        raised.value
    )
