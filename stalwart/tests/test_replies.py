"""The replies a person reads: the chapter's sentences exactly, and ours in the same voice."""

from __future__ import annotations

import pytest

from stalwart import texts

pytestmark = pytest.mark.unit


def test_the_chapters_failed_order_replies_are_exact() -> None:
    cause = texts.failed_because("provision_account", "RuntimeError")
    assert texts.stopped_reply(
        cause, [("update_crm", "restore_crm"), ("charge_card", "refund_card")], [], []
    ) == (
        "This run stopped: provision_account failed (RuntimeError). "
        "Undone, latest first: update_crm (by restore_crm), charge_card (by refund_card)."
    )
    assert texts.stopped_reply(cause, [("charge_card", "refund_card")], ["send_receipt"], []) == (
        "This run stopped: provision_account failed (RuntimeError). Undone, latest first: "
        "charge_card (by refund_card). Not undoable, and left as they are: send_receipt."
    )


def test_the_chapters_confirmation_warnings_are_exact() -> None:
    assert texts.IRREVERSIBLE_WARNING == "Nothing can undo this step once it runs."
    assert texts.IRREVERSIBLE_IN_ATOMIC_RUN == (
        "Nothing undoes this step, and the steps after it cannot undo it."
    )
    assert texts.confirm_question(
        "send_receipt", {"order": 4411}, irreversible=True, in_atomic_run=True
    ) == (
        "Run send_receipt(order=4411)? Nothing undoes this step, and the steps after it "
        "cannot undo it.\nNothing can undo this step once it runs."
    )
    assert (
        texts.confirm_question(
            "charge_card", {"order": 4411, "amount": 40.0}, irreversible=False, in_atomic_run=True
        )
        == "Run charge_card(order=4411, amount=40.0)?"
    )


def test_the_stuck_reply_follows_the_chapters_question() -> None:
    question = texts.undo_question("refund_card", 4, "RuntimeError: down", 2)
    assert texts.stuck_reply(texts.cancelled_because("send_receipt"), question) == (
        "This run stopped: you cancelled it at send_receipt. Undoing refund_card failed "
        "after 4 tries (RuntimeError: down). 2 step(s) still need undoing."
    )


def test_a_refused_step_with_nothing_written_says_so() -> None:
    reason = "its amount is 900.0, and line 6 of policy.co allows at most 500"
    cause = texts.refused_because("charge_card", reason)
    assert texts.stopped_reply(cause, [], [], []) == (
        "This run stopped: the check refused charge_card, because its amount is 900.0, and "
        "line 6 of policy.co allows at most 500. Nothing had been written, so nothing needed "
        "undoing."
    )
    assert texts.refusal_sentence("charge_card", reason) == (
        "charge_card is refused: its amount is 900.0, and line 6 of policy.co allows at most 500."
    )


def test_a_happy_reply_says_briefly_what_each_step_returned() -> None:
    long_result = {"text": "x" * 300}
    reply = texts.done_reply([("get_order", {"order": 1}, "ran"), ("note", long_result, "ran")])
    assert reply.startswith('Done: get_order returned {"order":1}; note returned {"text":"xxx')
    assert reply.endswith("…."), "a long result is cut short"
    assert len(reply) < 200
    assert texts.done_reply([]) == "Done: there was nothing to run."
