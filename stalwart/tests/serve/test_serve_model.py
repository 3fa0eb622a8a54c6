"""A model's step on the page: where each argument came from, shown beside it."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from stalwart.clock import FakeClock
from stalwart.models import AssistantMessage, Model, ScriptedAdapter
from stalwart.models.base import ToolCall
from stalwart.serve import Service, create_app

from .serve_support import InstantClock, sign_in, write_desk

pytestmark = pytest.mark.unit


def test_a_models_step_shows_where_each_argument_came_from(tmp_path: Path) -> None:
    desk = write_desk(tmp_path / "desk")
    desk.yaml.write_text(desk.yaml.read_text().replace("on_unread: refuse", "on_unread: model"))
    charge = ToolCall(id="c1", name="charge_card", arguments={"order": 4411, "amount": 12.5})
    adapter = ScriptedAdapter([AssistantMessage(text="", tool_calls=(charge,))], "scripted:desk")
    model = Model("scripted:desk", adapter, clock=FakeClock())
    svc = Service(desk.config(), clock=InstantClock(), secret=b"s", model=model)
    with TestClient(create_app(svc)) as client:
        headers = sign_in(client, "alice")
        reply = client.post(
            "/api/sessions/alice~s-model/turns",
            json={"text": "bill the customer of order 4411 what they owe"},
            headers=headers,
        ).json()
        question = reply["waiting"][0]
        assert question["tool"] == "charge_card"
        assert question["sources"] == {"order": "turn", "amount": "model"}
        assert question["text"].split("\n")[1] == (
            "Where the arguments came from: order from your turn, amount from the model alone."
        )
        page = client.get("/s/alice~s-model").text
        assert '<span class="source">from your turn</span>' in page
        assert '<span class="source">from the model alone</span>' in page
