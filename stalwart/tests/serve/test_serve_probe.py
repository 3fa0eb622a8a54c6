"""A write's probe under the outcome question (issue 32): in the JSON API (a typed field),
in `stalwart chat` (a real terminal), and in the page and the inbox (headless Chromium,
Debian's, through Playwright, checked by axe-core, a screenshot kept).

The desk gains `post_parcel`, a write whose answer is always lost, declaring its probe in
the decorator: `find_parcel`, bound to the order and the key it was sent under."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from terminal import Terminal

from stalwart import texts

from .browser_support import Live, artefact, axe_violations
from .serve_support import OPERATOR_ENV, OPERATOR_TOKEN, STALWART, Desk, sign_in, write_desk
from .test_serve_api import answer, new_session, turn

PROBE_SOURCE = '''

POSTED = {}  # key -> parcel: what the post office did


@tool(writes=True, probe={"tool": "find_parcel", "args": {"order": "$args.order", "key": "$key"}})
def post_parcel(order: int, idempotency_key: str) -> dict[str, object]:
    """Post the parcel of an order."""
    CALLS.append("post_parcel")
    POSTED.setdefault(idempotency_key, f"p_{order}")
    raise TimeoutError("the post office did not answer")


@tool
def find_parcel(order: int, key: str) -> dict[str, object] | None:
    """Find a posted parcel of an order by the key it was posted under."""
    found = POSTED.get(key)
    return {"parcel": found} if found else None
'''

TURN = "post the parcel for order 3"
QUESTION = "Did post_parcel take effect? The call was sent and no answer came back."
FOUND = "find_parcel found parcel p_3 for order 3 under this key"


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Desk:
    monkeypatch.setenv(OPERATOR_ENV, OPERATOR_TOKEN)
    return write_desk(
        tmp_path / "desk", more_source=PROBE_SOURCE, more_tools=", post_parcel, find_parcel"
    )


@pytest.mark.unit
def test_the_api_gives_the_probes_evidence_as_a_typed_field_of_the_question(
    client: TestClient, desk: Desk
) -> None:
    headers = sign_in(client, "alice")
    session = new_session(client, headers)
    reply = answer(client, headers, session, turn(client, headers, session, TURN), "approve")
    question = reply["waiting"][0]
    assert (question["kind"], question["text"]) == ("outcome", QUESTION)
    evidence = question["evidence"]
    key = evidence["args"]["key"]
    assert evidence == {
        "tool": "find_parcel",
        "args": {"order": 3, "key": key},
        "text": FOUND,
        "found": True,
        "result": {"parcel": "p_3"},
        "error": None,
        "call": f"{session}#1:1:probe",
        "answered_at": evidence["answered_at"],
    }
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$", evidence["answered_at"])
    state = client.get(f"/api/sessions/{session}").json()
    assert state["question"]["evidence"] == evidence
    assert state["question"]["key"] == key  # the key it was sent under, as the probe was asked
    inbox = client.get("/api/inbox").json()
    assert [s["question"]["evidence"] for s in inbox] == [evidence]
    items = client.get("/api/inbox/items").json()
    assert [item["evidence"] for item in items] == [FOUND]
    record = client.get(f"/api/sessions/{session}/record").json()
    assert [(c["kind"], c["tool"], c["status"]) for c in record] == [
        ("write", "post_parcel", "in_doubt"),
        ("probe", "find_parcel", "ran"),
    ]
    schema = client.get("/openapi.json").json()["components"]["schemas"]
    assert "EvidenceOut" in schema
    # Still the person's to decide: "did not happen" rolls back, whatever the probe found.
    assert answer(client, headers, session, reply, "did not happen")["state"] == "rolled_back"


@pytest.mark.acceptance
def test_chat_in_a_terminal_shows_the_probes_evidence_under_the_outcome_question(
    desk: Desk,
) -> None:
    chat = Terminal(STALWART, "chat", str(desk.yaml), "--user", "alice", cwd=desk.folder,
                    env={OPERATOR_ENV: OPERATOR_TOKEN})  # fmt: skip
    try:
        chat.expect("you> ")
        chat.send(TURN + "\n")
        chat.expect("[a] approve")
        chat.send("a")
        chat.expect(QUESTION)
        shown = chat.expect("[h] happened  [n] did not happen")
        assert texts.chat_probe(FOUND) in shown
        chat.send("h")
        chat.expect("you> ")
        chat.send("\n")
    finally:
        code = chat.close()
    assert code == 0


@pytest.mark.acceptance
@pytest.mark.browser
def test_the_page_and_the_inbox_show_the_probes_evidence_under_the_outcome_question(
    browser: Any, live: Live, desk: Desk
) -> None:
    playwright_api = pytest.importorskip("playwright.sync_api")
    expect = playwright_api.expect
    from .test_serve_desk import DESKTOP, PHONE, click_answer, person, send

    page = person(browser, live, "alice")
    send(page, live, "alice~s-probe", TURN)
    click_answer(page, "approve")
    question = page.locator("#question.outcome")
    expect(question.locator(".asked")).to_have_text(QUESTION)  # the chapter's, unchanged
    probe = question.locator(".evidence p.probe")
    expect(probe).to_have_text(f"{texts.PROBE_EVIDENCE_TITLE} {FOUND}")
    expect(probe).to_have_class(re.compile(r"\bfound\b"))
    expect(question.locator("button.answer")).to_have_text(["happened", "did not happen"])
    assert axe_violations(page) == []
    page.screenshot(path=artefact("outcome-probe-desktop"), full_page=True)
    page.set_viewport_size(PHONE)
    page.screenshot(path=artefact("outcome-probe-phone"), full_page=True)
    page.set_viewport_size(DESKTOP)
    page.goto(f"{live.url}/inbox")
    item = page.locator(".inbox li.waiting")
    expect(item.locator(".what")).to_have_text(QUESTION.split("\n")[0])
    expect(item.locator("p.probe")).to_have_text(f"{texts.PROBE_EVIDENCE_TITLE} {FOUND}")
    assert axe_violations(page) == []
    page.goto(f"{live.url}/s/alice~s-probe")
    click_answer(page, "happened")  # the person decides
    expect(page.locator("#question")).to_have_count(0)
    assert live.service.agent.record("alice", session="s-probe")[0].status == "happened"
