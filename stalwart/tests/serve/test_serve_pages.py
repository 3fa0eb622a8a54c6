"""The pages, rendered by the server, read as a browser without JavaScript reads them."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from stalwart import texts

from .serve_support import FIRST_ORDER, PASSWORDS, SECOND_ORDER, Desk, sign_in

pytestmark = pytest.mark.unit


def login_form(client: TestClient, user: str) -> None:
    answer = client.post(
        "/login", data={"user": user, "password": PASSWORDS[user]}, follow_redirects=False
    )
    assert answer.status_code == 303, answer.text


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert found is not None
    return found.group(1)


def question_id_of(html: str) -> str:
    found = re.search(r'name="question_id" value="([^"]+)"', html)
    assert found is not None
    return found.group(1)


def test_signing_in_and_the_pages_behind_it(client: TestClient) -> None:
    assert client.get("/", follow_redirects=False).headers["location"] == "/login"
    wrong = client.post("/login", data={"user": "alice", "password": "no"})
    assert wrong.status_code == 401
    assert "do not match" in wrong.text
    login_form(client, "alice")
    home = client.get("/")
    assert "Your sessions" in home.text
    created = client.post("/new", data={"csrf": csrf_of(home.text)}, follow_redirects=False)
    assert created.headers["location"].startswith("/s/alice~s-")


def test_the_person_confirms_with_buttons_and_sees_the_irreversible_warning(
    client: TestClient, desk: Desk
) -> None:
    login_form(client, "alice")
    page = client.get("/s/alice~s-paper")
    csrf = csrf_of(page.text)
    sent = client.post(
        "/s/alice~s-paper/turn", data={"csrf": csrf, "text": SECOND_ORDER}, follow_redirects=False
    )
    assert (sent.status_code, sent.headers["location"]) == (303, "/s/alice~s-paper")
    page = client.get("/s/alice~s-paper")
    assert "Run charge_card(order=4411, amount=40.0)?" in page.text
    for answer in ("approve", "skip", "cancel all"):
        assert f'value="{answer}"' in page.text
    client.post("/s/alice~s-paper/answer", data={"csrf": csrf,
                "question_id": question_id_of(page.text), "answer": "approve"})  # fmt: skip
    page = client.get("/s/alice~s-paper")
    assert f'<p class="irreversible">{texts.IRREVERSIBLE_WARNING}</p>' in page.text
    assert texts.IRREVERSIBLE_IN_ATOMIC_RUN in page.text
    record = client.get("/s/alice~s-paper?tab=record")
    assert "charge_card(order=4411, amount=40.0)" in record.text  # as its question wrote it
    assert "never rewound" in record.text


def test_a_stale_button_is_refused_with_a_clear_message(client: TestClient, desk: Desk) -> None:
    login_form(client, "alice")
    csrf = csrf_of(client.get("/s/alice~s-old").text)
    client.post("/s/alice~s-old/turn", data={"csrf": csrf, "text": FIRST_ORDER})
    stale_page = client.get("/s/alice~s-old").text
    stale = {"csrf": csrf, "question_id": question_id_of(stale_page), "answer": "approve"}
    client.post("/s/alice~s-old/answer", data=stale)
    refused = client.post("/s/alice~s-old/answer", data=stale)
    assert refused.status_code == 409
    assert "That button answers a question that no longer waits" in refused.text
    assert "Run update_crm(order=4411)?" in refused.text
    assert 'href="/s/alice~s-old"' in refused.text
    assert desk.module.CALLS == ["charge_card"]


def test_forms_without_the_token_and_other_users_pages(
    client: TestClient, other: TestClient
) -> None:
    login_form(client, "alice")
    forged = client.post("/s/alice~s-a/turn", data={"text": FIRST_ORDER})
    assert forged.status_code == 403
    assert texts.__name__ and "anti-forgery" in forged.text
    csrf = csrf_of(client.get("/s/alice~s-a").text)
    client.post("/s/alice~s-a/turn", data={"csrf": csrf, "text": FIRST_ORDER})
    login_form(other, "bob")
    assert other.get("/s/alice~s-a").status_code == 404
    assert other.get("/s/alice~s-a/events").status_code == 404
    bob_csrf = csrf_of(other.get("/").text)
    refused = other.post("/s/alice~s-a/answer", data={"csrf": bob_csrf, "question_id": "x",
                                                "answer": "approve"})  # fmt: skip
    assert refused.status_code == 404
    assert "Run charge_card" in client.get("/s/alice~s-a").text


def test_the_session_stream_sends_the_rendered_panel(client: TestClient) -> None:
    headers = sign_in(client, "alice")
    client.post("/api/sessions/alice~s-live/turns", json={"text": FIRST_ORDER}, headers=headers)
    with client.stream("GET", "/s/alice~s-live/events") as stream:
        lines = []
        for line in stream.iter_lines():
            lines.append(line)
            if line == "":
                break
    assert lines[0] == "event: update"
    assert any("Run charge_card(order=4411, amount=40.0)?" in line for line in lines)
