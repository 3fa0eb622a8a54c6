"""Times and people, and answers with a reason (issue 32, points 1 and 2): the record's typed
results, the JSON API (ISO 8601 with its offset) and `stalwart chat`, on SQLite and
PostgreSQL, with the test's own clock."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from stalwart import FakeClock, texts
from stalwart.backoff import UNDO_BACKOFF, no_jitter
from stalwart.errors import InputRefused
from stalwart.serve import Service, create_app
from stalwart.serve.terminal import chat

from .serve_support import (
    FIRST_ORDER,
    OPERATOR_ENV,
    OPERATOR_TOKEN,
    Desk,
    sign_in,
    write_desk,
)

START = 1_800_000_000.0  # 2027-01-15T08:00:00+00:00


def iso(moment: float) -> str:
    return datetime.datetime.fromtimestamp(moment, tz=datetime.UTC).isoformat()


class Served:
    def __init__(self, desk: Desk, clock: FakeClock) -> None:
        self.desk = desk
        self.clock = clock
        self.service = Service(desk.config(), clock=clock, secret=b"test-secret", run_threads=4,
                               undo_backoff=replace(UNDO_BACKOFF, jitter=no_jitter))  # fmt: skip
        self.client = TestClient(create_app(self.service))


@pytest.fixture
def served(tmp_path: Path, record: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    monkeypatch.setenv(OPERATOR_ENV, OPERATOR_TOKEN)
    desk = write_desk(tmp_path / "desk", record=record)
    found = Served(desk, FakeClock(START))
    with found.client:
        yield found


def post(served: Served, path: str, headers: dict[str, str], **body: Any) -> dict[str, Any]:
    answer = served.client.post(path, json=body, headers=headers)
    assert answer.status_code in (200, 201), answer.text
    found: dict[str, Any] = answer.json()
    return found


def answer(
    served: Served, headers: dict[str, str], session: str, reply: dict[str, Any], given: str,
    reason: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    question = reply["waiting"][0]
    return post(served, f"/api/sessions/{session}/answers", headers,
                question_id=question["question_id"], answer=given, reason=reason)  # fmt: skip


def test_every_call_and_answer_carries_when_and_who_in_the_record_and_the_api(
    served: Served,
) -> None:
    clock = served.clock
    headers = sign_in(served.client, "alice")
    session = post(served, "/api/sessions", headers)["session"]
    reply = post(served, f"/api/sessions/{session}/turns", headers, text=FIRST_ORDER)
    asked = clock.now()
    found = served.client.get(f"/api/sessions/{session}").json()
    assert found["question"]["asked_at"] == iso(asked)
    assert found["turns"][0]["sent_at"] == iso(START)
    assert found["updated_at"] == iso(asked)
    assert iso(asked).endswith("+00:00")

    clock.advance(90)  # the person reads the question for a minute and a half
    approved = clock.now()
    reply = answer(served, headers, session, reply, "approve")  # charge_card runs
    clock.advance(30)
    reply = answer(served, headers, session, reply, "skip", "the CRM is updated by hand")
    clock.advance(45)
    cancelled = clock.now()
    reply = answer(served, headers, session, reply, "cancel all", "wrong customer")
    assert reply["text"] == (
        "This run stopped: you cancelled it at provision_account. "
        "Undone, latest first: charge_card (by refund_card)."
    )  # the chapter's reply, unchanged by a reason

    # the library's typed results
    agent = served.service.agent
    calls = agent.record("alice", session=session.split("~", 1)[1])
    charge, crm, refund = calls
    assert (charge.tool, crm.tool, refund.tool) == ("charge_card", "update_crm", "refund_card")
    assert charge.recorded == approved and charge.finished == approved
    (approval,) = charge.answers
    assert (approval.answer, approval.by, approval.at, approval.asked) == (
        "approve",
        "alice",
        approved,
        asked,
    )
    assert approval.reason is None and approval.kind == "confirm"
    (skipped,) = crm.answers
    assert (skipped.answer, skipped.by, skipped.reason) == (
        "skip",
        "alice",
        "the CRM is updated by hand",
    )
    assert crm.status == "declined"
    assert crm.result == f"{texts.DECLINED_RESULT}; their reason: the CRM is updated by hand"
    assert refund.recorded == cancelled and refund.undoes == charge.call_id
    given = agent.answers("alice", session=session.split("~", 1)[1])
    assert [(a.answer, a.reason, a.at) for a in given] == [
        ("approve", None, approved),
        ("skip", "the CRM is updated by hand", approved + 30),
        ("cancel all", "wrong customer", cancelled),
    ]
    assert given[-1].text.startswith("Run provision_account(order=4411)?")

    # the JSON API: the same, each time ISO 8601 with its offset
    record = served.client.get(f"/api/sessions/{session}/record").json()
    assert record[0]["recorded_at"] == iso(approved)
    assert record[0]["finished_at"] == iso(approved)
    assert record[0]["answers"][0]["by"] == "alice"
    assert record[0]["answers"][0]["answered_at"] == iso(approved)
    assert record[0]["answers"][0]["asked_at"] == iso(asked)
    assert record[1]["answers"][0]["reason"] == "the CRM is updated by hand"
    assert record[2]["recorded_at"] == iso(cancelled)
    answers = served.client.get(f"/api/sessions/{session}/answers").json()
    assert [(a["answer"], a["by"], a["reason"], a["answered_at"]) for a in answers] == [
        ("approve", "alice", None, iso(approved)),
        ("skip", "alice", "the CRM is updated by hand", iso(approved + 30)),
        ("cancel all", "alice", "wrong customer", iso(cancelled)),
    ]
    turns = served.client.get(f"/api/sessions/{session}").json()["turns"]
    assert turns[0]["updated_at"] == iso(cancelled)


def test_operator_actions_carry_the_time_of_the_services_clock(served: Served) -> None:
    clock = served.clock
    clock.advance(3600)
    operator = served.client
    post(served, "/api/operator/login", {}, token=OPERATOR_TOKEN)
    actions = operator.get("/api/operator/actions").json()
    assert actions[0]["action"] == "sign in"
    assert actions[0]["at"] == START + 3600
    assert actions[0]["done_at"] == iso(START + 3600)


def test_a_reason_past_the_limit_is_refused_and_changes_nothing(served: Served) -> None:
    headers = sign_in(served.client, "alice")
    session = post(served, "/api/sessions", headers)["session"]
    reply = post(served, f"/api/sessions/{session}/turns", headers, text=FIRST_ORDER)
    question = reply["waiting"][0]
    refused = served.client.post(
        f"/api/sessions/{session}/answers",
        json={"question_id": question["question_id"], "answer": "skip", "reason": "x" * 2001},
        headers=headers,
    )
    assert refused.status_code == 422
    assert refused.json()["code"] == "input_refused"
    still = served.client.get(f"/api/sessions/{session}").json()
    assert still["question"]["question_id"] == question["question_id"]
    assert served.client.get(f"/api/sessions/{session}/answers").json() == []
    with pytest.raises(InputRefused):
        served.service.agent.confirm("alice", "skip", session=session.split("~", 1)[1],
                                     reason="bad\x00reason")  # fmt: skip
    assert served.client.get(f"/api/sessions/{session}/record").json() == []


def test_stalwart_chat_asks_why_after_skip_and_records_it(served: Served) -> None:
    agent = served.service.agent
    lines = iter([FIRST_ORDER, "", "no such charge wanted", "", ""])
    keys = iter(["s", "a", "c"])
    said: list[str] = []

    def read_line(prompt: str) -> str:
        said.append(prompt)
        return next(lines)

    chat(agent, "carol", None, read_line=read_line, read_key=lambda: next(keys),
         write=said.append)  # fmt: skip
    assert said.count(texts.serve.CHAT_REASON_PROMPT) == 2  # after skip and after cancel all
    given = agent.answers("carol")
    assert [(a.answer, a.reason, a.by) for a in given] == [
        ("skip", None, "carol"),
        ("approve", None, "carol"),
        ("cancel all", "no such charge wanted", "carol"),
    ]


def test_the_inbox_items_filter_by_kind_and_state_newest_first(served: Served) -> None:
    clock = served.clock
    headers = sign_in(served.client, "alice")
    first = post(served, "/api/sessions", headers)["session"]
    reply = post(
        served, f"/api/sessions/{first}/turns", headers, text="ship the parcel for order 3"
    )
    clock.advance(10)
    answer(served, headers, first, reply, "approve")  # lost: an outcome question
    clock.advance(10)
    second = post(served, "/api/sessions", headers)["session"]
    named = post(served, f"/api/sessions/{second}/title", headers, title="Mrs Reis")
    assert (named["title"], named["named"]) == ("Mrs Reis", True)
    post(served, f"/api/sessions/{second}/turns", headers, text=FIRST_ORDER)
    items = served.client.get("/api/inbox/items").json()
    assert [(i["kind"], i["title"], i["at"]) for i in items] == [
        ("confirm", "Mrs Reis", iso(START + 20)),
        ("outcome", "ship the parcel for order 3", iso(START + 10)),
    ]
    assert items[0]["answers"] == ["approve", "skip", "cancel all"]
    outcome = served.client.get("/api/inbox/items?kind=outcome").json()
    assert [i["session"] for i in outcome] == [first]
    assert [s["session"] for s in served.client.get("/api/inbox?kind=outcome").json()] == [first]
    answered = served.client.get("/api/inbox/items?state=answered").json()
    assert [(i["answer"], i["by"], i["at"]) for i in answered] == [
        ("approve", "alice", iso(START + 10))
    ]
    assert len(served.client.get("/api/inbox/items?state=all").json()) == 3
    refused = served.client.get("/api/inbox/items?kind=urgent")
    assert (refused.status_code, refused.json()["code"]) == (422, "input_refused")


def test_the_outcome_question_gives_the_key_and_when_it_was_sent_in_the_api_and_chat(
    served: Served,
) -> None:
    headers = sign_in(served.client, "alice")
    session = post(served, "/api/sessions", headers)["session"]
    reply = post(
        served, f"/api/sessions/{session}/turns", headers, text="ship the parcel for order 3"
    )
    served.clock.advance(5)
    sent = served.clock.now()
    answer(served, headers, session, reply, "approve")
    question = served.client.get(f"/api/sessions/{session}").json()["question"]
    (call,) = served.client.get(f"/api/sessions/{session}/record").json()
    assert question["kind"] == "outcome"
    assert (question["key"], question["sent_at"], question["tries"]) == (call["key"], iso(sent), 1)
    written: list[str] = []
    lines = iter([""])
    chat(served.service.agent, "alice", session.split("~", 1)[1], read_line=lambda _: next(lines),
         read_key=lambda: "\x04", write=written.append)  # fmt: skip
    stamp = datetime.datetime.fromtimestamp(sent, tz=datetime.UTC).strftime("%Y-%m-%d %H:%M:%S")
    assert f"  key {call['key']}; sent {stamp} UTC; 1 try" in written
