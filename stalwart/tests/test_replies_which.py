"""A reply says which write it means (issue 28, point 4).

On the main this was written against: two payments of one run were both "pay_bill" in the
reply after an abandon and in the operator's undo; the stuck question named the undo
("Undoing refund_bill failed") where the refused one named the write ("Undoing pay_bill
was not sent"); a tool's own message ("insufficient funds") reached only the record; and
a call was shown in the tool's order in its question but alphabetically elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, write_project

from stalwart import Agent, FakeClock, Reply, texts

pytestmark = pytest.mark.unit

BILLS = '''
from decimal import Decimal

from stalwart import tool

CALLS = []
FAIL = {}  # bill -> the message pay_bill raises for it
LOST = set()  # bills whose payment gets no answer (in doubt)
UNDO_FAILS = [0]


@tool(writes=True, undo="refund_bill")
def pay_bill(bill: int, amount: Decimal) -> dict:
    """Pay a bill."""
    CALLS.append(("pay_bill", bill, amount))
    if bill in FAIL:
        raise ValueError(FAIL[bill])
    if bill in LOST:
        raise TimeoutError("the bank did not answer")
    return {"bill": bill, "paid": str(amount)}


@tool(writes=True, retry_safe=True)
def refund_bill(bill: int, amount: Decimal) -> dict:
    """Refund a paid bill."""
    CALLS.append(("refund_bill", bill, amount))
    if UNDO_FAILS[0] > 0:
        UNDO_FAILS[0] -= 1
        raise RuntimeError("the refund desk is closed")
    return {"bill": bill, "refunded": str(amount)}


@tool(writes=True, irreversible=True)
def post_letter(bill: int) -> dict:
    """Post a letter about a bill."""
    CALLS.append(("post_letter", bill))
    return {"bill": bill, "posted": True}
'''

RULEBOOK = "refund_bill only after pay_bill with same bill\n"
TOKEN = "op-4b1d-which-write-it-means"
USER = "u"


@pytest.fixture
def bills(tmp_path: Path) -> Iterator[tuple[Project, Agent]]:
    project = write_project(
        tmp_path,
        tools_source=BILLS,
        tool_names=["pay_bill", "refund_bill", "post_letter"],
        rulebook=RULEBOOK,
    )
    agent = project.agent(clock=FakeClock())
    yield project, agent
    for opened in project.agents:
        opened.close()


def approve_all(agent: Agent, turn: str) -> Reply:
    reply = agent.chat(turn, user=USER)
    while reply.waiting and reply.waiting[0].kind == "confirm":
        reply = agent.confirm(USER, "approve", question=reply.waiting[0])
    return reply


def test_two_payments_are_told_apart_when_stuck_and_after_an_abandon(
    bills: tuple[Project, Agent],
) -> None:
    project, agent = bills
    assert project.module is not None
    project.module.FAIL[9] = "insufficient funds"
    project.module.UNDO_FAILS[0] = 4
    reply = approve_all(agent, "pay bill 7 30.00, then pay bill 8 45.00, then pay bill 9 10.00")
    assert reply.state == "stuck"
    # "Undoing <tool>" names the write being undone, as "Undoing <tool> was not sent" does.
    assert reply.text == (
        "This run stopped: pay_bill(bill=9) failed (ValueError). Undoing pay_bill(bill=8) "
        "failed after 4 tries (RuntimeError: the refund desk is closed). "
        "2 step(s) still need undoing."
    )
    [waiting] = reply.waiting
    assert (waiting.tool, waiting.kind) == ("refund_bill", "undo")  # the undo a retry sends
    reply = agent.answer(USER, "abandon", question=waiting)
    assert reply.state == "abandoned"
    assert reply.text == (
        "This run stopped: pay_bill(bill=9) failed (ValueError). The rollback was abandoned; "
        "still to be undone by hand: pay_bill(bill=8), pay_bill(bill=7)."
    )


def test_the_operators_undo_names_each_payment(bills: tuple[Project, Agent]) -> None:
    _, agent = bills
    agent.set_operator_token(TOKEN)
    done = approve_all(agent, "pay bill 7 30.00, then pay bill 8 45.00")
    assert done.text == (
        'Done: pay_bill(bill=7) returned {"bill":7,"paid":"30.00"}; '
        'pay_bill(bill=8) returned {"bill":8,"paid":"45.00"}.'
    )
    reply = agent.operator_undo(USER, token=TOKEN)
    assert reply.text == (
        "This run stopped: an operator undid it. Undone, latest first: "
        "pay_bill(bill=8) (by refund_bill), pay_bill(bill=7) (by refund_bill)."
    )


def test_a_cancelled_step_is_named_apart_from_the_one_that_ran(
    bills: tuple[Project, Agent],
) -> None:
    _, agent = bills
    reply = agent.chat("pay bill 7 30.00, then pay bill 8 45.00", user=USER)
    reply = agent.confirm(USER, "approve", question=reply.waiting[0])
    assert reply.waiting[0].text == "Run pay_bill(bill=8, amount=45.00)?"  # as it was
    reply = agent.confirm(USER, "cancel all", question=reply.waiting[0])
    assert reply.text == (
        "This run stopped: you cancelled it at pay_bill(bill=8). Undone, latest first: "
        "pay_bill(bill=7) (by refund_bill)."
    )
    assert reply.detail is None  # no tool failed


def test_the_outcome_question_names_the_payment_it_asks_about(
    bills: tuple[Project, Agent],
) -> None:
    project, agent = bills
    assert project.module is not None
    project.module.LOST.add(8)
    reply = approve_all(agent, "pay bill 7 30.00, then pay bill 8 45.00")
    assert reply.waiting[0].text == (
        "Did pay_bill(bill=8) take effect? The call was sent and no answer came back."
    )
    reply = agent.answer(USER, "did not happen", question=reply.waiting[0])
    assert reply.text == (
        "This run stopped: you said pay_bill(bill=8) did not take effect. Undone, latest "
        "first: pay_bill(bill=7) (by refund_bill)."
    )


def test_the_same_call_twice_is_told_apart_by_its_step(bills: tuple[Project, Agent]) -> None:
    project, agent = bills
    assert project.module is not None
    project.module.FAIL[9] = "insufficient funds"
    reply = approve_all(agent, "pay bill 7 30.00, then pay bill 7 30.00, then pay bill 9 10.00")
    assert reply.text == (
        "This run stopped: pay_bill(bill=9) failed (ValueError). Undone, latest first: "
        "pay_bill(bill=7) at step 2 (by refund_bill), pay_bill(bill=7) at step 1 "
        "(by refund_bill)."
    )


def test_only_the_arguments_that_tell_calls_apart_are_named() -> None:
    calls: list[tuple[str, str, dict[str, Any], int]] = [
        ("a", "pay_bill", {"bill": 7, "amount": Decimal("30.00")}, 1),
        ("b", "pay_bill", {"bill": 7, "amount": Decimal("45.00")}, 2),
        ("c", "pay_bill", {"bill": 8, "amount": Decimal("45.00")}, 3),
        ("d", "post_letter", {"bill": 7}, 4),
        ("e", "pay_bill", {"bill": 8, "amount": Decimal("45.00")}, 5),
    ]
    assert texts.call_labels(calls) == {
        "a": "pay_bill(bill=7, amount=30.00)",
        "b": "pay_bill(bill=7, amount=45.00)",
        "c": "pay_bill(bill=8, amount=45.00) at step 3",
        "d": "post_letter",  # one call of its tool: its name alone, as the chapter prints it
        "e": "pay_bill(bill=8, amount=45.00) at step 5",
    }
    # Two calls with no arguments at all differ by their step alone.
    assert texts.call_labels([("a", "ping", {}, 1), ("b", "ping", {}, 2)]) == {
        "a": "ping at step 1",
        "b": "ping at step 2",
    }


def test_undoing_names_the_write_in_every_question_of_a_stuck_rollback() -> None:
    # The chapter's sentence, word for word, with <tool> the write being undone.
    failed = texts.undo_question("charge_card", 4, "RuntimeError: down", 2)
    assert failed == (
        "Undoing charge_card failed after 4 tries (RuntimeError: down). "
        "2 step(s) still need undoing."
    )
    doubted = texts.undo_question(
        "charge_card", 4, "TimeoutError: lost", 1, maybe_done="refund_card"
    )
    assert doubted == (
        "Undoing charge_card failed after 4 tries (TimeoutError: lost). An earlier try of "
        "refund_card got no answer, so it may have taken effect. 1 step(s) still need undoing."
    )
    not_sent = texts.undo_not_sent_question("charge_card", "refund_card", "no charge", 1)
    assert not_sent.startswith("Undoing charge_card was not sent: no charge.")


def test_the_tools_own_message_is_under_the_reply(bills: tuple[Project, Agent]) -> None:
    project, agent = bills
    assert project.module is not None
    project.module.FAIL[9] = "insufficient funds"
    reply = approve_all(agent, "pay bill 9 10.00")
    assert reply.text == (
        "This run stopped: pay_bill failed (ValueError). Nothing had been written, so nothing "
        "needed undoing."
    )
    assert reply.detail == "pay_bill said: insufficient funds"
    # A message with characters that do not show is escaped, and a long one cut short.
    project.module.FAIL[9] = "no\u202efunds " + "x" * 400
    reply = approve_all(agent, "pay bill 9 10.00")
    assert reply.detail is not None
    assert reply.detail.startswith("pay_bill said: no\\u202efunds xxx")
    assert "\u202e" not in reply.detail
    assert len(reply.detail) <= texts.DETAIL_LIMIT and reply.detail.endswith("…")
    # A run that ended well has no such line.
    assert approve_all(agent, "pay bill 7 30.00").detail is None


def test_the_tools_message_stays_under_a_stuck_reply(bills: tuple[Project, Agent]) -> None:
    project, agent = bills
    assert project.module is not None
    project.module.FAIL[9] = "the bank said no"
    project.module.UNDO_FAILS[0] = 4
    reply = approve_all(agent, "pay bill 7 30.00, then pay bill 9 10.00")
    assert reply.state == "stuck"
    assert reply.detail == "pay_bill(bill=9) said: the bank said no"


def test_a_call_is_shown_one_way_in_the_tools_order() -> None:
    args = {"bill": 7, "amount": Decimal("30.00")}
    assert texts.shown_args(args) == [("bill", "7"), ("amount", "30.00")]
    assert texts.call_text("pay_bill", args) == "pay_bill(bill=7, amount=30.00)"


def test_an_undo_is_written_in_memory_as_it_is_sent(bills: tuple[Project, Agent]) -> None:
    # While a run is stuck its memory is not rewound: the page shows the undo's call.
    project, agent = bills
    assert project.module is not None
    project.module.FAIL[9] = "insufficient funds"
    project.module.UNDO_FAILS[0] = 4
    assert approve_all(agent, "pay bill 7 30.00, then pay bill 9 10.00").state == "stuck"
    said = [m.content for m in agent.memory(USER) if m.role == "assistant"]
    assert said == [
        "call pay_bill(bill=7, amount=30.00)",
        "call pay_bill(bill=9, amount=10.00)",
        "call refund_bill(bill=7, amount=30.00)",
    ]
