"""docs/turns.md (issue 29, point 5) cannot drift: every example in the guide is run.

The guide's desk is its own files (`<!-- file: NAME -->` before a code block), written to
a folder and loaded as any agent.yaml is; each table after `<!-- read -->` is turns and
the steps they are read as, each after `<!-- refused -->` turns and why they are not read;
each console block after `<!-- explain -->` is a `stalwart explain` and its output.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from stalwart import Agent
from stalwart.cli import main
from stalwart.config import load_agent
from stalwart.selector import Reading, read_turn
from stalwart.tools.sources import unload_python_sources

pytestmark = pytest.mark.unit

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "turns.md"
_MARKED_BLOCK = re.compile(r"<!-- (?P<mark>[^>]*?) -->\n```[a-z]*\n(?P<body>.*?)```", re.DOTALL)
_MARKED_TABLE = re.compile(
    r"<!-- (?P<mark>read|refused)(?:: (?P<desk>\S+))? -->\n(?P<table>(?:\|.*\n)+)"
)
_CELL = re.compile(r"`([^`]*)`")


def _guide() -> str:
    return GUIDE.read_text(encoding="utf-8")


def _blocks(mark: str) -> list[str]:
    return [m["body"] for m in _MARKED_BLOCK.finditer(_guide()) if m["mark"] == mark]


def _rows(mark: str) -> Iterator[tuple[str, str, list[str]]]:
    """Each row of the tables so marked: the desk it is read on (agent.yaml unless the
    mark names another), its turn and the code spans of its second cell."""
    for table in _MARKED_TABLE.finditer(_guide()):
        if table["mark"] != mark:
            continue
        for line in table["table"].splitlines()[2:]:
            turn_cell, said_cell = line.strip().strip("|").split(" | ")
            (turn,) = _CELL.findall(turn_cell)
            yield table["desk"] or "agent.yaml", turn, _CELL.findall(said_cell)


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("guide")
    for block in _MARKED_BLOCK.finditer(_guide()):
        if block["mark"].startswith("file: "):
            (folder / block["mark"].removeprefix("file: ")).write_text(block["body"])
    yield folder / "agent.yaml"
    unload_python_sources(folder, ["bank", "carteira"])


def _shown(reading: Reading) -> list[str]:
    return [
        f"{step.tool}({', '.join(f'{name}={value}' for name, value in step.args.items())})"
        for step in reading.steps
    ]


def test_the_guide_has_its_desk_and_enough_examples() -> None:
    marks = {m["mark"] for m in _MARKED_BLOCK.finditer(_guide())}
    assert {"file: bank.py", "file: agent.yaml", "file: phrased.yaml", "explain"} <= marks
    assert {yaml for yaml, _, _ in _rows("read")} == {"agent.yaml", "phrased.yaml", "carteira.yaml"}
    assert len(list(_rows("read"))) >= 8
    assert len(list(_rows("refused"))) >= 15


def test_each_turn_the_guide_says_is_read_gives_its_steps(desk: Path) -> None:
    for yaml, turn, steps in _rows("read"):
        agent = load_agent(desk.parent / yaml)
        reading = read_turn(turn, list(agent.tools.values()), agent.languages)
        assert reading.read, (turn, reading.reason)
        assert _shown(reading) == steps, turn


def test_each_turn_the_guide_says_is_refused_is_so_for_its_reason(desk: Path) -> None:
    for yaml, turn, (reason,) in _rows("refused"):
        agent = load_agent(desk.parent / yaml)
        reading = read_turn(turn, list(agent.tools.values()), agent.languages)
        assert (reading.steps, reading.reason) == ((), reason), turn


def test_each_explain_in_the_guide_prints_what_it_shows(desk: Path) -> None:
    blocks = _blocks("explain")
    assert blocks
    for block in blocks:
        command, *output = block.splitlines()
        program, verb, yaml, turn = shlex.split(command.removeprefix("$ "))
        assert (program, verb, yaml) == ("stalwart", "explain", "agent.yaml")
        result = CliRunner().invoke(main, ["explain", str(desk), turn])
        assert result.stdout.splitlines() == output
        assert result.exit_code == (0 if output[-1].startswith("The turn reads as") else 1)


def test_the_guides_python_example_is_what_agent_explain_returns(desk: Path) -> None:
    with Agent.from_file(desk) as agent:
        explanation = agent.explain("transfer 25.00 from alice to bob")
    shown = [
        (c.tool, [(a.name, str(a.value), a.words) for a in c.arguments])
        for c in explanation.clauses
    ]
    assert shown == [
        (
            "transfer",
            [
                ("source", "alice", "from alice"),
                ("target", "bob", "to bob"),
                ("amount", "25.00", "25.00"),
            ],
        )
    ]
    assert "('amount', Decimal('25.00'), '25.00')" in _guide()
