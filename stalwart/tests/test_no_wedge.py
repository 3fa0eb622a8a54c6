"""No wedged session: whatever a tool answers or raises, and whatever a model asks for,
the call becomes a recorded outcome and the run goes on by the chapter's rules.

Before, a result the record could not keep (or an error text it could not keep) escaped
after the send with the run still in flight, and every later access of the session sent
the call again and raised again. Real runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, write_project
from model_shop import Shop, scripted, write_shop

from stalwart import Agent, FakeClock
from stalwart.models import Model, ScriptedAdapter
from stalwart.record import Store

ODD_TOOLS = '''
from stalwart import tool

CALLS = []
FAIL = set()
ANSWER = {}
RAISE = {}


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no text")


def _answer(name):
    CALLS.append((name, {}))
    if name in RAISE:
        raise RAISE[name]
    return ANSWER[name]


@tool
def read_meter(order: int) -> dict:
    """Read the meter of an order."""
    return _answer("read_meter")


@tool(writes=True, undo="unset_dial")
def set_dial(order: int) -> dict:
    """Set the dial of an order."""
    return _answer("set_dial")


@tool(writes=True, retry_safe=True)
def unset_dial(order: int) -> dict:
    """Unset the dial of an order."""
    CALLS.append(("unset_dial", {"order": order}))
    return {"order": order, "unset": True}


@tool(writes=True)
def ring_bell(order: int) -> dict:
    """Ring the bell for an order."""
    return _answer("ring_bell")
'''
NAMES = ["read_meter", "set_dial", "unset_dial", "ring_bell"]


def _circular() -> Any:
    loop: dict[str, Any] = {"order": 1}
    loop["self"] = loop
    return loop


UNRECORDABLE = {
    "tuple keys": {("a", 1): "x"},
    "circular": _circular(),
    "int too long to print": {"n": 10**5000},
}
# What the encoder says of each, inside the failed run's reply.
WHY = {
    "tuple keys": "TypeError: keys must be str, int, float, bool or None, not tuple",
    "circular": "ValueError: Circular reference detected",
    "int too long to print": "ValueError: Exceeds the limit (4300 digits) for integer string "
    "conversion; use sys.set_int_max_str_digits() to increase the limit",
}


@pytest.fixture
def odd(tmp_path: Path, store: Store) -> Iterator[tuple[Project, Agent, Any]]:
    project = write_project(tmp_path, tools_source=ODD_TOOLS, tool_names=NAMES)
    agent = project.agent(clock=FakeClock(), store=store)
    yield project, agent, project.module
    for opened in project.agents:
        opened.close()


def _tools_sent(module: Any) -> list[str]:
    return [name for name, _ in module.CALLS]


@pytest.mark.parametrize("answer", sorted(UNRECORDABLE))
def test_a_read_whose_result_cannot_be_recorded_fails_the_step_once(
    odd: tuple[Project, Agent, Any], answer: str
) -> None:
    _, agent, module = odd
    module.ANSWER["read_meter"] = UNRECORDABLE[answer]
    reply = agent.chat("read the meter for order 1", user="u")
    assert reply.state == "rolled_back"
    assert reply.text == (
        "This run stopped: read_meter returned a value the record cannot hold exactly "
        f"(it cannot be written as JSON ({WHY[answer]})). "
        "Nothing had been written, so nothing needed undoing."
    )
    [call] = agent.record("u")
    assert (call.status, call.result) == ("ran", None)
    assert call.error == f"NotRecordable: it cannot be written as JSON ({WHY[answer]})"
    # The session is not wedged: the next access sends nothing again.
    assert agent.pending("u") == reply
    module.ANSWER["read_meter"] = {"order": 2, "reading": 7}
    assert agent.chat("read the meter for order 2", user="u").state == "done"
    assert _tools_sent(module) == ["read_meter", "read_meter"]


def test_a_write_whose_result_cannot_be_recorded_took_effect_and_is_undone(
    odd: tuple[Project, Agent, Any],
) -> None:
    _, agent, module = odd
    module.ANSWER["set_dial"] = UNRECORDABLE["circular"]
    reply = agent.chat("set the dial for order 3", user="u")
    reply = agent.confirm_current("u", "approve")
    assert reply.state == "rolled_back"
    assert reply.text == (
        "This run stopped: set_dial returned a value the record cannot hold exactly "
        f"(it cannot be written as JSON ({WHY['circular']})). "
        "Undone, latest first: set_dial (by unset_dial)."
    )
    assert _tools_sent(module) == ["set_dial", "unset_dial"]
    write = agent.record("u")[0]
    assert (write.status, write.result) == ("ran", None)


ODD_ERRORS = {
    "lone surrogate": (RuntimeError("bad \udc80 byte"), "RuntimeError: bad \ufffd byte"),
    "NUL": (RuntimeError("nul\x00here"), "RuntimeError: nul\ufffdhere"),
}


@pytest.mark.parametrize("kind", sorted(ODD_ERRORS))
def test_an_error_text_no_record_can_keep_is_kept_readable(
    odd: tuple[Project, Agent, Any], kind: str
) -> None:
    _, agent, module = odd
    error, shown = ODD_ERRORS[kind]
    module.RAISE["read_meter"] = error
    reply = agent.chat("read the meter for order 1", user="u")
    assert reply.state == "rolled_back"
    assert reply.text.startswith("This run stopped: read_meter failed (RuntimeError).")
    [call] = agent.record("u")
    assert (call.status, call.error) == ("failed", shown)
    assert agent.pending("u") == reply


def test_an_error_whose_text_raises_is_named_by_its_class(
    odd: tuple[Project, Agent, Any],
) -> None:
    _, agent, module = odd
    module.RAISE["ring_bell"] = module.Unprintable()
    agent.chat("ring the bell for order 1", user="u")
    reply = agent.confirm_current("u", "approve")
    assert reply.state == "rolled_back"
    assert reply.text == (
        "This run stopped: ring_bell failed (Unprintable). "
        "Nothing had been written, so nothing needed undoing."
    )
    [call] = agent.record("u")
    assert (call.status, call.error) == ("failed", "Unprintable")


def test_a_model_tool_call_with_nan_is_refused_back_to_the_model(tmp_path: Path) -> None:
    shop: Shop = write_shop(tmp_path)
    clock = FakeClock()
    nan_charge = ("c1", "charge_card", {"order": "4411", "amount": float("nan")})
    adapter = ScriptedAdapter(
        [scripted(calls=[nan_charge]), scripted("I could not charge it.")],
        selector="scripted:desk",
    )
    desk = shop.agent(clock=clock, model=Model("scripted:desk", adapter, clock=clock))
    reply = desk.chat("settle whatever order 4411 owes", user="u")
    while reply.waiting and reply.waiting[0].kind == "confirm":
        reply = desk.confirm_current("u", "approve")
    assert (reply.state, reply.text) == ("done", "I could not charge it.")
    [call] = desk.record("u")
    assert (call.tool, call.status) == ("charge_card", "refused")
    assert call.error == "charge_card is refused: its amount is nan, not text."
    assert shop.calls == []
    shop.close()
