"""Every route of the JSON API gives an argument or a result exactly as it will run or ran: a
decimal as its exact text, a large integer whole, the same in every route (issue 28)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pytest
from fastapi.testclient import TestClient

from stalwart.serve import Service, create_app

from .serve_support import OPERATOR_ENV, OPERATOR_TOKEN, InstantClock, sign_in, write_desk

pytestmark = pytest.mark.unit

ACCOUNT = 12345678901234567890123  # past a float's 53 bits, and past 64
LARGE = "12345678901234567.89"  # a float would say 1.2345678901234568e+16
SMALL = "19.00"  # a float would say 19.0

BILLS = '''

from decimal import Decimal


@tool(writes=True, undo="refund_bill")
def pay_bill(account: int, amount: Decimal) -> dict[str, object]:
    """Pay a bill of an account."""
    CALLS.append("pay_bill")
    return {"account": account, "amount": amount, "paid": True}


@tool(writes=True, retry_safe=True)
def refund_bill(account: int, amount: Decimal) -> dict[str, object]:
    """Give back the payment of a bill of an account."""
    CALLS.append("refund_bill")
    return {"account": account, "amount": amount, "refunded": True}
'''


EXACT = ({"account": ACCOUNT, "amount": LARGE}, {"account": ACCOUNT, "amount": SMALL})


def pay(amount: str) -> str:
    return f"pay the bill of account {ACCOUNT} amount {amount}"


class Answer(Protocol):
    """What the test client answers (an httpx response, of whichever httpx it uses)."""

    @property
    def status_code(self) -> int: ...

    @property
    def text(self) -> str: ...

    @property
    def content(self) -> bytes: ...

    def json(self) -> Any: ...


@dataclass
class Walk:
    """The two clients (a person's, the operator's) and what the walk has seen so far."""

    alice: TestClient
    operator: TestClient
    headers: dict[str, str] = field(default_factory=dict)
    operator_headers: dict[str, str] = field(default_factory=dict)
    sessions: dict[str, str] = field(default_factory=dict)
    questions: dict[str, str] = field(default_factory=dict)


Call = Callable[[Walk], Answer]


def _login(walk: Walk) -> Answer:
    walk.headers = sign_in(walk.alice, "alice")
    return walk.alice.get("/api/me")  # sign_in asserts the login's own answer


def _new_session(walk: Walk) -> Answer:
    made = walk.alice.post("/api/sessions", headers=walk.headers)
    walk.sessions["two"] = made.json()["session"]
    second = walk.alice.post("/api/sessions", headers=walk.headers).json()["session"]
    walk.sessions["one"] = second
    return made


def _turn(walk: Walk) -> Answer:
    # session "one": a single payment, approved to its end (the operator undoes it later)
    one = walk.sessions["one"]
    asked = walk.alice.post(f"/api/sessions/{one}/turns", json={"text": pay(SMALL)},
                            headers=walk.headers).json()  # fmt: skip
    done = walk.alice.post(
        f"/api/sessions/{one}/answers",
        json={"question_id": asked["waiting"][0]["question_id"], "answer": "approve"},
        headers=walk.headers,
    )
    assert done.json()["state"] == "done", done.text
    # session "two": two payments; the first waits for its confirmation
    two = walk.sessions["two"]
    text = f"{pay(LARGE)}, then {pay(SMALL)}"
    sent = walk.alice.post(f"/api/sessions/{two}/turns", json={"text": text}, headers=walk.headers)
    walk.questions["two"] = sent.json()["waiting"][0]["question_id"]
    return sent


def _answer(walk: Walk) -> Answer:
    two = walk.sessions["two"]
    body = {"question_id": walk.questions["two"], "answer": "approve"}
    return walk.alice.post(f"/api/sessions/{two}/answers", json=body, headers=walk.headers)


def _operator_login(walk: Walk) -> Answer:
    signed = walk.operator.post("/api/operator/login", json={"token": OPERATOR_TOKEN})
    walk.operator_headers = {"X-CSRF-Token": signed.json()["csrf"]}
    return signed


def _operator_undo(walk: Walk) -> Answer:
    one = walk.sessions["one"]
    body = {"token": OPERATOR_TOKEN}
    return walk.operator.post(
        f"/api/operator/sessions/{one}/undo", json=body, headers=walk.operator_headers
    )


def _operator_end(walk: Walk) -> Answer:
    two = walk.sessions["two"]
    return walk.operator.post(f"/api/operator/sessions/{two}/end",
                              json={"token": OPERATOR_TOKEN, "reason": "the walk ends it"},
                              headers=walk.operator_headers)  # fmt: skip


# Every operation of the OpenAPI document, in the order walked, with what its answer must
# show: the arguments of a call (True), or nothing of a call (False).
ROUTES: list[tuple[str, str, Call, bool]] = [
    ("post", "/api/login", lambda w: w.alice.post(
        "/api/login", json={"user": "alice", "password": "alice-pw"}), False),
    ("get", "/api/me", _login, False),
    ("post", "/api/sessions", _new_session, False),
    ("post", "/api/sessions/{session}/turns", _turn, True),
    ("get", "/api/sessions", lambda w: w.alice.get("/api/sessions"), True),
    ("get", "/api/sessions/{session}",
     lambda w: w.alice.get(f"/api/sessions/{w.sessions['two']}"), True),
    ("get", "/api/inbox", lambda w: w.alice.get("/api/inbox"), True),
    ("get", "/api/inbox/items", lambda w: w.alice.get("/api/inbox/items?state=all"), False),
    ("post", "/api/sessions/{session}/answers", _answer, True),
    ("get", "/api/sessions/{session}/record",
     lambda w: w.alice.get(f"/api/sessions/{w.sessions['two']}/record"), True),
    ("get", "/api/sessions/{session}/answers",
     lambda w: w.alice.get(f"/api/sessions/{w.sessions['two']}/answers"), False),
    ("post", "/api/sessions/{session}/title", lambda w: w.alice.post(
        f"/api/sessions/{w.sessions['one']}/title", json={"title": "bills"},
        headers=w.headers), False),
    ("get", "/api/sessions/{session}/memory",
     lambda w: w.alice.get(f"/api/sessions/{w.sessions['one']}/memory"), False),
    ("post", "/api/operator/login", _operator_login, False),
    ("get", "/api/operator/sessions", lambda w: w.operator.get("/api/operator/sessions"), True),
    ("get", "/api/operator/sessions/{session}/record",
     lambda w: w.operator.get(f"/api/operator/sessions/{w.sessions['one']}/record"), True),
    ("get", "/api/operator/sessions/{session}/answers",
     lambda w: w.operator.get(f"/api/operator/sessions/{w.sessions['one']}/answers"), False),
    ("post", "/api/operator/sessions/{session}/undo", _operator_undo, False),
    ("post", "/api/operator/sessions/{session}/end", _operator_end, False),
    ("get", "/api/operator/actions", lambda w: w.operator.get("/api/operator/actions"), False),
    ("post", "/api/logout", lambda w: w.alice.post("/api/logout"), False),
]  # fmt: skip


def calls_shown(body: Any) -> Iterator[dict[str, Any]]:
    """Every object of an answer that holds a call's arguments (a question, a record's call)."""
    if isinstance(body, dict):
        if "args" in body:
            yield body
        for value in body.values():
            yield from calls_shown(value)
    elif isinstance(body, list):
        for value in body:
            yield from calls_shown(value)


@pytest.fixture
def bills_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[TestClient, TestClient]]:
    monkeypatch.setenv(OPERATOR_ENV, OPERATOR_TOKEN)
    desk = write_desk(tmp_path / "desk", more_source=BILLS, more_tools=", pay_bill, refund_bill")
    service = Service(desk.config(), clock=InstantClock(), secret=b"test-secret", run_threads=4)
    app = create_app(service)
    with TestClient(app) as alice:
        yield alice, TestClient(app)


def test_every_route_gives_a_decimal_as_its_exact_text_and_a_large_integer_whole(
    bills_app: tuple[TestClient, TestClient],
) -> None:
    alice, operator = bills_app
    document = alice.get("/openapi.json").json()
    operations = {(method, path) for path, item in document["paths"].items() for method in item}
    assert operations == {(method, path) for method, path, _, _ in ROUTES}

    walk = Walk(alice, operator)
    seen: dict[str, list[dict[str, Any]]] = {}
    for method, path, call, shows in ROUTES:
        answer = call(walk)
        assert answer.status_code < 300, (method, path, answer.text)
        shown = list(calls_shown(answer.json())) if answer.content else []
        assert bool(shown) == shows, (method, path, answer.text)
        for found in shown:
            assert found["args"] in EXACT, (method, path, found)
            if found.get("result") is not None:  # a call of the record that ran
                assert found["result"]["amount"] == found["args"]["amount"], (path, found)
                assert found["result"]["account"] == ACCOUNT
        seen[f"{method} {path}"] = shown

    # the same question, the same arguments, whichever route shows it
    first = {"account": ACCOUNT, "amount": LARGE}
    for route in ("post /api/sessions/{session}/turns", "get /api/sessions/{session}",
                  "get /api/inbox"):  # fmt: skip
        assert [found["args"] for found in seen[route]] == [first], route
    assert [found["args"] for found in seen["post /api/sessions/{session}/answers"]] == [
        {"account": ACCOUNT, "amount": SMALL}
    ]
    record = seen["get /api/operator/sessions/{session}/record"]
    assert [(c["tool"], c["args"]["amount"], c["result"]["amount"]) for c in record] == [
        ("pay_bill", SMALL, SMALL)
    ]
    # the operator's undo refunds exactly what was paid, as the record then says
    undone = operator.get(f"/api/operator/sessions/{walk.sessions['one']}/record").json()
    assert [(c["tool"], c["args"], c["result"]["amount"]) for c in undone] == [
        ("pay_bill", {"account": ACCOUNT, "amount": SMALL}, SMALL),
        ("refund_bill", {"account": ACCOUNT, "amount": SMALL}, SMALL),
    ]
