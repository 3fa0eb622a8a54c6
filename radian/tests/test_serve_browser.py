"""`radian arc serve`'s page in headless Chromium (Debian's, through Playwright): what a
person watching the fleet sees, and that it follows the fleet without a reload."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_support import (
    CHROMIUM_ARGS,
    EXHAUSTED_REASON,
    chromium,
    serve_in_thread,
    set_state,
    write_fleet,
)

from radian.arc import texts
from radian.arc.clock import FakeClock
from radian.arc.config import ArcConfig
from radian.arc.serve.fleet import Fleet
from radian.arc.states import State
from radian.arc.store import ArcStore
from radian.arc.worker.files import AttemptFiles

pytestmark = [pytest.mark.acceptance, pytest.mark.browser]
playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect
expect.set_options(timeout=20_000)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = chromium()
    with playwright_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def test_the_page_shows_the_fleet_and_follows_it_without_a_reload(
    browser: Any, tmp_path: Path, clock: FakeClock
) -> None:
    store = write_fleet(tmp_path, clock)
    fleet = Fleet(ArcStore(tmp_path), clock, ArcConfig(), poll_secs=0.1)
    with serve_in_thread(fleet) as live:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{live.url}/")
        web = page.locator('tr[data-plan="web"]')
        expect(web.locator('[data-count="tasks"]')).to_have_text("5")
        expect(web.locator('[data-state="todo.ready"]')).to_have_text("1")
        expect(web.locator('[data-state="doing.working"]')).to_have_text("1")
        expect(web.locator('[data-state="done.integrated"]')).to_have_text("0")
        expect(web.locator("[data-budget-left]")).to_have_text("$0.65")
        expect(page.locator('tr[data-plan="big"] [data-state="todo.ready"]')).to_have_text("6")
        tail = page.locator('.running[data-task="w1"] pre.tail')
        expect(tail).to_contain_text("step 30: editing <src/app.py>")  # escaped, shown as is
        expect(tail).not_to_contain_text("step 10:")  # the last 20 lines only
        expect(page.locator('.failures tr[data-task="w2"] .reason')).to_have_text(EXHAUSTED_REASON)
        expect(page.locator('.waiting tr[data-task="w4"]')).to_contain_text("1 major finding")
        # the event stream is open (its first update came), then the fleet changes on disk
        expect(page.locator("#fleet")).to_have_attribute("data-updates", re.compile("[1-9]"))
        page.evaluate("window.notReloaded = true")
        set_state(store, clock, "w5", State.INTEGRATED)
        expect(web.locator('[data-state="done.integrated"]')).to_have_text("1")
        expect(web.locator('[data-state="todo.ready"]')).to_have_text("0")
        log = AttemptFiles(store.attempt_dir("w1", "001")).log
        with log.open("a") as stream:
            stream.write("step 31: the tests pass\n")
        expect(tail).to_contain_text("step 31: the tests pass")
        set_state(store, clock, "w1", State.VERIFYING)
        expect(page.locator(".running")).to_have_count(0)
        expect(page.locator("#fleet")).to_contain_text(texts.SERVE_NO_RUNNING)
        assert page.evaluate("window.notReloaded") is True
        page.close()


def test_with_a_token_the_page_signs_in_once_and_stays_live(
    browser: Any, tmp_path: Path, clock: FakeClock
) -> None:
    store = write_fleet(tmp_path, clock)
    fleet = Fleet(ArcStore(tmp_path), clock, ArcConfig(), poll_secs=0.1)
    with serve_in_thread(fleet, token="browser-token") as live:
        context = browser.new_context()
        page = context.new_page()
        refused = page.goto(f"{live.url}/")
        assert refused is not None and refused.status == 401
        page.goto(f"{live.url}/?token=browser-token")
        assert page.url == f"{live.url}/"  # the token has left the address
        web = page.locator('tr[data-plan="web"]')
        expect(web.locator('[data-state="failed.cancelled"]')).to_have_text("0")
        expect(page.locator("#fleet")).to_have_attribute("data-updates", re.compile("[1-9]"))
        set_state(store, clock, "w5", State.CANCELLED)
        expect(web.locator('[data-state="failed.cancelled"]')).to_have_text("1")
        context.close()
