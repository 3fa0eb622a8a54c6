"""`stalwart.testing`, used as a user would: a small agent of their own (its agent.yaml, its
tools writing a real file), tested through the public API only, on a real SQLite record.

No import here reaches past `stalwart` and `stalwart.testing`: the point is that a user
needs nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from stalwart import Agent, ModelError, ProviderFailure, ScriptExhausted
from stalwart.testing import (
    FAST_MODEL_BACKOFF,
    FAST_UNDO_BACKOFF,
    STEADY_UNDO_BACKOFF,
    FakeClock,
    ScriptedModel,
    ask,
    call,
    say,
)

pytestmark = pytest.mark.unit

# The user's own tools: a lending desk whose shelf is a JSON file beside agent.yaml.
TOOLS = '''
import json
import pathlib

from stalwart import tool

SHELF = pathlib.Path(__file__).resolve().parent / "shelf.json"


def _shelf() -> dict:
    return json.loads(SHELF.read_text())


def _keep(shelf: dict) -> None:
    SHELF.write_text(json.dumps(shelf))


@tool
def find_book(title: str) -> dict:
    """Find a book on the shelf by its title."""
    return {"title": title, "lent_to": _shelf()[title]}


@tool(writes=True, undo="return_book")
def lend_book(title: str, reader: str) -> dict:
    """Lend a book to a reader."""
    shelf = _shelf()
    shelf[title] = reader
    _keep(shelf)
    return {"title": title, "reader": reader}


@tool(writes=True, retry_safe=True)
def return_book(title: str) -> dict:
    """Put a lent book back on the shelf."""
    if (SHELF.parent / "returns-broken").exists():
        raise RuntimeError("the returns desk is closed")
    shelf = _shelf()
    shelf[title] = None
    _keep(shelf)
    return {"title": title}


@tool(writes=True, irreversible=True)
def mail_reader(reader: str, title: str) -> dict:
    """Send a reader a letter about a book."""
    raise RuntimeError("the post office is closed")
'''


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    module = f"lending_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(TOOLS)
    (tmp_path / "shelf.json").write_text(json.dumps({"Dune": None}))
    (tmp_path / "agent.yaml").write_text(
        "agents:\n"
        "  librarian:\n"
        "    tools: [find_book, lend_book, return_book, mail_reader]\n"
        "    on_unread: model\n"
        "tools:\n"
        f"  - python: {module}\n"
        "record: record.sqlite\n"
        "runs: atomic\n"
    )
    return tmp_path


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def opened() -> Iterator[list[Agent]]:
    agents: list[Agent] = []
    yield agents
    for agent in agents:
        agent.close()


def librarian(desk: Path, clock: FakeClock, model: ScriptedModel, agents: list[Agent]) -> Agent:
    agent = Agent.from_file(
        desk / "agent.yaml", clock=clock, model=model, undo_backoff=FAST_UNDO_BACKOFF
    )
    agents.append(agent)
    return agent


def shelf(desk: Path) -> dict[str, str | None]:
    loaded: dict[str, str | None] = json.loads((desk / "shelf.json").read_text())
    return loaded


def test_a_scripted_model_drives_the_users_agent_and_each_write_is_confirmed(
    desk: Path, clock: FakeClock, opened: list[Agent]
) -> None:
    model = ScriptedModel(
        [
            ask(call("find_book", title="Dune")),
            ask(call("lend_book", title="Dune", reader="ana")),
            say("Dune is lent to ana."),
        ],
        clock=clock,
    )
    agent = librarian(desk, clock, model, opened)

    reply = agent.chat("could ana borrow Dune, please?", user="ana")
    assert [w.kind for w in reply.waiting] == ["confirm"]
    assert reply.waiting[0].text.startswith('Run lend_book(title="Dune", reader="ana")?')
    assert shelf(desk) == {"Dune": None}  # nothing written before the person says so

    reply = agent.confirm("ana", "approve", question=reply.waiting[0])
    assert reply.text == "Dune is lent to ana."
    assert shelf(desk) == {"Dune": "ana"}
    assert model.remaining == 0
    # the model read find_book's result before it chose lend_book
    assert "lent_to" in str(model.requests[1].messages[-1])


def test_a_failed_run_is_undone_and_the_undo_retries_never_wait(
    desk: Path, clock: FakeClock, opened: list[Agent]
) -> None:
    model = ScriptedModel(
        [
            ask(
                call("lend_book", title="Dune", reader="ana"),
                call("mail_reader", reader="ana", title="Dune"),
            ),
            say("unused: the run stops before the model is asked again"),
        ],
        clock=clock,
    )
    agent = librarian(desk, clock, model, opened)
    reply = agent.chat("lend Dune to ana and write to her", user="ana")
    while reply.waiting:
        reply = agent.confirm("ana", "approve", question=reply.waiting[0])

    assert reply.text.startswith("This run stopped: mail_reader failed (RuntimeError).")
    assert "Undone, latest first: lend_book (by return_book)." in reply.text
    assert shelf(desk) == {"Dune": None}
    assert clock.slept == []


def test_an_undo_that_keeps_failing_asks_a_person_after_its_tries_on_the_fake_clock(
    desk: Path, clock: FakeClock, opened: list[Agent]
) -> None:
    (desk / "returns-broken").touch()
    model = ScriptedModel(
        [
            ask(
                call("lend_book", title="Dune", reader="ana"),
                call("mail_reader", reader="ana", title="Dune"),
            )
        ],
        clock=clock,
    )
    agent = Agent.from_file(
        desk / "agent.yaml", clock=clock, model=model, undo_backoff=STEADY_UNDO_BACKOFF
    )
    opened.append(agent)
    reply = agent.chat("lend Dune to ana and write to her", user="ana")
    while reply.waiting and reply.waiting[0].kind == "confirm":
        reply = agent.confirm("ana", "approve", question=reply.waiting[0])

    assert reply.waiting[0].text == (
        "Undoing lend_book failed after 4 tries (RuntimeError: the returns desk is closed). "
        "1 step(s) still need undoing."
    )
    assert clock.slept == [1.0, 2.0, 4.0]  # the schedule's ceilings, and no real second
    assert shelf(desk) == {"Dune": "ana"}


def test_a_rate_limited_model_is_asked_again_without_a_real_wait(
    desk: Path, clock: FakeClock, opened: list[Agent]
) -> None:
    model = ScriptedModel(
        [ProviderFailure(529, "Overloaded"), say("Dune is on the shelf.")],
        clock=clock,
        backoff=FAST_MODEL_BACKOFF,
    )
    agent = librarian(desk, clock, model, opened)
    reply = agent.chat("is Dune in?", user="ana")
    assert reply.text == "Dune is on the shelf."
    assert len(model.requests) == 2
    assert clock.slept == [0.0]


def test_a_script_that_runs_out_stops_the_run_saying_so(
    desk: Path, clock: FakeClock, opened: list[Agent]
) -> None:
    """A request past the script's end is `ScriptExhausted`, a model error: the run stops."""
    model = ScriptedModel([], clock=clock)
    agent = librarian(desk, clock, model, opened)
    reply = agent.chat("is Dune in?", user="ana")
    assert reply.text == (
        "This run stopped: the model scripted:model could not answer (ScriptExhausted: "
        "scripted:model: called 1 times; the script has no more). Nothing had been written, "
        "so nothing needed undoing."
    )
    assert issubclass(ScriptExhausted, ModelError)
