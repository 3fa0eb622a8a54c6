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

from .browser_support import Live, artefact, axe_version, axe_violations
from .serve_support import FIRST_ORDER, OPERATOR_TOKEN, PASSWORDS, Desk

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


def no_page_scrolls_sideways(page: Any, *, tables_whole: bool) -> None:
    """Nothing wider than the window; with `tables_whole`, every table fits its box too."""
    wide = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    offenders = page.evaluate(
        "[...document.querySelectorAll('body *')].filter(e => !e.closest('.scroll table')"
        " && e.getBoundingClientRect().right > document.documentElement.clientWidth)"
        ".map(e => e.tagName + '.' + e.className)"
    )
    assert wide <= 0, f"the page is {wide} px wider than the window: {offenders}"
    if tables_whole:
        clipped = page.evaluate(
            "[...document.querySelectorAll('table')].filter("
            "t => t.scrollWidth > t.parentElement.clientWidth + 1).map(t => t.className)"
        )
        assert clipped == [], clipped


def operator(browser: Any, live: Live, **options: Any) -> Any:
    options.setdefault("viewport", DESKTOP)
    page = browser.new_context(**options).new_page()
    page.goto(f"{live.url}/operator")
    page.fill("#operator-token", OPERATOR_TOKEN)
    page.keyboard.press("Enter")
    expect(page.locator("h2").first).to_have_text("Every session")
    return page


def test_the_operators_page_offers_what_the_run_allows_and_shows_the_undo_before_the_token(
    browser: Any, live: Live, desk: Desk
) -> None:
    alice = person(browser, live, "alice")
    send(alice, live, "alice~s-two", "charge order 4411 40.00, then update the crm for order 4411")
    click_answer(alice, "approve")
    click_answer(alice, "approve")
    expect(alice.locator(".transcript .reply")).to_contain_text("Done:")
    send(alice, live, "alice~s-asks", FIRST_ORDER)  # waits for its confirmation
    expect(alice.locator("#question")).to_have_count(1)

    for width, size in (("phone", PHONE), ("desktop", DESKTOP)):  # the desktop one undoes
        page = operator(browser, live, viewport=size)
        expect(page.locator("table.sessions tbody tr")).to_have_count(2)
        expect(page.locator("table.actions tbody tr time").first).to_have_attribute(
            "datetime", ISO_UTC
        )
        no_page_scrolls_sideways(page, tables_whole=width == "desktop")
        page.screenshot(path=artefact(f"operator-{width}"), full_page=True)
        page.goto(f"{live.url}/operator/s/alice~s-asks")  # waiting: it can be ended, not undone
        expect(page.locator("#operator-undo")).to_have_count(0)
        expect(page.locator("#operator-end")).to_have_count(1)
        expect(page.locator("#no-undo")).to_have_text(texts.serve.operator_not_undoable("waiting"))
        page.goto(f"{live.url}/operator/s/alice~s-two")  # done: it can be undone, not ended
        expect(page.locator("#operator-end")).to_have_count(0)
        plan = page.locator("#undo-plan li")
        expect(plan).to_have_text([
            "undo update_crm(order=4411) by restore_crm",
            "undo charge_card(order=4411, amount=40.0) by refund_card",
        ])  # fmt: skip
        above = page.locator("#undo-plan").bounding_box()
        token = page.locator("#undo-token").bounding_box()
        assert above is not None and token is not None and above["y"] < token["y"]
        no_page_scrolls_sideways(page, tables_whole=width == "desktop")
        page.screenshot(path=artefact(f"operator-session-{width}"), full_page=True)
        if width == "phone":
            page.context.close()
            continue
        page.fill("#undo-token", OPERATOR_TOKEN)
        page.keyboard.press("Enter")  # the token's field sends its form
        expect(page.locator("main")).to_contain_text(
            "Undone, latest first: update_crm (by restore_crm), charge_card (by refund_card)."
        )
        expect(page.locator("#operator-undo")).to_have_count(0)  # nothing left to undo now
        expect(page.locator("#no-action")).to_have_text(texts.serve.OPERATOR_NO_ACTION)
        done = page.locator("table.actions tbody tr", has_text="undo")
        expect(done).to_have_count(1)
        expect(done).to_contain_text("ok")
        expect(done.locator("time")).to_have_attribute("datetime", ISO_UTC)
        page.click("#operator-sign-out")
        expect(page.locator("#operator-token")).to_have_count(1)
        page.goto(f"{live.url}/operator/s/alice~s-two")
        expect(page.locator("#operator-undo")).to_have_count(0)
        expect(page.locator("#operator-token")).to_have_count(1)  # signed out: asked again
        page.context.close()
    assert desk.module.CALLS == ["charge_card", "update_crm", "restore_crm", "refund_card"]


def tab_to(page: Any, selector: str, limit: int = 60) -> None:
    """Press Tab until `selector` has the focus (as a person with a keyboard does)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement?.matches(s) ?? false", selector):
            return
    raise AssertionError(f"{selector} never got the focus in {limit} presses of Tab")


def test_every_answer_is_given_with_the_keyboard_alone(
    browser: Any, live: Live, desk: Desk
) -> None:
    page = person(browser, live, "alice")
    page.goto(f"{live.url}/s/alice~s-keys")
    tab_to(page, "input[name=text]")
    page.keyboard.type(FIRST_ORDER)
    page.keyboard.press("Enter")
    expect(page.locator("#question .asked")).to_have_text(
        "Run charge_card(order=4411, amount=40.0)?"
    )
    tab_to(page, '#question button[value="approve"]')
    page.keyboard.press("Enter")
    expect(page.locator("#question .asked")).to_have_text("Run update_crm(order=4411)?")
    tab_to(page, "#question input[name=reason]")
    page.keyboard.type("by hand")
    tab_to(page, '#question button[value="skip"]')
    page.keyboard.press("Space")
    expect(page.locator("#question .asked")).to_have_text(PROVISION)
    tab_to(page, '#question button[value="cancel all"]')
    page.keyboard.press("Enter")
    expect(page.locator(".transcript .reply").last).to_contain_text("you cancelled it")
    assert desk.module.CALLS == ["charge_card", "refund_card"]
    assert [a.reason for a in live.service.agent.answers("alice", session="s-keys")] == [
        None,
        "by hand",
        None,
    ]
    # an outcome question and a stuck undo, each answered from the keyboard
    page.goto(f"{live.url}/s/alice~s-keys2")
    tab_to(page, "input[name=text]")
    page.keyboard.type("ship the parcel for order 3")
    page.keyboard.press("Enter")
    tab_to(page, '#question button[value="approve"]')
    page.keyboard.press("Enter")
    tab_to(page, '#question button[value="happened"]')
    page.keyboard.press("Enter")
    expect(page.locator(".transcript .reply").last).to_contain_text("took effect")
    desk.module.UNDO_FAILS[0] = 4
    page.goto(f"{live.url}/s/alice~s-keys3")
    tab_to(page, "input[name=text]")
    page.keyboard.type("book a van for order 9, then provision the account for order 9")
    page.keyboard.press("Enter")
    for _ in range(2):
        tab_to(page, '#question button[value="approve"]')
        page.keyboard.press("Enter")
        expect(page.locator("#question .asked")).not_to_have_text(re.compile(r"^Run book_van"))
    expect(page.locator("#question.undo")).to_have_count(1)
    tab_to(page, '#question button[value="done by hand"]')
    page.keyboard.press("Enter")
    expect(page.locator(".transcript .reply").last).to_contain_text("(by hand)")


OPERATOR_PAGES = [
    ("operator", "/operator"),
    ("operator-session", "/operator/s/alice~s-axe-done"),
    ("operator-waiting", "/operator/s/alice~s-axe"),
]
PAGES = [
    ("login", "/login", False),
    ("sessions", "/", True),
    ("confirm", "/s/alice~s-axe", True),
    ("record", "/s/alice~s-axe?tab=record", True),
    ("outcome", "/s/alice~s-axe-ship", True),
    ("done", "/s/alice~s-axe-done", True),
    ("inbox", "/inbox", True),
    ("inbox-answered", "/inbox?state=answered", True),
    ("error", "/s/bob~s-none", True),
    ("operator-login", "/operator", False),
]


def test_axe_core_finds_nothing_serious_on_any_page_at_desktop_and_phone_widths(
    browser: Any, live: Live, desk: Desk
) -> None:
    alice = person(browser, live, "alice")
    send(alice, live, "alice~s-axe-done", "charge order 4411 40.00")
    click_answer(alice, "approve")
    send(alice, live, "alice~s-axe-ship", "ship the parcel for order 3")
    click_answer(alice, "approve")
    expect(alice.locator("#question.outcome")).to_have_count(1)
    send(alice, live, "alice~s-axe", FIRST_ORDER)
    click_answer(alice, "approve")
    expect(alice.locator("#question.confirm")).to_have_count(1)
    found: dict[str, Any] = {}
    for width, size in (("desktop", DESKTOP), ("phone", PHONE)):
        signed = person(browser, live, "alice", viewport=size)
        plain = browser.new_context(viewport=size).new_page()
        for name, path, signed_in in PAGES:
            page = signed if signed_in else plain
            page.goto(f"{live.url}{path}")
            expect(page.locator("main")).to_be_visible()
            found[f"{name} at {width}"] = axe_violations(page)
            page.screenshot(path=artefact(f"{name}-{width}"), full_page=True)
        ops = operator(browser, live, viewport=size)
        for name, path in OPERATOR_PAGES:
            ops.goto(f"{live.url}{path}")
            found[f"{name} at {width}"] = axe_violations(ops)
            ops.screenshot(path=artefact(f"{name}-{width}"), full_page=True)
    serious = {where: v for where, v in found.items() if v}
    assert serious == {}, f"axe-core {axe_version()}: {serious}"
    assert len(found) == 2 * (len(PAGES) + len(OPERATOR_PAGES))
