"""Portuguese, opt-in (issue 29, point 4): `languages: [english, portuguese]` in agent.yaml.

An agent that says nothing reads English alone, as the chapter has it; one that opts in
reads each turn in exactly one language, told by its words, and refuses a mixed or an
unclear one. The Portuguese grammar has what the English one has: its separators, a
decimal comma and a thousands point, snowballstemmer's Portuguese stemmer, negation,
conditions, questions, hedges, and tools reached by declared Portuguese phrases.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from selector_toolsets import bank, carteira, specs
from test_selector_corpus import CORPUS_TURNS, DESKS, verdict

from stalwart import Agent, texts
from stalwart.cli import main
from stalwart.config import load_agent, load_project
from stalwart.errors import ConfigError
from stalwart.selector import DEFAULT, LANGUAGES, explain_turn, read_turn
from stalwart.selector import portuguese as pt
from stalwart.selector.languages import language_of
from stalwart.tools import ToolSpec
from stalwart.verify.turns import check_turns

pytestmark = pytest.mark.unit

BOTH = ("english", "portuguese")
CARTEIRA = specs(carteira)
BANK = specs(bank)
PIX = {"origem": "alice", "destino": "bob", "valor": "25.00"}


def _steps(turn: str, languages: tuple[str, ...] = BOTH) -> list[tuple[str, dict[str, str]]]:
    reading = read_turn(turn, CARTEIRA, languages)
    assert reading.read, (turn, reading.reason)
    return [(step.tool, {k: str(v) for k, v in step.args.items()}) for step in reading.steps]


def _reason(
    turn: str, tools: list[ToolSpec] = CARTEIRA, languages: tuple[str, ...] = BOTH
) -> str | None:
    reading = read_turn(turn, tools, languages)
    assert reading.steps == (), turn
    return reading.reason


# --- an agent that says nothing reads English alone ---


def test_the_default_is_english_alone_and_a_portuguese_turn_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text(DESK)
    assert load_agent(tmp_path / "agent.yaml").languages == ("english",) == DEFAULT
    turn = "transferir 25,00 de alice para bob"
    assert _reason(turn, CARTEIRA, DEFAULT) == texts.NOT_ENGLISH
    assert read_turn(turn, CARTEIRA) == read_turn(turn, CARTEIRA, DEFAULT)
    with Agent.from_file(tmp_path / "agent.yaml") as agent:
        assert agent.explain(turn).reading.reason == texts.NOT_ENGLISH
        reply = agent.chat(turn, user="ana")
    assert reply.text == texts.unread_reply(turn, texts.NOT_ENGLISH)


def test_the_refusal_keeps_its_reason_and_says_how_to_have_portuguese_read(
    tmp_path: Path,
) -> None:
    # The reason is the one a verify turns file keeps (QG201 compares it), word for word;
    # what to do about it is said after it, in the reply and in `stalwart explain`.
    (tmp_path / "agent.yaml").write_text(DESK)
    turn = "transferir 25,00 de alice para bob"
    with Agent.from_file(tmp_path / "agent.yaml") as agent:
        assert agent.explain(turn).reading.reason == (
            "the turn is not English; it reads as Portuguese, which is not read yet"
        )
        reply = agent.chat(turn, user="ana")
    assert reply.text == (
        'I could not read "transferir 25,00 de alice para bob" (the turn is not English; it '
        "reads as Portuguese, which is not read yet), so nothing ran. To have Portuguese "
        "read, add it to the agent's languages in agent.yaml: languages: [english, "
        "portuguese]."
    )
    result = CliRunner().invoke(main, ["explain", str(tmp_path / "agent.yaml"), turn])
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == (
        'The turn is not read: "transferir 25,00 de alice para bob" (the turn is not '
        "English; it reads as Portuguese, which is not read yet). Nothing would run. To "
        "have Portuguese read, add it to the agent's languages in agent.yaml: languages: "
        "[english, portuguese]."
    )
    # any other reason is said as before, with nothing after it
    assert texts.unread_reply("x", texts.NO_TOOL_MATCHES) == (
        'I could not read "x" (no tool matches), so nothing ran.'
    )


def test_english_alone_reads_every_corpus_turn_as_before_portuguese_shipped() -> None:
    # The rule English alone keeps is `reads_as_portuguese` with the marks it always had.
    for entry in CORPUS_TURNS:
        if entry.desk == "carteira":
            continue
        english = language_of(entry.turn, DEFAULT)
        if pt.reads_as_portuguese(entry.turn, pt_english_marks()):
            assert english == texts.NOT_ENGLISH
        else:
            assert english is LANGUAGES["english"]


def pt_english_marks() -> frozenset[str]:
    from stalwart.selector import english

    return english.STOP_WORDS | {"then"}


# --- the Portuguese grammar ---


def test_it_is_snowballs_portuguese_stemmer_with_accents_folded() -> None:
    grammar = LANGUAGES["portuguese"]
    assert grammar.language == "portuguese"
    assert grammar.stem("transfere") == grammar.stem("transferir") == "transfer"
    assert grammar.stem("cartão") == grammar.stem("cartao")
    assert LANGUAGES["english"].stem("café") != LANGUAGES["english"].stem("cafe")


@pytest.mark.parametrize(
    "separator", [", depois", " depois", " e depois", ", então", " entao", ";"]
)
def test_its_separators_split_a_turn(separator: str) -> None:
    turn = f"bloquear o cartão 4411{separator} transferir 25,00 de alice para bob"
    assert _steps(turn) == [("bloquear_cartao", {"cartao": "4411"}), ("transferir", PIX)]


def test_a_bare_e_does_not_split() -> None:
    assert _reason("bloquear o cartão 4411 e transferir 25,00 de alice para bob") is not None


@pytest.mark.parametrize(
    ("written", "amount"),
    [
        ("25,00", "25.00"),
        ("1.250,00", "1250.00"),
        ("R$25,00", "25.00"),
        ("25,00 reais", "25.00"),
        # a sign written apart from its number (refused before: "no argument for €")
        ("€ 25,00", "25.00"),
        ("R$ 25,00", "25.00"),
        ("R$ 1.250,00", "1250.00"),
        ("25,00 €", "25.00"),
    ],
)
def test_a_comma_is_the_decimal_point_and_a_point_separates_thousands(
    written: str, amount: str
) -> None:
    assert _steps(f"transferir {written} de alice para bob") == [
        ("transferir", {**PIX, "valor": amount})
    ]


def test_a_number_written_the_english_way_or_two_ways_is_not_read() -> None:
    assert _reason("transferir 25.00 de alice para bob") == texts.number_not_read(
        "25.00", "a comma is the decimal point, as in 1.250,00"
    )
    assert _reason("transferir 1.250 de alice para bob") == texts.number_two_ways(
        "1.250", "1250", "1.250"
    )
    assert _reason("transferir 1,250 de alice para bob") == texts.number_two_ways(
        "1,250", "1.250", "1250"
    )
    # a sign apart changes nothing: the number is named, and read as neither amount
    assert _reason("transferir R$ 1.250 de alice para bob") == texts.number_two_ways(
        "1.250", "1250", "1.250"
    )
    assert _reason("transferir € 1,250 de alice para bob") == texts.number_two_ways(
        "1,250", "1.250", "1250"
    )
    # a sign with no number beside it is a value no argument takes
    assert _reason("transferir 25,00 de alice para bob em €") == texts.no_argument_for(
        "€", "transferir"
    )


@pytest.mark.parametrize(
    ("turn", "mood", "words"),
    [
        ("não transferir 25,00 de alice para bob", "negated", "não"),
        ("nunca bloquear o cartão 4411", "negated", "nunca"),
        ("bloquear o cartão 4411, mas não transferir 25,00 de alice para bob", "negated", "não"),
        ("se o saldo estiver baixo, transferir 25,00 de alice para bob", "conditional", "se"),
        ("transferir 25,00 de alice para bob caso o saldo esteja baixo", "conditional", "caso"),
        ("devo bloquear o cartão 4411?", "question", "devo"),
        ("bloquear o cartão 4411?", "question", "?"),
        ("talvez bloquear o cartão 4411", "hedged", "talvez"),
        ("bloquear o cartão 4411 ou 4412", "choice", "ou"),
        ("eu já bloqueei o cartão 4411", "reported", "bloqueei"),
    ],
)
def test_a_clause_that_is_no_plain_request_is_never_a_step(
    turn: str, mood: str, words: str
) -> None:
    assert _reason(turn) == texts.clause_not_a_request(mood, words)


def test_tools_are_reached_by_their_declared_portuguese_phrases() -> None:
    assert _steps("enviar dinheiro 25,00 de alice para bob") == [("transferir", PIX)]
    assert _steps("fazer um pix de 25,00 de alice para bob") == [("transferir", PIX)]
    assert _steps("travar o cartão 4411") == [("bloquear_cartao", {"cartao": "4411"})]
    # the undo, named for undoing ("estornar"), by its phrase without that word
    assert _steps("devolver o dinheiro 25,00 de alice para bob") == [
        ("estornar_transferencia", PIX)
    ]


# --- one language a turn ---


def test_a_turn_that_mixes_the_two_is_refused_naming_a_word_of_each() -> None:
    assert _reason("please transferir 25,00 de alice para bob") == texts.turn_mixes_languages(
        "please", "para"
    )
    assert _reason("transfer 25.00 from alice para bob", BANK) == texts.turn_mixes_languages(
        "from", "para"
    )


def test_a_turn_in_a_language_the_agent_does_not_read_is_refused() -> None:
    reason = _reason("transfer 25.00 from alice to bob", BANK, ("portuguese",))
    assert reason == texts.turn_in_a_language_not_read("english", ["portuguese"])


def test_a_turn_that_marks_no_language_runs_only_when_both_read_it_alike() -> None:
    # both read it as the same step
    assert _steps("bloquear cartao 4411") == [("bloquear_cartao", {"cartao": "4411"})]
    assert read_turn("freeze card 4411", BANK, BOTH) == read_turn("freeze card 4411", BANK)
    # "never" is English's negator and no Portuguese word: English's mood is said, not run
    assert _reason("never freeze card 4411", BANK) == texts.clause_not_a_request("negated", "never")


def test_english_turns_read_by_an_agent_of_both_languages_are_never_misread() -> None:
    # The English corpus, read by an agent of both languages: nothing its label does not
    # give, except a number only Portuguese writes so ("40,00" is 40.00 in Portuguese).
    exceptions = []
    for entry in CORPUS_TURNS:
        if entry.desk == "carteira":
            continue
        reading = read_turn(entry.turn, DESKS[entry.desk], BOTH)
        if verdict(entry, reading) == "misread":
            exceptions.append(entry.turn)
    assert exceptions == ["charge order 4411 40,00", "pay bill biller gas 1.250,00"]


# --- agent.yaml, the agent and the command ---

DESK = """\
agents:
  desk:
    tools: [ver_saldo, transferir, estornar_transferencia, pagar_conta, bloquear_cartao]
    on_unread: refuse
tools:
  - python: selector_toolsets.carteira
record: record.sqlite
"""
BILINGUAL = DESK.replace(
    "on_unread: refuse", "on_unread: refuse\n    languages: [english, portuguese]"
)


def test_an_agent_that_opts_in_reads_portuguese(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text(BILINGUAL)
    assert load_agent(tmp_path / "agent.yaml").languages == BOTH
    turn = "bloquear o cartão 4411"
    with Agent.from_file(tmp_path / "agent.yaml") as agent:
        assert [c.tool for c in agent.explain(turn).clauses] == ["bloquear_cartao"]
        reply = agent.chat(turn, user="ana")
    assert [w.kind for w in reply.waiting] == ["confirm"]  # a write, asked to be confirmed
    result = CliRunner().invoke(main, ["explain", str(tmp_path / "agent.yaml"), turn])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == '1. "bloquear o cartão 4411" reads as bloquear_cartao'
    assert explain_turn(turn, CARTEIRA, BOTH).reading == read_turn(turn, CARTEIRA, BOTH)


@pytest.mark.parametrize(
    ("languages", "said"),
    [
        ("[]", "expected one language or more"),
        ("[klingon]", "klingon"),
        ("[english, english]", "listed twice"),
    ],
)
def test_agent_yaml_refuses_languages_it_cannot_read(
    tmp_path: Path, languages: str, said: str
) -> None:
    (tmp_path / "agent.yaml").write_text(BILINGUAL.replace("[english, portuguese]", languages))
    with pytest.raises(ConfigError) as raised:
        load_agent(tmp_path / "agent.yaml")
    assert "languages" in str(raised.value) and said in str(raised.value), raised.value


BILINGUAL_TURNS = """\
turns:
  - turn: "fazer um pix de R$ 25,00 de alice para bob"
    steps: [{tool: transferir, args: {origem: alice, destino: bob, valor: "25.00"}}]
  - turn: "não transferir 25,00 de alice para bob"
    unread: 'it says not to: "não"'
  - turn: "transfer 25.00 from alice to bob"
    unread: "required argument origem of transferir is not given"
"""


def test_verify_reads_sample_turns_in_the_agents_languages(tmp_path: Path) -> None:
    # Before, a turns file was read in English alone whatever the agent read: the
    # Portuguese turns were "not English" (QG201 on both), though the agent reads them.
    (tmp_path / "agent.yaml").write_text(BILINGUAL)
    (tmp_path / "turns.yaml").write_text(BILINGUAL_TURNS)
    findings, count = check_turns(load_project(tmp_path / "agent.yaml"), tmp_path / "turns.yaml")
    assert (findings, count) == ([], 3)
    result = CliRunner().invoke(
        main, ["verify", str(tmp_path / "agent.yaml"), "--turns", str(tmp_path / "turns.yaml")]
    )
    assert "QG201" not in result.output  # (the desk's routes have findings of their own)
    # the same file over the agent that reads English alone: each Portuguese turn is QG201
    (tmp_path / "agent.yaml").write_text(DESK)
    findings, _ = check_turns(load_project(tmp_path / "agent.yaml"), tmp_path / "turns.yaml")
    assert [(f.code.value, f.tool) for f in findings] == [
        ("QG201", "turns[0]"),
        ("QG201", "turns[1]"),
    ]
