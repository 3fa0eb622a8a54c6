"""The interface as a desk's staff meet it (issue 32), in headless Chromium (Debian's,
through Playwright): times in the viewer's zone, who answered what, reasons, replies a
person reads, the inbox, the outcome question's evidence, the operator's page, and the
keyboard, labels and axe-core on every page, with screenshots kept as artefacts."""

from __future__ import annotations

import datetime
import re
import zoneinfo
from typing import Any

import pytest

from stalwart import texts
from stalwart.serve.pages import anchor

from .browser_support import Live, artefact
from .serve_support import FIRST_ORDER, PASSWORDS, Desk

pytestmark = [pytest.mark.acceptance, pytest.mark.browser]
playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect
expect.set_options(timeout=20_000)

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
PROVISION = re.compile(r"^Run provision_account\(order=4411\)\? ")
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$")


def person(browser: Any, live: Live, user: str, **options: Any) -> Any:
    """A browser context of its own, signed in as `user` (with the keyboard)."""
    options.setdefault("viewport", DESKTOP)
    context = browser.new_context(**options)
    page = context.new_page()
    page.goto(f"{live.url}/login")
    page.fill("input[name=user]", user)
    page.fill("input[name=password]", PASSWORDS[user])
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_have_text("Your sessions")
    return page


def send(page: Any, live: Live, session: str, turn: str) -> None:
    page.goto(f"{live.url}/s/{session}")
    page.fill("input[name=text]", turn)
    page.click("#send")


def click_answer(page: Any, given: str) -> None:
    question = page.locator("#question")
    asked = question.get_attribute("data-question-id")
    question.locator(f'button[value="{given}"]').click()
    expect(page.locator(f'#question[data-question-id="{asked}"]')).to_have_count(0)


def test_times_show_in_the_viewers_zone_and_the_record_says_who_answered_what_and_why(
    browser: Any, live: Live, desk: Desk
) -> None:
    page = person(browser, live, "alice", timezone_id="Asia/Tokyo", locale="en-US")
    send(page, live, "alice~s-audit", FIRST_ORDER)
    asked = page.locator("#question .asked-at time")
    expect(asked).to_have_attribute("datetime", ISO_UTC)
    expect(asked).to_have_text(re.compile(r"now|seconds? ago"))  # relative: it just came
    expect(asked).to_have_attribute("title", re.compile(r"GMT\+9"))  # the viewer's zone
    sent = page.locator(".turn-pair .meta.sent time").first
    expect(sent).to_have_text(re.compile(r"GMT\+9$"))  # written by the script, not UTC
    click_answer(page, "approve")
    page.fill("#question input[name=reason]", "the CRM is updated by hand")
    click_answer(page, "skip")
    page.fill("#question input[name=reason]", "wrong customer")
    click_answer(page, "cancel all")
    expect(page.locator(".transcript .reply").last).to_have_text(
        "This run stopped: you cancelled it at provision_account. "
        "Undone, latest first: charge_card (by refund_card)."
    )
    page.click("#tab-record")
    rows = page.locator("table.record tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0).locator(".answered")).to_contain_text("approve by alice")
    approved = rows.nth(0).locator(".answered time")
    expect(approved).to_have_attribute("title", re.compile(r"GMT\+9$"))
    in_tokyo = datetime.datetime.fromisoformat(approved.get_attribute("datetime") or "")
    in_tokyo = in_tokyo.astimezone(zoneinfo.ZoneInfo("Asia/Tokyo"))
    expect(approved).to_contain_text(in_tokyo.strftime("%H:%M:%S"))  # the viewer's clock
    expect(rows.nth(1).locator(".answered")).to_contain_text("skip by alice")
    expect(rows.nth(1).locator(".answered .reason")).to_have_text(
        texts.serve.answer_reason("the CRM is updated by hand")
    )
    given = page.locator("table.answers tbody tr")
    expect(given).to_have_count(3)
    expect(given.nth(2)).to_contain_text("cancel all")
    expect(given.nth(2).locator(".reason")).to_have_text("wrong customer")
    for time in page.locator("time").all():
        assert ISO_UTC.match(time.get_attribute("datetime") or ""), time.inner_html()
    page.screenshot(path=artefact("record-audit-desktop"), full_page=True)
    agent = live.service.agent
    assert [a.reason for a in agent.answers("alice", session="s-audit")] == [
        None, "the CRM is updated by hand", "wrong customer"
    ]  # fmt: skip


def test_a_done_run_reads_as_sentences_and_a_table_with_the_raw_reply_one_click_away(
    browser: Any, live: Live
) -> None:
    page = person(browser, live, "alice")
    send(page, live, "alice~s-read", "charge order 4411 40.00")
    click_answer(page, "approve")
    reply = page.locator(".transcript .reply").last
    expect(reply).to_contain_text("Done: charge_card returned")
    expect(reply.locator("p.said")).to_have_text("Done: charge_card returned.")
    expect(reply.locator("table.result caption")).to_have_text("charge_card")
    expect(reply.locator("table.result th")).to_have_text(["amount", "charge", "order"])
    expect(reply).not_to_contain_text("{")  # no JSON a person has to read
    raw = page.locator(".turn-pair details.raw").last
    expect(raw.locator("pre")).to_be_hidden()
    raw.locator("summary").click()
    expect(raw.locator("pre")).to_contain_text('Done: charge_card returned {"')
    memory = page.locator("details.memory")
    expect(memory).not_to_have_attribute("open", "")  # closed by default
    expect(memory.locator("ol")).to_be_hidden()


def test_a_session_is_called_by_its_first_turn_or_the_name_its_person_gives(
    browser: Any, live: Live
) -> None:
    page = person(browser, live, "alice")
    send(page, live, "alice~s-named", "get order 4411")
    expect(page.locator(".transcript .reply")).to_have_count(1)
    page.reload()
    expect(page.locator("h1#title")).to_have_text("get order 4411")
    page.goto(f"{live.url}/")
    expect(page.locator("ul.sessions a")).to_have_text(["get order 4411"])
    page.goto(f"{live.url}/s/alice~s-named")
    page.locator("details.rename summary").click()
    page.fill("#new-title", "Order 4411 for Mrs Reis")
    page.click("#rename")
    expect(page.locator("h1#title")).to_have_text("Order 4411 for Mrs Reis")
    page.goto(f"{live.url}/")
    expect(page.locator("ul.sessions a")).to_have_text(["Order 4411 for Mrs Reis"])
    assert "alice~s-named" not in page.locator("ul.sessions").inner_text()


def test_the_inbox_lists_what_waits_newest_first_filters_it_and_answers_a_confirmation(
    browser: Any, live: Live, desk: Desk
) -> None:
    page = person(browser, live, "alice")
    send(page, live, "alice~s-ship", "ship the parcel for order 3")
    click_answer(page, "approve")  # its answer is lost: an outcome question
    expect(page.locator("#question.outcome")).to_have_count(1)
    send(page, live, "alice~s-order", FIRST_ORDER)  # then a confirmation, newer
    expect(page.locator("#question.confirm")).to_have_count(1)
    page.goto(f"{live.url}/inbox")
    items = page.locator(".inbox li.waiting")
    expect(items).to_have_count(2)
    expect(items.locator(".kind")).to_have_text(["confirm", "outcome"])  # newest first
    expect(items.nth(0).locator(".head a")).to_have_text(FIRST_ORDER[:59] + "…")
    expect(items.nth(1).locator(".head a")).to_have_text("ship the parcel for order 3")
    expect(items.nth(0).locator(".what")).to_have_text("Run charge_card(order=4411, amount=40.0)?")
    expect(items.nth(0).locator("time")).to_have_attribute("datetime", ISO_UTC)
    expect(items.nth(1).locator("button")).to_have_count(0)  # an outcome: on its page only
    page.screenshot(path=artefact("inbox-desktop"), full_page=True)
    page.select_option("#filter-kind", "outcome")
    page.click("#filter")
    expect(items).to_have_count(1)
    expect(items.locator(".kind")).to_have_text(["outcome"])
    page.select_option("#filter-kind", "confirm")
    page.click("#filter")
    expect(items).to_have_count(1)
    # answered from the inbox: bound to that question, and the next one shows, live
    items.nth(0).locator('button[value="approve"]').click()
    expect(items.locator(".what")).to_have_text(["Run update_crm(order=4411)?"])
    assert desk.module.CALLS == ["ship_parcel", "charge_card"]
    items.nth(0).locator("input[name=reason]").fill("not today")
    items.nth(0).locator('button[value="skip"]').click()
    expect(items.locator(".what")).to_have_text([PROVISION])
    page.select_option("#filter-state", "answered")
    page.click("#filter")
    answered = page.locator(".inbox li.answered")
    expect(answered).to_have_count(3)
    expect(answered.locator(".given")).to_have_text(
        ["skip by alice · reason: not today", "approve by alice", "approve by alice"]
    )
    page.set_viewport_size(PHONE)
    page.screenshot(path=artefact("inbox-phone"), full_page=True)


def test_an_inbox_button_answers_only_its_own_question(
    browser: Any, live: Live, desk: Desk
) -> None:
    page = person(browser, live, "alice", java_script_enabled=False)
    send(page, live, "alice~s-bound", FIRST_ORDER)
    page.goto(f"{live.url}/inbox")
    stale = page.locator('.inbox li.waiting button[value="approve"]')
    other = page.context.new_page()  # the session's own page answers first
    other.goto(f"{live.url}/s/alice~s-bound")
    other.locator('#question button[value="approve"]').click()
    expect(other.locator("#question .asked")).to_have_text("Run update_crm(order=4411)?")
    stale.click()
    expect(page.locator(".error")).to_contain_text(
        "That button answers a question that no longer waits"
    )
    assert desk.module.CALLS == ["charge_card"]  # update_crm was never approved by it
    page.goto(f"{live.url}/inbox")
    page.locator('.inbox li.waiting button[value="approve"]').click()  # no script: a POST
    expect(page.locator("h1")).to_have_text("Inbox")  # back to the inbox
    expect(page.locator(".inbox li.waiting .what")).to_have_text(PROVISION)
    assert desk.module.CALLS == ["charge_card", "update_crm"]


def test_the_outcome_question_shows_what_to_check_and_links_to_the_call(
    browser: Any, live: Live
) -> None:
    page = person(browser, live, "alice")
    send(page, live, "alice~s-doubt", "ship the parcel for order 3")
    click_answer(page, "approve")
    question = page.locator("#question.outcome")
    expect(question.locator(".asked")).to_have_text(
        "Did ship_parcel take effect? The call was sent and no answer came back."
    )
    (call,) = live.service.agent.record("alice", session="s-doubt")
    assert call.key
    evidence = question.locator(".evidence")
    expect(evidence.locator("code.key")).to_have_text(call.key)
    expect(evidence.locator("time")).to_have_attribute("datetime", ISO_UTC)
    expect(question.locator("table.args")).to_contain_text("order")
    page.screenshot(path=artefact("outcome-desktop"), full_page=True)
    evidence.locator("a.record-link").click()
    row = page.locator(f"#{anchor(call.call_id)}")
    expect(row).to_contain_text("ship_parcel(order=3)")
    expect(row).to_contain_text("in_doubt")
    assert page.url.endswith(f"?tab=record#{anchor(call.call_id)}")
    expect(row).to_have_class(re.compile(r"\btargeted\b"))  # marked, and kept so when redrawn
