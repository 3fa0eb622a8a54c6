"""A turn the selector refused shows, under its reply, how it is read clause by clause,
as `stalwart explain` prints it (issue 29, point 3): the page, without script."""

from __future__ import annotations

import html

import pytest
from fastapi.testclient import TestClient

from stalwart.serve.service import Service
from stalwart.serve.views import snapshot
from stalwart.texts import serve as serve_texts

from .test_serve_pages import csrf_of, login_form

pytestmark = pytest.mark.integration

REFUSED = "update the crm for order 4411, but don't refund order 4411 40.00"


def test_a_refused_turn_shows_how_it_is_read_under_its_reply(
    client: TestClient, service: Service
) -> None:
    login_form(client, "alice")
    csrf = csrf_of(client.get("/s/alice~s-why").text)
    client.post("/s/alice~s-why/turn", data={"csrf": csrf, "text": REFUSED})
    page = html.unescape(client.get("/s/alice~s-why").text)
    shown = service.agent.explain(REFUSED).clause_lines()
    assert shown == [
        '1. "update the crm for order 4411" reads as update_crm',
        '   order = 4411, from "order 4411" (by name)',
        '2. "don\'t refund order 4411 40.00" is not read: it says not to: "don\'t"',
    ]
    assert f"<summary>{serve_texts.HOW_READ}</summary><pre>" + "\n".join(shown) in page
    (turn,) = snapshot(service.agent, "alice~s-why", "alice").turns
    assert turn.reading == tuple(shown)


def test_a_turn_read_into_steps_has_no_reading_shown(client: TestClient, service: Service) -> None:
    login_form(client, "alice")
    csrf = csrf_of(client.get("/s/alice~s-fine").text)
    client.post("/s/alice~s-fine/turn", data={"csrf": csrf, "text": "get order 4411"})
    page = html.unescape(client.get("/s/alice~s-fine").text)
    assert serve_texts.HOW_READ not in page
    assert all(not t.reading for t in snapshot(service.agent, "alice~s-fine", "alice").turns)
