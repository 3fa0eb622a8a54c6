"""The JSON API over the real library, a real SQLite record and the desk's real tools."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from stalwart import texts
from stalwart.serve import Service

from .serve_support import (
    FIRST_CALLS,
    FIRST_ORDER,
    FIRST_REPLY,
    OPERATOR_TOKEN,
    SECOND_ORDER,
    SECOND_REPLY,
    Desk,
    sign_in,
)

pytestmark = pytest.mark.unit


def new_session(client: TestClient, headers: dict[str, str]) -> str:
    answer = client.post("/api/sessions", headers=headers)
    assert answer.status_code == 201, answer.text
    session: str = answer.json()["session"]
    return session


def turn(client: TestClient, headers: dict[str, str], session: str, text: str) -> dict[str, Any]:
    answer = client.post(f"/api/sessions/{session}/turns", json={"text": text}, headers=headers)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def answer(
    client: TestClient, headers: dict[str, str], session: str, reply: dict[str, Any], given: str
) -> dict[str, Any]:
    question = reply["waiting"][0]
    found = client.post(
        f"/api/sessions/{session}/answers",
        json={"question_id": question["question_id"], "answer": given},
        headers=headers,
    )
    assert found.status_code == 200, found.text
    body: dict[str, Any] = found.json()
    return body


def test_the_failed_order_approved_step_by_step_ends_in_the_chapters_reply(
    client: TestClient, desk: Desk
) -> None:
    headers = sign_in(client, "alice")
    session = new_session(client, headers)
    reply = turn(client, headers, session, FIRST_ORDER)
    asked = []
    while reply["waiting"]:
        assert reply["waiting"][0]["kind"] == "confirm"
        asked.append(reply["waiting"][0]["text"])
        reply = answer(client, headers, session, reply, "approve")
    assert reply["text"] == FIRST_REPLY
    assert reply["state"] == "rolled_back"
    assert asked[0] == "Run charge_card(order=4411, amount=40.0)?"
    assert desk.module.CALLS == FIRST_CALLS
    record = client.get(f"/api/sessions/{session}/record").json()
    assert [(c["tool"], c["status"]) for c in record][-2:] == [
        ("restore_crm", "ran"),
        ("refund_card", "ran"),
    ]
    assert all(c["key"] for c in record if c["kind"] in ("write", "undo"))
    memory = client.get(f"/api/sessions/{session}/memory").json()
    assert memory[-1] == {"role": "assistant", "content": FIRST_REPLY}


def test_the_second_order_warns_under_the_receipts_question(client: TestClient) -> None:
    headers = sign_in(client, "alice")
    session = new_session(client, headers)
    reply = turn(client, headers, session, SECOND_ORDER)
    reply = answer(client, headers, session, reply, "approve")
    question = reply["waiting"][0]
    assert question["tool"] == "send_receipt"
    lines = question["text"].split("\n")
    assert lines[0] == f"Run send_receipt(order=4411)? {texts.IRREVERSIBLE_IN_ATOMIC_RUN}"
    assert lines[-1] == texts.IRREVERSIBLE_WARNING == "Nothing can undo this step once it runs."
    state = client.get(f"/api/sessions/{session}").json()
    assert state["question"]["irreversible"] is True
    while reply["waiting"]:
        reply = answer(client, headers, session, reply, "approve")
    assert reply["text"] == SECOND_REPLY


def test_skip_and_cancel_all(client: TestClient, desk: Desk) -> None:
    headers = sign_in(client, "alice")
    session = new_session(client, headers)
    reply = turn(client, headers, session, FIRST_ORDER)
    reply = answer(client, headers, session, reply, "skip")
    assert reply["waiting"][0]["tool"] == "update_crm"
    reply = answer(client, headers, session, reply, "approve")
    reply = answer(client, headers, session, reply, "cancel all")
    assert reply["text"] == (
        "This run stopped: you cancelled it at provision_account. "
        "Undone, latest first: update_crm (by restore_crm)."
    )
    assert desk.module.CALLS == ["update_crm", "restore_crm"]


def test_an_outcome_question_takes_happened_and_did_not_happen(
    client: TestClient, desk: Desk
) -> None:
    headers = sign_in(client, "alice")
    for given, state in (("happened", "done"), ("did not happen", "rolled_back")):
        session = new_session(client, headers)
        reply = turn(client, headers, session, "ship the parcel for order 7")
        reply = answer(client, headers, session, reply, "approve")
        question = reply["waiting"][0]
        assert question["kind"] == "outcome"
        assert question["text"] == (
            "Did ship_parcel take effect? The call was sent and no answer came back."
        )
        assert question["answers"] == ["happened", "did not happen"]
        reply = answer(client, headers, session, reply, given)
        assert reply["state"] == state


def stuck(client: TestClient, headers: dict[str, str], desk: Desk) -> tuple[str, dict[str, Any]]:
    desk.module.UNDO_FAILS[0] = 4
    session = new_session(client, headers)
    reply = turn(
        client, headers, session, "book a van for order 9, then provision the account for order 9"
    )
    while reply["waiting"] and reply["waiting"][0]["kind"] == "confirm":
        reply = answer(client, headers, session, reply, "approve")
    assert reply["state"] == "stuck"
    assert reply["waiting"][0]["text"] == (
        "Undoing book_van failed after 4 tries (RuntimeError: the van service is down). "
        "1 step(s) still need undoing."
    )
    return session, reply


def test_a_stuck_undo_takes_each_of_its_answers(
    client: TestClient, desk: Desk, service: Service
) -> None:
    headers = sign_in(client, "alice")
    session, reply = stuck(client, headers, desk)
    assert reply["waiting"][0]["answers"] == ["retry", "done by hand", "abandon"]
    retried = answer(client, headers, session, reply, "retry")
    assert retried["state"] == "rolled_back"
    assert "Undone, latest first: book_van (by unbook_van)." in retried["text"]

    session, reply = stuck(client, headers, desk)
    by_hand = answer(client, headers, session, reply, "done by hand")
    assert "book_van (by hand)" in by_hand["text"]

    session, reply = stuck(client, headers, desk)
    abandoned = answer(client, headers, session, reply, "abandon")
    assert abandoned["state"] == "abandoned"
    assert "still to be undone by hand: book_van" in abandoned["text"]
    assert service.clock.inner.slept  # type: ignore[attr-defined]  # backoff waits, none slept


def test_another_users_session_is_not_found_and_their_answer_changes_nothing(
    client: TestClient, other: TestClient
) -> None:
    alice = sign_in(client, "alice")
    session = new_session(client, alice)
    reply = turn(client, alice, session, FIRST_ORDER)
    bob = sign_in(other, "bob")
    for path in ("", "/record", "/memory"):
        found = other.get(f"/api/sessions/{session}{path}")
        assert found.status_code == 404
        assert found.json()["code"] == "not_your_session"
    question_id = reply["waiting"][0]["question_id"]
    refused = other.post(
        f"/api/sessions/{session}/answers",
        json={"question_id": question_id, "answer": "approve"},
        headers=bob,
    )
    assert refused.status_code == 404
    assert refused.json()["code"] == "not_your_session"
    taken = other.post(f"/api/sessions/{session}/turns", json={"text": "hi"}, headers=bob)
    assert taken.status_code == 404
    assert other.get("/api/inbox").json() == []
    still = client.get(f"/api/sessions/{session}").json()
    assert still["question"]["question_id"] == question_id
    assert client.get(f"/api/sessions/{session}/record").json() == []


def test_a_stale_answer_is_refused_and_never_applied_to_the_next_question(
    client: TestClient, desk: Desk
) -> None:
    headers = sign_in(client, "alice")
    session = new_session(client, headers)
    first = turn(client, headers, session, FIRST_ORDER)
    second = answer(client, headers, session, first, "approve")
    stale = client.post(
        f"/api/sessions/{session}/answers",
        json={"question_id": first["waiting"][0]["question_id"], "answer": "approve"},
        headers=headers,
    )
    assert stale.status_code == 409
    assert stale.json()["code"] == "stale_answer"
    assert "no longer waits" in stale.json()["message"]
    assert "Run update_crm(order=4411)?" in stale.json()["message"]
    now = client.get(f"/api/sessions/{session}").json()
    assert now["question"]["question_id"] == second["waiting"][0]["question_id"]
    assert desk.module.CALLS == ["charge_card"]


def test_posts_need_the_anti_forgery_token_and_a_sign_in(client: TestClient) -> None:
    assert client.get("/api/sessions").json()["code"] == "not_signed_in"
    headers = sign_in(client, "alice")
    refused = client.post("/api/sessions/alice~s-x/turns", json={"text": "hi"})
    assert refused.status_code == 403
    assert refused.json()["code"] == "csrf_refused"
    wrong = client.post("/api/login", json={"user": "alice", "password": "nope"})
    assert wrong.status_code == 401
    assert client.get("/api/me").json()["csrf"] == headers["X-CSRF-Token"]


def test_errors_are_json_with_a_code_and_the_api_has_an_openapi_document(
    client: TestClient,
) -> None:
    document = client.get("/openapi.json").json()
    for path in (
        "/api/sessions/{session}/turns",
        "/api/sessions/{session}/answers",
        "/api/sessions/{session}/record",
        "/api/sessions/{session}/memory",
        "/api/inbox",
        "/api/operator/sessions/{session}/undo",
    ):
        assert path in document["paths"], path
    headers = sign_in(client, "alice")
    bad = client.post("/api/sessions/alice~s-1/turns", json={}, headers=headers)
    assert bad.status_code == 422
    assert bad.json()["code"] == "invalid_request"
    empty = client.post("/api/sessions/alice~s-1/turns", json={"text": " "}, headers=headers)
    assert empty.json()["code"] == "bad_answer"
    assert client.get("/api/nothing-here").json()["code"] == "not_found"


def test_the_inbox_lists_waiting_sessions_newest_first(client: TestClient) -> None:
    headers = sign_in(client, "alice")
    older = new_session(client, headers)
    turn(client, headers, older, FIRST_ORDER)
    newer = new_session(client, headers)
    turn(client, headers, newer, "ship the parcel for order 3")
    done = new_session(client, headers)
    turn(client, headers, done, "get order 4411")
    inbox = client.get("/api/inbox").json()
    assert [item["session"] for item in inbox] == [newer, older]
    assert inbox[0]["question"]["tool"] == "ship_parcel"


def test_the_operator_signs_in_with_the_token_undoes_and_every_action_is_recorded(
    client: TestClient, other: TestClient
) -> None:
    alice = sign_in(client, "alice")
    session = new_session(client, alice)
    reply = turn(client, alice, session, "charge order 4411 40.00")
    reply = answer(client, alice, session, reply, "approve")
    assert reply["state"] == "done"

    assert other.get("/api/operator/sessions").json()["code"] == "not_signed_in"
    wrong = other.post("/api/operator/login", json={"token": "guess"})
    assert (wrong.status_code, wrong.json()["code"]) == (403, "operator_token")
    signed = other.post("/api/operator/login", json={"token": OPERATOR_TOKEN})
    headers = {"X-CSRF-Token": signed.json()["csrf"]}
    listed = other.get("/api/operator/sessions").json()
    assert [(s["session"], s["user"]) for s in listed] == [(session, "alice")]
    assert other.get(f"/api/operator/sessions/{session}/record").json()[0]["tool"] == "charge_card"

    no_token = other.post(
        f"/api/operator/sessions/{session}/undo", json={"token": "guess"}, headers=headers
    )
    assert no_token.json()["code"] == "operator_token"
    undone = other.post(
        f"/api/operator/sessions/{session}/undo", json={"token": OPERATOR_TOKEN}, headers=headers
    )
    assert undone.status_code == 200, undone.text
    assert undone.json()["text"] == (
        "This run stopped: an operator undid it. "
        "Undone, latest first: charge_card (by refund_card)."
    )
    again = other.post(
        f"/api/operator/sessions/{session}/undo", json={"token": OPERATOR_TOKEN}, headers=headers
    )
    assert again.status_code == 409
    assert again.json()["message"] == texts.operator_nothing_left(session, f"{session}#1")
    actions = other.get("/api/operator/actions").json()
    assert [(a["action"], a["outcome"]) for a in reversed(actions)] == [
        ("sign in", "operator_token"),
        ("sign in", "ok"),
        ("list sessions", "ok"),
        ("open record", "ok"),
        ("undo", "operator_token"),
        ("undo", "ok"),
        ("undo", "bad_answer"),
    ]
    # a person's cookie is no operator's
    assert client.get("/api/operator/sessions").json()["code"] == "not_signed_in"


def test_the_operator_ends_a_run_nobody_answers_by_api_and_by_the_page(
    client: TestClient, other: TestClient
) -> None:
    alice = sign_in(client, "alice")
    sessions = [new_session(client, alice) for _ in range(2)]
    for session in sessions:
        reply = turn(client, alice, session, SECOND_ORDER)
        reply = answer(client, alice, session, reply, "approve")
        assert reply["waiting"][0]["tool"] == "send_receipt"  # and nobody answers it
    signed = other.post("/api/operator/login", json={"token": OPERATOR_TOKEN})
    headers = {"X-CSRF-Token": signed.json()["csrf"]}
    by_api, by_page = sessions
    ended_text = (
        "This run stopped: an operator ended it (nobody answers). send_receipt, which waited "
        "for your confirmation, was not run. Undone, latest first: charge_card (by refund_card)."
    )

    end = f"/api/operator/sessions/{by_api}/end"
    wrong = other.post(end, json={"token": "guess", "reason": "nobody answers"}, headers=headers)
    assert (wrong.status_code, wrong.json()["code"]) == (403, "operator_token")
    no_reason = other.post(end, json={"token": OPERATOR_TOKEN, "reason": " "}, headers=headers)
    assert (no_reason.status_code, no_reason.json()["code"]) == (422, "input_refused")
    ended = other.post(end, json={"token": OPERATOR_TOKEN, "reason": "nobody answers"},
                       headers=headers)  # fmt: skip
    assert ended.status_code == 200, ended.text
    body = ended.json()
    assert (body["state"], body["text"], body["waiting"]) == ("ended_by_operator", ended_text, [])
    assert (body["ended"]["by"], body["ended"]["reason"]) == (None, "nobody answers")
    again = other.post(end, json={"token": OPERATOR_TOKEN, "reason": "again"}, headers=headers)
    assert again.status_code == 409
    assert again.json()["message"] == texts.operator_run_ended(
        by_api, f"{by_api}#1", "ended_by_operator"
    )
    # The person sees the one reply; nothing waits for them any more.
    assert [item["session"] for item in client.get("/api/inbox").json()] == [by_page]

    page = other.get(f"/operator/s/{by_page}")
    assert 'id="operator-end"' in page.text and 'name="reason"' in page.text
    posted = other.post(
        f"/operator/s/{by_page}/end",
        data={"token": OPERATOR_TOKEN, "reason": "nobody answers", "csrf": headers["X-CSRF-Token"]},
        follow_redirects=False,
    )
    assert posted.status_code == 303, posted.text
    shown = other.get(posted.headers["location"]).text
    assert "ended_by_operator" in shown and "send_receipt, which waited" in shown
    assert client.get("/api/inbox").json() == []
    actions = other.get("/api/operator/actions").json()
    assert [(a["action"], a["outcome"]) for a in reversed(actions) if a["action"] == "end"] == [
        ("end", "operator_token"),
        ("end", "input_refused"),
        ("end", "ok"),
        ("end", "bad_answer"),
        ("end", "ok"),
    ]
