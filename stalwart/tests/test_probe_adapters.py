"""A write's probe through a foreign framework (issue 32): the Pydantic AI adapter reaches the
outcome question through `stalwart.guarded`, and the probe agent.yaml declares for the write
is asked there too, before the person, its evidence shown with the question the driver
returns. The Pydantic AI agent runs on a local stand-in of the OpenAI wire; the charge goes
to a local service that resets the connection after charging."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from http_faults import charging_server
from model_wire import WireServer
from pydantic_ai_desk import any_address, loopback_only, pydantic_agent, tool_calls, write_desk

from stalwart import FakeClock
from stalwart.adapters.pydantic_ai import StalwartDriver

pytestmark = pytest.mark.integration

PROBE = "  - charge_card:\n      probe: get_order\n"


@pytest.fixture
def wire() -> Iterator[WireServer]:
    loopback_only()
    server = WireServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
        any_address()


def test_the_pydantic_ai_adapter_shows_the_probes_evidence_under_the_outcome_question(
    tmp_path: Path, wire: WireServer
) -> None:
    project = write_desk(tmp_path, facts=PROBE)
    desk = project.agent(clock=FakeClock())
    agent, client = pydantic_agent(desk, project.module, wire.url)
    driver: StalwartDriver[str] = StalwartDriver(agent)
    try:
        with charging_server("reset") as service:
            (tmp_path / "service.url").write_text(service.url)
            wire.enqueue_reply(tool_calls(("call_1", "charge_card", {"order": 4411, "amount": 40})))
            asked = driver.run_sync("charge 4411", user="u")
            while asked.waiting and asked.waiting[0].kind == "confirm":
                asked = driver.confirm_sync("u", "approve", question=asked.waiting[0])
            [waiting] = asked.waiting
            assert waiting.kind == "outcome"
            assert waiting.text == (
                "Did charge_card take effect? The call was sent and no answer came back."
            )
            assert waiting.evidence is not None
            assert waiting.evidence.text == (
                "get_order found amount 40.0, order 4411 for order 4411"
            )
            assert len(service.charges) == 1  # the write was sent once; only the probe after it
            calls = [(c.kind, c.tool, c.status) for c in desk.record("u")]
            assert calls == [("write", "charge_card", "in_doubt"), ("probe", "get_order", "ran")]
            stopped = driver.answer_sync("u", "happened", question=waiting)
        assert stopped.state != "waiting"
    finally:
        driver._sync(client.close())
        driver.close()
        desk.close()
