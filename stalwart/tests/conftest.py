"""Shared fixtures: a record store, a fake clock, and small agents built in tmp_path."""

from __future__ import annotations

import sys
import types
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, settings
from pg_fixtures import BACKENDS, pg_server, pg_url, skipped_because  # noqa: F401
from pg_fixtures import pytest_terminal_summary as postgres_summary

from stalwart import Agent, Reply
from stalwart.backoff import UNDO_BACKOFF, no_jitter
from stalwart.clock import FakeClock
from stalwart.record import Store, open_store

# No test is timed (speed is for benchmarks/): hypothesis neither sets a deadline nor calls an
# input "too slow", which a busy machine turns into failures that say nothing of the code.
settings.register_profile("stalwart", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("stalwart")

TIERS = ("unit", "integration", "acceptance")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test module that names no tier (pytestmark) is an integration test, and so is the
    PostgreSQL case of a unit module's test: both are left out of `make test-fast-stalwart`."""
    for item in items:
        if (
            not any(item.get_closest_marker(tier) for tier in TIERS)
            or item.get_closest_marker("postgres")
            and item.get_closest_marker("unit")
        ):
            item.add_marker(pytest.mark.integration)


# --- the end of the run under pytest-xdist (`make test-stalwart`): the tests run in workers,
# each with its own PostgreSQL server and tmp_path, and the controller, which runs none, prints
# the summary; so each worker hands it what its tests noted: why PostgreSQL tests were skipped,
# the screenshots the browser tests took.

WORKER_SKIPPED = "stalwart_pg_skipped"
WORKER_SCREENSHOTS = "stalwart_screenshots"
screenshots_from_workers: list[str] = []


def _screenshots_taken() -> list[str]:
    """The screenshots this process's browser tests took (none if none of them ran here)."""
    taken = sys.modules.get("serve.browser_support")
    return [str(path) for path in taken.WRITTEN] if taken is not None else []


def pytest_sessionfinish(session: pytest.Session) -> None:
    output: dict[str, Any] | None = getattr(session.config, "workeroutput", None)
    if output is not None:  # in a worker: sent to the controller as the worker finishes
        output[WORKER_SKIPPED] = list(skipped_because)
        output[WORKER_SCREENSHOTS] = _screenshots_taken()


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook, unknown to a run without it
def pytest_testnodedown(node: Any, error: object) -> None:
    output: dict[str, Any] = getattr(node, "workeroutput", {})
    for reason in output.get(WORKER_SKIPPED, []):
        if reason not in skipped_because:  # every worker's server failed the same way
            skipped_because.append(reason)
    screenshots_from_workers.extend(output.get(WORKER_SCREENSHOTS, []))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    postgres_summary(terminalreporter)
    screenshots = _screenshots_taken() + screenshots_from_workers
    if screenshots:  # where the browser tests' screenshots are
        from serve.browser_support import artefacts_folder

        terminalreporter.write_line(
            f"stalwart serve: {len(screenshots)} screenshots in {artefacts_folder()}"
        )


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh, empty record, once per backend (SQLite, PostgreSQL: see pg_fixtures.py)."""
    if request.param == "postgres":
        opened = open_store(request.getfixturevalue("pg_url"))
    else:
        opened = open_store(str(tmp_path / "record.sqlite"))
    yield opened
    opened.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


# --- small agents in tmp_path: a real agent.yaml, a real tools module, a real record ---

GARDEN_TOOLS = '''
"""A garden's tools: every call is listed in CALLS; a tool named in FAIL raises."""

from stalwart import tool

CALLS: list[tuple[str, dict]] = []
FAIL: set[str] = set()


def _call(name, **args):
    CALLS.append((name, args))
    if name in FAIL:
        raise RuntimeError(f"{name} is out of order")


@tool
def count_apples(order: int) -> dict:
    """Count the apples of an order."""
    _call("count_apples", order=order)
    return {"order": order, "apples": 7}


@tool(writes=True, undo="unpaint_fence")
def paint_fence(order: int) -> dict:
    """Paint the fence for an order."""
    _call("paint_fence", order=order)
    return {"order": order, "colour": "green"}


@tool(writes=True)
def unpaint_fence(order: int, colour: str) -> dict:
    """Strip the paint off the fence."""
    _call("unpaint_fence", order=order, colour=colour)
    return {"order": order, "stripped": colour}


@tool(writes=True, undo="unplant_tree")
def plant_tree(order: int) -> dict:
    """Plant a tree for an order."""
    _call("plant_tree", order=order)
    return {"order": order, "hole": f"h{order}"}


@tool(writes=True)
def unplant_tree(order: int, hole: str) -> dict:
    """Dig a planted tree out of its hole."""
    _call("unplant_tree", order=order, hole=hole)
    return {"order": order, "filled": hole}


@tool(writes=True, irreversible=True)
def ring_bell(order: int) -> dict:
    """Ring the bell for an order."""
    _call("ring_bell", order=order)
    return {"order": order, "rung": True}


@tool(writes=True)
def water_lawn(order: int) -> dict:
    """Water the lawn for an order."""
    _call("water_lawn", order=order)
    return {"order": order, "litres": 5}
'''

GARDEN_TOOL_NAMES = [
    "count_apples",
    "paint_fence",
    "unpaint_fence",
    "plant_tree",
    "unplant_tree",
    "ring_bell",
    "water_lawn",
]


@dataclass
class Project:
    """An agent.yaml, its tools module and its record, in one tmp folder."""

    folder: Path
    module: types.ModuleType | None = None
    agents: list[Agent] = field(default_factory=list)

    @property
    def yaml(self) -> Path:
        return self.folder / "agent.yaml"

    def agent(self, **options: Any) -> Agent:
        # the waits a test sees are the schedule's ceilings, not random draws
        options.setdefault("undo_backoff", replace(UNDO_BACKOFF, jitter=no_jitter))
        opened = Agent.from_file(self.yaml, **options)
        self.agents.append(opened)
        name = next(iter(opened.config.project.modules))
        self.module = sys.modules[name]
        return opened

    @property
    def calls(self) -> list[tuple[str, dict[str, Any]]]:
        assert self.module is not None
        calls: list[tuple[str, dict[str, Any]]] = self.module.CALLS
        return calls

    @property
    def fail(self) -> set[str]:
        assert self.module is not None
        fail: set[str] = self.module.FAIL
        return fail


def write_project(
    folder: Path,
    *,
    tools_source: str = GARDEN_TOOLS,
    tool_names: list[str] | None = None,
    rulebook: str = "",
    facts: str = "",
    record: str = "record.sqlite",
    on_unread: str = "refuse",
) -> Project:
    """Write a project whose tools module has a name no other test uses."""
    module = f"garden_{uuid.uuid4().hex[:12]}"
    (folder / f"{module}.py").write_text(tools_source)
    (folder / "policy.co").write_text(rulebook)
    names = ", ".join(tool_names or GARDEN_TOOL_NAMES)
    (folder / "agent.yaml").write_text(
        "agents:\n"
        "  keeper:\n"
        f"    tools: [{names}]\n"
        f"    on_unread: {on_unread}\n"
        "tools:\n"
        f"  - python: {module}\n"
        f"{facts}"
        "rulebook: ./policy.co\n"
        f"record: {record}\n"
    )
    return Project(folder)


@pytest.fixture(params=BACKENDS)
def record(request: pytest.FixtureRequest) -> str:
    """agent.yaml's `record:`: a SQLite file beside it, or a fresh PostgreSQL database."""
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_url"))
    return "record.sqlite"


class ServiceProject(NamedTuple):
    """The service's project (tests/service.py) on `record`, its first agent (on the test's
    `clock`), and its tools module: `PLAN` scripts each send, `CALLS` lists them."""

    project: Project
    agent: Agent
    module: Any


@pytest.fixture
def service_project(tmp_path: Path, record: str, clock: FakeClock) -> Iterator[ServiceProject]:
    """The service's project once per backend; every agent opened on it is closed after."""
    from service import write_service_project  # service.py builds on write_project, above

    project = write_service_project(tmp_path, record=record)
    agent = project.agent(clock=clock)
    assert project.module is not None
    yield ServiceProject(project, agent, project.module)
    for opened in project.agents:
        opened.close()


@pytest.fixture
def garden(tmp_path: Path, clock: FakeClock) -> Iterator[tuple[Project, Agent]]:
    """The garden project and its agent, on a real SQLite record, with a fake clock."""
    project = write_project(tmp_path)
    agent = project.agent(clock=clock)
    yield project, agent
    for opened in project.agents:
        opened.close()


def approve_all(agent: Agent, turn: str, user: str) -> Reply:
    reply = agent.chat(turn, user=user)
    while reply.waiting and reply.waiting[0].kind == "confirm":
        reply = agent.confirm(user, "approve", question=reply.waiting[0])
    return reply


def session_identity(store: Store, session: str) -> str:
    """The random identity a session was recorded with: its part of every key it makes."""
    record = store.load(session)
    assert record is not None and record.session.identity is not None
    return record.session.identity
