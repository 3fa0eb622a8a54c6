"""Role words from declared phrases (issue 29, point 2): a phrase of `@tool(phrases=...)`
or agent.yaml's `phrases:` may name parameters ("send {amount} from {payer} to {payee}"),
and the role word right before each ("from", "to"; "de", "para" in Portuguese) then names
that parameter in a turn, as a docstring's "from the source account" does. A phrase that
names no parameter of its tool is refused; "from" and "to" are never swapped; and no value
is bound to a parameter the turn's words do not tie it to."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from selector_toolsets import bank, remessa, remit, specs
from test_selector_properties import PROPERTY_SETTINGS, noisy_turns

from stalwart import Agent, texts
from stalwart.cli import main
from stalwart.config import load_agent
from stalwart.errors import ConfigError, ToolDefinitionError
from stalwart.selector import explain_turn, read_turn
from stalwart.selector.english import GRAMMAR as ENGLISH
from stalwart.selector.portuguese import GRAMMAR as PORTUGUESE
from stalwart.selector.vocabulary import vocabulary
from stalwart.tools import ToolSpec, tool
from stalwart.verify.lints import lint_agent

pytestmark = pytest.mark.unit

REMIT = specs(remit)
REMESSA = specs(remessa)
BANK = specs(bank)
BOTH = ("english", "portuguese")
SENT = {"payer": "alice", "payee": "bob", "amount": Decimal("25.00")}


def said(
    turn: str, tools: list[ToolSpec], languages: tuple[str, ...] = ("english",)
) -> list[tuple[str, dict[str, object]]]:
    reading = read_turn(turn, tools, languages)
    assert reading.read, f"{turn!r} was not read: {reading.reason} ({reading.unread_clause!r})"
    return [(step.tool, step.args) for step in reading.steps]


def reason(
    turn: str, tools: list[ToolSpec], languages: tuple[str, ...] = ("english",)
) -> str | None:
    reading = read_turn(turn, tools, languages)
    assert reading.steps == (), f"{turn!r} was read as {reading.steps}"
    return reading.reason


def roles_of(tools: list[ToolSpec], grammar: object) -> dict[tuple[str, str], frozenset[str]]:
    return {
        (words.spec.name, param.name): param.roles
        for words in vocabulary(tools, grammar)  # type: ignore[arg-type]
        for param in words.params
    }


def test_a_phrase_gives_the_role_word_before_each_parameter_it_names() -> None:
    roles = roles_of(REMIT, ENGLISH)
    # "send {amount} from {payer} to {payee}", "remit out of {payer} into {payee}"
    assert roles[("remit", "payer")] == {"from", "of"}
    assert roles[("remit", "payee")] == {"to", "into"}
    assert roles[("remit", "amount")] == frozenset()  # "send" is no role word
    # the undo's own phrase says them the other way round, for its own parameters
    assert roles[("recall_remittance", "payee")] == {"from"}
    assert roles[("recall_remittance", "payer")] == {"to"}
    # "hold {payee}": "hold" is no role word, so it ties nothing
    assert roles[("hold_payee", "payee")] == frozenset()
    # Portuguese role words, from a Portuguese phrase, read by the Portuguese grammar only
    assert roles_of(REMESSA, PORTUGUESE)[("enviar_remessa", "pagador")] == {"de"}
    assert roles_of(REMESSA, PORTUGUESE)[("enviar_remessa", "recebedor")] == {"para"}
    assert roles_of(REMESSA, ENGLISH)[("enviar_remessa", "pagador")] == frozenset()


def test_a_turn_binds_by_the_phrases_role_words() -> None:
    # The docstring ("Remit an amount between two parties") ties no word to a parameter:
    # before, every one of these was refused ("required argument payer of remit ...").
    assert said("send 25.00 from alice to bob", REMIT) == [("remit", SENT)]
    assert said("send $25.00 to bob from alice", REMIT) == [("remit", SENT)]
    assert said("remit 25.00 out of alice into bob", REMIT) == [("remit", SENT)]
    assert said("remit 25.00 from alice to bob", REMIT) == [("remit", SENT)]
    assert said("recall 25.00 from bob to alice", REMIT) == [("recall_remittance", SENT)]
    # a name said is still a name, and the role word one more stop word
    assert said("send 25.00 from payer alice to bob", REMIT) == [("remit", SENT)]


def test_what_a_phrase_does_not_tie_is_refused_not_guessed() -> None:
    assert reason("send 25.00 from alice", REMIT) == (
        "required argument payee of remit is not given"
    )
    # "hold {payee}" shows where the value stands; it ties no word: not read by place
    assert reason("hold bob", REMIT) == "required argument payee of hold_payee is not given"
    assert said("hold payee bob", REMIT) == [("hold_payee", {"payee": "bob"})]
    # two values for one role: neither
    assert reason("send 25.00 from alice to bob to carol", REMIT) == (
        "the value of payee of remit is unclear: bob or carol"
    )
    # a number after a role word of a text parameter is no party's name
    assert reason("send 25.00 from 7 to bob", REMIT) == "remit has no argument for 7"


def test_a_role_word_given_to_two_parameters_names_neither() -> None:
    # The docstring says "from the source account"; a phrase says "from {target}".
    (transfer,) = [t for t in BANK if t.name == "transfer"]
    muddled = dataclasses.replace(transfer, phrases=("wire {amount} from {target}",))
    roles = roles_of([muddled], ENGLISH)
    assert roles[("transfer", "source")] == frozenset()
    assert roles[("transfer", "target")] == {"to"}
    assert reason("wire 25.00 from alice to bob", [muddled]) == (
        "required argument source of transfer is not given"
    )


def test_portuguese_phrases_carry_portuguese_role_words() -> None:
    payment = {"pagador": "ana", "recebedor": "bia", "valor": Decimal("25.00")}
    assert said("remeter 25,00 de ana para bia", REMESSA, BOTH) == [("enviar_remessa", payment)]
    assert said("remeter R$ 25,00 para bia de ana", REMESSA, BOTH) == [("enviar_remessa", payment)]
    assert said("mandar uma remessa de 25,00 de ana para bia", REMESSA, BOTH) == [
        ("enviar_remessa", payment)
    ]
    assert reason("não remeter 25,00 de ana para bia", REMESSA, BOTH) == (
        texts.clause_not_a_request("negated", "não")
    )


# --- a phrase that names no parameter is refused where it is declared ---


@pytest.mark.parametrize(
    ("phrase", "said_as"),
    [
        (
            "send {amount} from {payor}",
            texts.phrase_names_no_parameter(
                "move", "send {amount} from {payor}", "payor", ["payer", "amount"]
            ),
        ),
        (
            "send {} from {payer}",
            texts.phrase_names_no_parameter(
                "move", "send {} from {payer}", "", ["payer", "amount"]
            ),
        ),
        (
            "move {amount} from {payer} to {payer}",
            texts.phrase_names_parameter_twice(
                "move", "move {amount} from {payer} to {payer}", "payer"
            ),
        ),
        ("{amount}", texts.phrase_without_words("move", "{amount}")),
    ],
)
def test_a_phrase_naming_no_parameter_of_its_tool_is_refused(phrase: str, said_as: str) -> None:
    with pytest.raises(ToolDefinitionError) as raised:

        @tool(name="move", writes=True, phrases=[phrase])
        def move(payer: str, amount: Decimal) -> None:
            """Move an amount."""

    assert str(raised.value) == said_as


DESK = """\
agents:
  desk:
    tools: [read_ledger, remit, recall_remittance, hold_payee]
    on_unread: refuse
tools:
  - python: selector_toolsets.remit
  - hold_payee: {phrases: ["put a hold on {payee}", "freeze payments to {payee}"]}
record: record.sqlite
"""


def test_agent_yaml_phrases_carry_role_words_and_are_checked(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text(DESK)
    agent = load_agent(tmp_path / "agent.yaml")
    tools = list(agent.tools.values())
    assert said("freeze payments to bob", tools) == [("hold_payee", {"payee": "bob"})]
    assert said("put a hold on bob", tools) == [("hold_payee", {"payee": "bob"})]
    (tmp_path / "agent.yaml").write_text(DESK.replace("to {payee}", "to {payees}"))
    with pytest.raises(ConfigError) as raised:
        load_agent(tmp_path / "agent.yaml")
    shown = str(raised.value)
    assert "agent.yaml" in shown and "tools[1].hold_payee" in shown, shown
    assert "names {payees}, which is not a parameter of hold_payee" in shown, shown


def test_a_parameter_a_phrase_ties_no_word_to_is_linted(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text(DESK)
    found = [str(lint) for lint in lint_agent(load_agent(tmp_path / "agent.yaml"))]
    template = texts.EXTRA_LINT_TEXTS["phrase_ties_nothing"]
    # remit.py's decorator says "send {amount} ..." and "hold {payee}": neither word is a
    # role word; agent.yaml's phrases for hold_payee ("on", "to") tie theirs.
    assert [line for line in found if ": phrase_ties_nothing: " in line] == [
        "remit: phrase_ties_nothing: "
        + template.format(
            phrase="send {amount} from {payer} to {payee}", parameter="amount", languages="English"
        ),
        "recall_remittance: phrase_ties_nothing: "
        + template.format(
            phrase="recall {amount} from {payee} to {payer}",
            parameter="amount",
            languages="English",
        ),
    ]
    assert (
        "remit: phrase_ties_nothing: the phrase 'send {amount} from {payer} to {payee}' ties no "
        "word to {amount}: the word before it is no role word of English (as 'from', 'to'), so "
        "no value of a turn is read as amount by it"
    ) in found
    # "para" is a role word in Portuguese, not in English: linted only where it ties nothing
    portuguese = DESK.replace(
        '["put a hold on {payee}", "freeze payments to {payee}"]', '["segurar para {payee}"]'
    )
    bilingual = portuguese.replace(
        "on_unread: refuse", "on_unread: refuse\n    languages: [english, portuguese]"
    )
    for desk, linted in ((bilingual, []), (portuguese, ["English"])):
        (tmp_path / "agent.yaml").write_text(desk)
        found = [str(lint) for lint in lint_agent(load_agent(tmp_path / "agent.yaml"))]
        assert [line for line in found if line.startswith("hold_payee: phrase_ties_nothing")] == [
            "hold_payee: phrase_ties_nothing: "
            + template.format(phrase="segurar para {payee}", parameter="payee", languages=said)
            for said in linted
        ]


def test_the_command_and_the_agent_explain_a_role_word_from_a_phrase(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text(DESK)
    turn = "send 25.00 from alice to bob"
    result = CliRunner().invoke(main, ["explain", str(tmp_path / "agent.yaml"), turn])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f'1. "{turn}" reads as remit'
    assert '   payer = alice, from "from alice" (by name)' in lines, lines
    assert '   payee = bob, from "to bob" (by name)' in lines, lines
    with Agent.from_file(tmp_path / "agent.yaml") as agent:
        (clause,) = agent.explain(turn).clauses
        assert clause.tool == "remit"


# --- the guarantees, as properties ---

_NAMES = st.sampled_from(["alice", "bob", "carol", "dave", "erin", "frank"])


@PROPERTY_SETTINGS
@given(
    payer=_NAMES,
    payee=_NAMES,
    cents=st.integers(1, 10**7),
    order=st.permutations(["amount", "from", "to"]),
    verb=st.sampled_from(["send", "remit", "recall"]),
    noise=st.lists(st.sampled_from(["please", "the", "now", "money", "party"]), max_size=2),
)
def test_from_and_to_are_never_swapped_by_a_phrases_role_words(
    payer: str, payee: str, cents: int, order: list[str], verb: str, noise: list[str]
) -> None:
    amount = f"{cents // 100}.{cents % 100:02d}"
    said_as = {"amount": amount, "from": f"from {payer}", "to": f"to {payee}"}
    turn = " ".join([verb, *(said_as[part] for part in order), *noise])
    for step in read_turn(turn, REMIT).steps:  # read, or refused: never the other way round
        if step.tool == "recall_remittance":  # "recall {amount} from {payee} to {payer}"
            assert (step.args["payee"], step.args["payer"]) == (payer, payee), turn
        else:
            assert step.tool == "remit", turn
            assert (step.args["payer"], step.args["payee"]) == (payer, payee), turn
        assert step.args["amount"] == Decimal(amount), turn


@PROPERTY_SETTINGS
@given(turn=noisy_turns(), extra=st.lists(st.sampled_from(
    ["send", "remit", "recall", "hold", "from", "to", "out", "of", "into", "payer", "payee",
     "party", "ledger", "alice", "bob", "25.00", "$", "€"]), max_size=8))  # fmt: skip
def test_no_value_is_bound_to_a_parameter_a_phrases_words_do_not_tie_it_to(
    turn: str, extra: list[str]
) -> None:
    turn = " ".join([*extra, turn])
    words = {tool.spec.name: tool for tool in vocabulary(REMIT, ENGLISH)}
    for clause in explain_turn(turn, REMIT).clauses:
        if clause.tool is None:
            continue
        params = {param.name: param for param in words[clause.tool].params}
        for argument in clause.arguments:
            param = params[argument.name]
            tokens = argument.words.lower().split()
            if argument.by == "name":  # its name, or one of its role words
                tie = {param.joined, *param.stems, *param.roles}
                stems = {ENGLISH.stem(w.strip(".,;:'\"()")) for w in tokens}
                assert not tie.isdisjoint(stems | set(tokens)), (turn, argument)
            else:  # by type: the value alone
                assert argument.words.strip("'\"") == str(argument.value) or not isinstance(
                    argument.value, str
                ), (turn, argument)
