"""The interface says which write it means (issue 28, point 4).

On the main this was written against, a call's question read `pay_bill(bill=7,
amount=30.00)` while the table under it listed `amount` first as `"30.00"`, and the
progress line and the record tab wrote `pay_bill(amount="30.00", bill=7)`; and why a tool
failed ("insufficient funds") was in the record tab only, never under the reply in the
chat, the JSON API or `stalwart chat`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from stalwart.backoff import UNDO_BACKOFF, no_jitter
from stalwart.serve import Service, create_app
from stalwart.serve.terminal import chat

from .serve_support import (
    OPERATOR_ENV,
    OPERATOR_TOKEN,
    Desk,
    InstantClock,
    sign_in,
    write_desk,
)

pytestmark = pytest.mark.integration

BILLS = '''

from decimal import Decimal

BILL_FAILS: dict[int, str] = {}


@tool(writes=True, undo="refund_bill")
def pay_bill(bill: int, amount: Decimal) -> dict[str, object]:
    """Pay a bill."""
    CALLS.append("pay_bill")
    if bill in BILL_FAILS:
        raise ValueError(BILL_FAILS[bill])
    return {"bill": bill, "paid": str(amount)}


@tool(writes=True, retry_safe=True)
def refund_bill(bill: int, amount: Decimal) -> dict[str, object]:
    """Refund a paid bill."""
    CALLS.append("refund_bill")
    return {"bill": bill, "refunded": str(amount)}
'''

SESSION = "alice~s-bills"


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Desk:
    monkeypatch.setenv(OPERATOR_ENV, OPERATOR_TOKEN)
    return write_desk(tmp_path / "desk", more_source=BILLS, more_tools=", pay_bill, refund_bill")


@pytest.fixture
def service(desk: Desk) -> Iterator[Service]:
    yield Service(desk.config(), clock=InstantClock(), secret=b"s",
                  undo_backoff=replace(UNDO_BACKOFF, jitter=no_jitter))  # fmt: skip


def _rows(html: str) -> list[tuple[str, str]]:
    """The question's table under it: (name, value) rows, the tool's row left out."""
    table = html.split('<table class="args">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr><th>(.*?)</th><td><code>(.*?)</code>", table)
    return [(name, value) for name, value in rows if name != "tool"]


def test_a_call_is_written_one_way_in_the_question_its_table_progress_and_record(
    service: Service,
) -> None:
    lines: list[str] = []
    service.board.listener = lines.append
    with TestClient(create_app(service)) as client:
        headers = sign_in(client, "alice")
        sent = client.post(
            f"/api/sessions/{SESSION}/turns", json={"text": "pay bill 7 30.00"}, headers=headers
        ).json()
        question = sent["waiting"][0]
        assert question["text"] == "Run pay_bill(bill=7, amount=30.00)?"
        page = client.get(f"/s/{SESSION}").text
        assert "Run pay_bill(bill=7, amount=30.00)?" in page
        assert _rows(page) == [("bill", "7"), ("amount", "30.00")]
        answer = {"question_id": question["question_id"], "answer": "approve"}
        done = client.post(f"/api/sessions/{SESSION}/answers", json=answer, headers=headers)
        assert done.json()["state"] == "done", done.text
        assert "running pay_bill(bill=7, amount=30.00)" in lines
        record = client.get(f"/s/{SESSION}?tab=record").text
        assert "<code>pay_bill(bill=7, amount=30.00)</code>" in record


def test_the_tools_message_is_under_the_reply_in_the_api_and_the_page(
    desk: Desk, service: Service
) -> None:
    desk.module.BILL_FAILS[9] = "<b>no funds</b>"
    with TestClient(create_app(service)) as client:
        headers = sign_in(client, "alice")
        turn = {"text": "pay bill 9 10.00"}
        sent = client.post(f"/api/sessions/{SESSION}/turns", json=turn, headers=headers).json()
        answer = {"question_id": sent["waiting"][0]["question_id"], "answer": "approve"}
        reply = client.post(f"/api/sessions/{SESSION}/answers", json=answer, headers=headers)
        body = reply.json()
        sentence = (
            "This run stopped: pay_bill failed (ValueError). Nothing had been written, "
            "so nothing needed undoing."
        )
        assert body["text"] == sentence
        assert body["detail"] == "pay_bill said: <b>no funds</b>"
        found = client.get(f"/api/sessions/{SESSION}").json()
        assert found["turns"][-1]["detail"] == "pay_bill said: <b>no funds</b>"
        page = client.get(f"/s/{SESSION}").text
        assert f'<p class="reply">{sentence}</p>' in page
        assert '<p class="detail">pay_bill said: &lt;b&gt;no funds&lt;/b&gt;</p>' in page
        assert "<b>no funds" not in page


def test_stalwart_chat_prints_the_tools_message_under_the_reply(
    desk: Desk, service: Service
) -> None:
    desk.module.BILL_FAILS[9] = "insufficient funds"
    turns = iter(["pay bill 9 10.00", ""])
    written: list[str] = []
    chat(service.agent, "alice", None, read_line=lambda _: next(turns),
         read_key=lambda: "a", write=written.append)  # fmt: skip
    reply = (
        "This run stopped: pay_bill failed (ValueError). Nothing had been written, "
        "so nothing needed undoing."
    )
    assert written[-2:] == [reply, "pay_bill said: insufficient funds"]
