"""A write's probe: declared, checked at registration and by the lints, asked once when the
write's outcome is in doubt, its answer shown under the question as evidence (and kept in
the record), never deciding the question. Real runs on a real record (tests/probe_shop.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from probe_shop import PROBE_FACTS, PROBE_TOOLS, TURN, probes_asked, write_probe_project

from stalwart import Agent, ConfigError, ToolDefinitionError, texts, tool
from stalwart.cli import main
from stalwart.config import load_project
from stalwart.replies import Waiting
from stalwart.tools import ProbeSpec, spec_of

pytestmark = pytest.mark.unit

Desk = tuple[Path, Agent]


@pytest.fixture
def desk(tmp_path: Path, record: str) -> Iterator[Desk]:
    """The probe's desk on a fresh record, once per backend (SQLite, PostgreSQL)."""
    project = write_probe_project(tmp_path, record=record)
    agent = project.agent()
    yield tmp_path, agent
    for opened in project.agents:
        opened.close()


def _in_doubt(agent: Agent) -> Waiting:
    """Approve the charge; the reply waits on the outcome question."""
    asked = agent.chat(TURN, user="u")
    reply = agent.confirm("u", "approve", question=asked.waiting[0])
    assert reply.state == "waiting", reply.text
    [waiting] = reply.waiting
    assert waiting.kind == "outcome"
    return waiting


def _key(agent: Agent) -> str:
    [write] = [c for c in agent.record("u") if c.kind == "write"]
    assert write.key is not None
    return write.key


# --- asked when the outcome is in doubt ---


def test_a_probe_that_finds_the_charge_is_shown_under_the_question_and_kept(desk: Desk) -> None:
    folder, agent = desk
    (folder / "lose-charge_card").touch()
    waiting = _in_doubt(agent)
    # The chapter's question is unchanged; the evidence is beside it.
    assert waiting.text == texts.outcome_question("charge_card", stopped=False)
    evidence = waiting.evidence
    assert evidence is not None
    assert evidence.text == "get_charge found charge ch_19 for order 4411 under this key"
    assert (evidence.found, evidence.result, evidence.error) == (True, {"charge": "ch_19"}, None)
    assert evidence.args == {"order": 4411, "key": _key(agent)}
    assert probes_asked(folder) == [f"4411 {_key(agent)}"]
    # Kept in the record: the probe's row, and the evidence read back in another process.
    probe = next(c for c in agent.record("u") if c.kind == "probe")
    assert (probe.call_id, probe.tool, probe.status, probe.tries) == (
        evidence.call,
        "get_charge",
        "ran",
        1,
    )
    assert probe.result == {"charge": "ch_19"}
    with Agent.from_file(folder / "agent.yaml") as other:
        pending = other.pending("u")
        assert pending is not None
        assert pending.waiting[0].evidence == evidence
        assert pending.waiting[0].id == waiting.id
    assert len(probes_asked(folder)) == 1, "read back, never asked again"


def test_the_person_still_decides_after_the_probe_found_the_charge(desk: Desk) -> None:
    folder, agent = desk
    (folder / "lose-charge_card").touch()
    waiting = _in_doubt(agent)
    reply = agent.answer("u", "did not happen", question=waiting)
    # What the person said is what happens: the run is rolled back, the probe changes nothing.
    assert reply.state == "rolled_back"
    write = next(c for c in agent.record("u") if c.kind == "write")
    assert write.status == "did_not_happen"
    assert len(probes_asked(folder)) == 1


def test_a_probe_that_finds_nothing_says_so(tmp_path: Path) -> None:
    project = write_probe_project(tmp_path)
    with project.agent() as agent:
        (tmp_path / "drop-charge_card").touch()
        evidence = _in_doubt(agent).evidence
        assert evidence is not None
        assert evidence.text == "get_charge found nothing for order 4411 under this key"
        assert (evidence.found, evidence.result) == (False, None)
        reply = agent.answer_current("u", "happened")
        assert reply.state == "done", "the person's answer decides, whatever the probe said"


def test_a_probe_that_raises_is_shown_as_such_and_changes_nothing(tmp_path: Path) -> None:
    project = write_probe_project(tmp_path)
    with project.agent() as agent:
        (tmp_path / "lose-charge_card").touch()
        (tmp_path / "fail-get_charge").touch()
        waiting = _in_doubt(agent)
        evidence = waiting.evidence
        assert evidence is not None
        assert evidence.text == (
            "get_charge could not be asked: RuntimeError: the ledger service is down"
        )
        assert (evidence.found, evidence.error) == (
            None,
            "RuntimeError: the ledger service is down",
        )
        assert waiting.answers == tuple(texts.OUTCOME_ANSWERS)
        probe = next(c for c in agent.record("u") if c.kind == "probe")
        assert (probe.status, probe.error) == ("failed", evidence.error)
        assert agent.answer_current("u", "happened").state == "done"


def test_a_probe_that_times_out_is_shown_as_such(tmp_path: Path) -> None:
    project = write_probe_project(tmp_path)
    with project.agent() as agent:
        (tmp_path / "lose-charge_card").touch()
        (tmp_path / "hang-get_charge").touch()
        evidence = _in_doubt(agent).evidence
        assert evidence is not None
        assert evidence.text == (
            "get_charge could not be asked: TimeoutError: "
            "get_charge took longer than its timeout of 0.5 seconds"
        )
        assert evidence.found is None


@pytest.mark.parametrize("flag", [None, "fail-charge_card"])
def test_a_probe_is_never_asked_when_the_outcome_is_not_in_doubt(
    tmp_path: Path, flag: str | None
) -> None:
    project = write_probe_project(tmp_path)
    if flag is not None:
        (tmp_path / flag).touch()  # a plain failure: the tool said what happened
    with project.agent() as agent:
        asked = agent.chat(TURN, user="u")
        reply = agent.confirm("u", "approve", question=asked.waiting[0])
        assert reply.state == ("done" if flag is None else "rolled_back")
        assert probes_asked(tmp_path) == []
        assert [c.kind for c in agent.record("u")] == ["write"]


def test_a_probe_declared_in_the_decorator_binds_by_name_and_takes_the_key(
    tmp_path: Path,
) -> None:
    source = PROBE_TOOLS.replace(
        '@tool(writes=True, undo="refund_card")',
        '@tool(writes=True, undo="refund_card", probe="find_charge")',
    ) + (
        "\n\n@tool\n"
        "def find_charge(order: int, idempotency_key: str) -> list:\n"
        '    """Find the charges of an order under a key."""\n'
        "    found = _charges().get(idempotency_key)\n"
        '    return [found["charge"], "ch_7"] if found else []\n'
    )
    project = write_project_with(tmp_path, source, ["charge_card", "refund_card", "find_charge"])
    with project.agent() as agent:
        (tmp_path / "lose-charge_card").touch()
        evidence = _in_doubt(agent).evidence
        assert evidence is not None
        assert (
            evidence.text
            == "find_charge found 2 results: ch_19; ch_7 for order 4411 under this key"
        )
        assert evidence.args == {"order": 4411}


def write_project_with(folder: Path, source: str, names: list[str]) -> Any:
    from conftest import write_project

    return write_project(folder, tools_source=source, tool_names=names)


# --- checked at registration ---


@pytest.mark.parametrize(
    ("probe", "expected"),
    [
        (
            "get_chrge",
            "charge_card's probe names 'get_chrge', which no tool source provides "
            "(did you mean 'get_charge'?)",
        ),
        (
            "refund_card",
            "charge_card's probe refund_card is a write; a probe must be a read, since it is "
            "asked while nobody knows whether charge_card took effect and must change nothing",
        ),
        (
            "{tool: get_charge, args: {order: $args.order, charge: $key}}",
            "charge_card's probe binds 'charge', which get_charge does not take "
            "(it takes order, key)",
        ),
        (
            "{tool: get_charge, args: {order: $args.amount, key: $key}}",
            "charge_card's probe binds get_charge's 'order' to $args.amount, which is not an "
            "argument of charge_card",
        ),
        (
            "get_charge",
            "charge_card's probe get_charge takes 'key', which nothing binds: charge_card has "
            "no argument of that name; bind it: probe: {tool: get_charge, args: {key: "
            "$args.<name> or $key}}",
        ),
        (
            "{tool: get_charge, args: {order: $result.order, key: $key}}",
            "probe 'get_charge': argument 'order' is bound to '$result.order'; "
            "expected '$args.<name>' or '$key'",
        ),
    ],
)
def test_agent_yaml_refuses_a_probe_that_cannot_be_asked(
    tmp_path: Path, probe: str, expected: str
) -> None:
    write_probe_project(tmp_path, facts=f"  - charge_card:\n      probe: {probe}\n")
    with pytest.raises(ConfigError) as refused:
        load_project(tmp_path / "agent.yaml")
    assert refused.value.code == "config_error"
    assert refused.value.key_path == "tools[1].charge_card.probe"
    assert refused.value.expected == expected


def test_a_probe_said_under_a_read_is_refused(tmp_path: Path) -> None:
    write_probe_project(tmp_path, facts="  - get_charge: {probe: get_charge}\n")
    with pytest.raises(ConfigError) as refused:
        load_project(tmp_path / "agent.yaml")
    assert refused.value.expected == texts.probe_on_a_read("get_charge")


def test_the_decorator_refuses_a_probe_on_a_read_and_a_bad_binding() -> None:
    with pytest.raises(ToolDefinitionError) as on_read:

        @tool(probe="get_charge")
        def look(order: int) -> None:
            """Look."""

    assert on_read.value.code == "tool_definition"
    assert str(on_read.value) == texts.probe_on_a_read("look")
    with pytest.raises(ToolDefinitionError, match=r"expected '\$args.<name>' or '\$key'"):

        @tool(writes=True, probe={"tool": "get_charge", "args": {"key": "key"}})
        def pay(order: int) -> None:
            """Pay."""

    @tool(writes=True, probe={"tool": "get_charge", "args": {"key": "$key"}})
    def pay_ok(order: int) -> None:
        """Pay."""

    spec = spec_of(pay_ok)
    assert spec is not None
    assert spec.probe == ProbeSpec("get_charge", {"key": "$key"})


# --- linted ---


def test_the_lints_name_a_probe_the_agent_cannot_call_and_a_path_its_schema_lacks(
    tmp_path: Path,
) -> None:
    source = PROBE_TOOLS.replace(
        "def charge_card(order: int, idempotency_key: str)",
        "def charge_card(order: int, idempotency_key: str, card: Card)",
    ).replace("HERE = Path", "class Card(TypedDict):\n    number: str\n\n\nHERE = Path")
    source = "from typing_extensions import TypedDict\n" + source
    from conftest import write_project

    write_project(
        tmp_path,
        tools_source=source,
        tool_names=["charge_card", "refund_card"],
        facts=(
            "  - charge_card:\n"
            "      probe: {tool: get_charge, args: {order: $args.card.order.id, key: $key}}\n"
        ),
    )
    result = CliRunner().invoke(main, ["lint", str(tmp_path / "agent.yaml")])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert (
        "charge_card: probe_out_of_reach: agent 'keeper' can call it but not 'get_charge', "
        "its probe, so when its outcome is in doubt that agent's person is shown no evidence"
    ) in lines
    assert (
        "charge_card: probe_binding_not_in_schema: its probe's order <- $args.card.order.id, "
        "which its schema does not have"
    ) in lines


def test_a_probe_the_agent_does_not_list_is_shown_as_not_asked(tmp_path: Path) -> None:
    from conftest import write_project

    write_project(
        tmp_path,
        tools_source=PROBE_TOOLS,
        tool_names=["charge_card", "refund_card"],
        facts=PROBE_FACTS,
    )
    with Agent.from_file(tmp_path / "agent.yaml") as agent:
        (tmp_path / "lose-charge_card").touch()
        evidence = _in_doubt(agent).evidence
        assert evidence is not None
        assert evidence.text == "get_charge could not be asked: this agent does not list it"
        assert probes_asked(tmp_path) == []
