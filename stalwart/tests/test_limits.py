"""Bounded input (issue 11, point 5): documented limits, refused clearly, the same on both
backends, and nothing recorded.

On the main this was written against a 10,001-character turn and a turn of 26 steps were
read and run, a 400-digit decimal raised `UnkeyableArgument` out of `chat`, a 5,000-digit
integer a `ValueError` from the selector, and a NUL in a turn, a user or a session a raw
driver error on PostgreSQL while SQLite stored it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import write_project

from stalwart import Agent, FakeClock, InputRefused, limits
from stalwart.record import Store

MEASURES = """
from decimal import Decimal
from stalwart import tool

CALLS = []


@tool(writes=True, irreversible=True)
def weigh_parcel(order: int, kilos: Decimal) -> dict:
    CALLS.append(("weigh_parcel", {"order": order, "kilos": kilos}))
    return {"order": order}


@tool(writes=True, irreversible=True)
def paint_fence(order: int) -> dict:
    CALLS.append(("paint_fence", {"order": order}))
    return {"order": order}
"""


@pytest.fixture
def agent(tmp_path: Path, store: Store) -> Iterator[Agent]:
    project = write_project(tmp_path, tools_source=MEASURES,
                            tool_names=["weigh_parcel", "paint_fence"])  # fmt: skip
    with Agent.from_file(project.yaml, store=store, clock=FakeClock()) as opened:
        yield opened


def _refused(agent: Agent, act: Callable[[], object], match: str) -> None:
    before = agent.store.sessions_with_runs_in(["waiting", "done", "running"])
    with pytest.raises(InputRefused, match=match) as refused:
        act()
    assert refused.value.code == "input_refused"
    assert isinstance(refused.value, ValueError)
    assert agent.store.sessions_with_runs_in(["waiting", "done", "running"]) == before


def test_a_turn_past_its_length_or_its_steps_is_refused(agent: Agent) -> None:
    step = "paint the fence for order 1"
    longest = step + " " * (limits.MAX_TURN_CHARS - len(step))
    assert agent.chat(longest, user="u").waiting[0].tool == "paint_fence"
    agent.confirm_current("u", "skip")
    _refused(agent, lambda: agent.chat(longest + "x", user="v"), "10,001 characters long")
    many = ", then ".join([step] * (limits.MAX_STEPS_PER_TURN + 1))
    _refused(agent, lambda: agent.chat(many, user="v"), "asks for 26 steps; .* at most 25")
    assert agent.pending("v") is None


def test_a_number_of_too_many_digits_is_refused_before_it_is_read(agent: Agent) -> None:
    decimal = "1" * 400 + ".5"
    _refused(agent, lambda: agent.chat(f"weigh the parcel for order 1 {decimal} kilos",
                                       user="u"), "has 401 digits")  # fmt: skip
    integer = "7" * 5000
    _refused(agent, lambda: agent.chat(f"paint the fence for order {integer}", user="u"),
             "has 5,000 digits; a number in a turn has at most 30")  # fmt: skip
    widest = "9" * limits.MAX_NUMBER_DIGITS
    assert agent.chat(f"paint the fence for order {widest}", user="u").waiting[0].args == {
        "order": int(widest)
    }


@pytest.mark.parametrize("bad", ["\x00", "\ud800", "\udfff", "\x1b"])
def test_a_control_character_or_lone_surrogate_is_refused_on_both_backends(
    agent: Agent, bad: str
) -> None:
    code = f"U\\+{ord(bad):04X}"
    _refused(agent, lambda: agent.chat(f"paint the fence for order 1{bad}", user="u"), code)
    _refused(agent, lambda: agent.chat("paint the fence for order 1", user=f"u{bad}"), code)
    _refused(agent, lambda: agent.chat("paint the fence for order 1", user="u",
                                       session=f"s{bad}"), code)  # fmt: skip
    _refused(agent, lambda: agent.pending(f"u{bad}"), code)
    _refused(agent, lambda: agent.confirm_current("u", "approve", session=f"s{bad}"), code)


def test_names_are_bounded_and_not_empty(agent: Agent) -> None:
    _refused(agent, lambda: agent.chat("paint the fence for order 1", user=""), "non-empty")
    _refused(agent, lambda: agent.chat("paint the fence for order 1", user=" "), "non-empty")
    _refused(agent, lambda: agent.chat("paint the fence for order 1", user="u" * 201),
             "201 characters long; at most 200")  # fmt: skip
    _refused(agent, lambda: agent.chat("paint the fence for order 1", user=7),  # type: ignore[arg-type]
             "must be a text; got int")  # fmt: skip
    _refused(agent, lambda: agent.chat(" \n ", user="u"), "non-empty")


STALWART = str(Path(sys.executable).parent / "stalwart")


def test_the_cli_says_a_turn_is_too_long_and_goes_on(tmp_path: Path) -> None:
    project = write_project(tmp_path, tools_source=MEASURES,
                            tool_names=["weigh_parcel", "paint_fence"])  # fmt: skip
    typed = "paint the fence for order 1 " + "x" * limits.MAX_TURN_CHARS + "\n"
    typed += "paint the fence for order 2\ns"
    done = subprocess.run(
        [STALWART, "chat", str(project.yaml), "--user", "u"],
        input=typed, capture_output=True, text=True, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "input_refused: A turn is 10,028 characters long; at most 10,000 are taken." in (
        done.stdout
    )
    assert "Run paint_fence(order=2)?" in done.stdout
