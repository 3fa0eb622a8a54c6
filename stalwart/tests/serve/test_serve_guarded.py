"""A framework run's questions answered on the real pages in headless Chromium (Debian's,
through Playwright), and the run gone on by its application's `driver.continue_answered()`:
Pydantic AI, LangGraph and the OpenAI Agents SDK through their real packages, each agent's
model on the local wire stand-in of OpenAI's Chat Completions (the desks
test_adapters_contract.py builds), the interface served in this process on the same SQLite record.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from model_wire import WireServer
from pydantic_ai_desk import MODEL_TOOLS, pydantic_agent, text, tool_calls, write_desk

from stalwart import FakeClock, texts
from stalwart.config import load_agent
from stalwart.serve import Service
from stalwart.serve.users import Users

from .browser_support import Live, serve_in_thread
from .serve_support import InstantClock

ADAPTERS = ("pydantic_ai", "langgraph", "openai_agents")

pytestmark = [pytest.mark.acceptance, pytest.mark.browser]
playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect
expect.set_options(timeout=20_000)

PASSWORD = "u-pw"


@dataclass
class Guarded:
    """An adapter's desk: the stalwart agent, its tools module, the framework's driver."""

    name: str
    folder: Path
    wire: WireServer
    stalwart: Any
    module: Any
    driver: Any

    @property
    def calls(self) -> list[str]:
        return [name for name, *_ in self.module.CALLS]

    def tool_results(self, request: int) -> list[str]:
        body = self.wire.requests[request].body
        return [m["content"] for m in body["messages"] if m["role"] == "tool"]


class _OnThread:
    """The driver, every call of it on a thread of its own: Playwright's sync API runs an
    event loop on this one, where a driver's `*_sync` methods refuse to run theirs."""

    def __init__(self, driver: Any, pool: ThreadPoolExecutor) -> None:
        self._driver = driver
        self._pool = pool

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._driver, name)
        if not callable(found):
            return found

        def on_thread(*args: Any, **options: Any) -> Any:
            return self._pool.submit(found, *args, **options).result()

        return on_thread


@pytest.fixture
def wire() -> Iterator[WireServer]:
    server = WireServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _driver(name: str, stack: ExitStack, desk: Any, module: Any, url: str, folder: Path) -> Any:
    """The adapter's driver over `desk`, its model on the wire at `url` (as the contract's)."""
    if name == "pydantic_ai":
        from stalwart.adapters.pydantic_ai import StalwartDriver as PydanticDriver

        agent, client = pydantic_agent(desk, module, url)
        driver: Any = stack.enter_context(PydanticDriver(agent))
        stack.callback(lambda: driver._sync(client.close()))
        return driver
    if name == "langgraph":
        from langgraph_desk import checkpointer, langgraph_agent

        from stalwart.adapters.langgraph import StalwartDriver as GraphDriver

        saver = stack.enter_context(checkpointer(folder, "record.sqlite"))
        return GraphDriver(langgraph_agent(desk, module, url, saver))
    from agents import Agent, OpenAIChatCompletionsModel, set_tracing_disabled
    from openai import AsyncOpenAI

    from stalwart.adapters.openai_agents import StalwartDriver as AgentsDriver
    from stalwart.adapters.openai_agents import StalwartTools

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
    tools = StalwartTools(desk)
    sdk_agent: Agent[Any] = Agent(
        name="desk",
        model=OpenAIChatCompletionsModel(model="m", openai_client=client),
        tools=tools.tools(*(getattr(module, name) for name in MODEL_TOOLS)),
    )
    driver = stack.enter_context(AgentsDriver(sdk_agent, tools))
    stack.callback(lambda: driver._sync(client.close()))
    return driver


@pytest.fixture(params=ADAPTERS)
def guarded(request: pytest.FixtureRequest, tmp_path: Path, wire: WireServer) -> Iterator[Any]:
    """The adapter's desk on a SQLite record (the page's path is the same on either backend;
    test_adapters_answered.py runs both), built, driven and closed on a thread of its own."""
    name: str = request.param
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="driver")
    stack = ExitStack()

    def build() -> Guarded:
        project = write_desk(tmp_path)
        desk = project.agent(clock=FakeClock())
        stack.callback(desk.close)
        module = project.module
        driver = _driver(name, stack, desk, module, wire.url, project.folder)
        return Guarded(name, project.folder, wire, desk, module, driver)

    try:
        built = pool.submit(build).result()
        built.driver = _OnThread(built.driver, pool)
        yield built
    finally:
        pool.submit(stack.close).result()
        pool.shutdown()


@pytest.fixture
def page_of(guarded: Guarded, browser: Any) -> Iterator[tuple[Any, Live]]:
    """The interface on the adapter's own agent.yaml and record, `u` signed in."""
    yaml = guarded.folder / "agent.yaml"
    with yaml.open("a") as more:
        more.write("serve:\n  users: ./users.txt\n")
    Users(guarded.folder / "users.txt").set("u", PASSWORD)
    service = Service(load_agent(yaml), clock=InstantClock(), secret=b"test-secret",
                      run_threads=4, poll_secs=0.05)  # fmt: skip
    for live in serve_in_thread(service):
        context = browser.new_context(viewport={"width": 1100, "height": 820})
        page = context.new_page()
        page.goto(f"{live.url}/login")
        page.fill("input[name=user]", "u")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        expect(page.locator("h1")).to_have_text("Your sessions")
        try:
            yield page, live
        finally:
            context.close()


def _answer_on_page(page: Any, given: str) -> None:
    question = page.locator("#question")
    asked = question.get_attribute("data-question-id")
    question.locator(f'button[value="{given}"]').click()
    expect(page.locator(f'#question[data-question-id="{asked}"]')).to_have_count(0)


def _continued(guarded: Guarded) -> Any:
    """The application's worker: its next round once the page's answer is recorded (the
    interface records it on a run thread of its own, so this looks until it is there)."""
    deadline = time.monotonic() + 20
    while not guarded.driver.guard.answered_runs():
        assert time.monotonic() < deadline, "the page's answer never reached the record"
        time.sleep(0.02)
    (continued,) = guarded.driver.continue_answered()
    assert continued.error is None
    return continued.result


def test_approve_then_skip_on_the_page(
    guarded: Guarded, page_of: tuple[Any, Live], tmp_path: Path
) -> None:
    page, live = page_of
    guarded.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    asked = guarded.driver.run_sync("close order 4411 and hold its stock", user="u")
    page.goto(f"{live.url}/s/{asked.reply.session}")
    expect(page.locator("#question .asked")).to_have_text("Run close_order(order=4411)?")
    guarded.wire.enqueue_reply(tool_calls(("call_2", "hold_stock", {"order": 4411})))
    _answer_on_page(page, "approve")
    assert _continued(guarded).waiting[0].tool == "hold_stock"
    expect(page.locator("#question .asked")).to_have_text("Run hold_stock(order=4411)?")
    page.screenshot(path=tmp_path / f"guarded-{guarded.name}.png")
    guarded.wire.enqueue_reply(text("Closed; the stock is not held."))
    _answer_on_page(page, "skip")
    done = _continued(guarded)
    assert (done.state, done.text) == ("done", "Closed; the stock is not held.")
    expect(page.locator(".transcript .reply").last).to_have_text("Closed; the stock is not held.")
    assert guarded.calls == ["close_order"]  # sent once; the skipped one never
    assert guarded.tool_results(2)[-1] == texts.DECLINED_RESULT
    assert len(guarded.wire.requests) == 3
    assert guarded.driver.continue_answered() == []


def test_cancel_all_on_the_page_reaches_the_run_and_asks_no_model(
    guarded: Guarded, page_of: tuple[Any, Live]
) -> None:
    page, live = page_of
    guarded.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    asked = guarded.driver.run_sync("close order 4411 and hold its stock", user="u")
    page.goto(f"{live.url}/s/{asked.reply.session}")
    guarded.wire.enqueue_reply(tool_calls(("call_2", "hold_stock", {"order": 4411})))
    _answer_on_page(page, "approve")
    assert _continued(guarded).waiting[0].tool == "hold_stock"
    expect(page.locator("#question .asked")).to_have_text("Run hold_stock(order=4411)?")
    _answer_on_page(page, "cancel all")
    stopped = (
        "This run stopped: you cancelled it at hold_stock. "
        "Undone, latest first: close_order (by reopen_order)."
    )
    expect(page.locator(".transcript .reply").last).to_have_text(stopped)
    assert guarded.driver.guard.answered_runs() == []
    assert guarded.driver.continue_answered() == []
    assert guarded.calls == ["close_order", "reopen_order"]
    assert len(guarded.wire.requests) == 2  # none after cancel all
    reply = guarded.stalwart.pending("u")
    assert (reply.state, reply.text) == ("rolled_back", stopped)
