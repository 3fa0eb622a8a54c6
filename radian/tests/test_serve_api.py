"""`radian arc serve`'s JSON API and its token, through Starlette's TestClient over the real
app on a fleet of real arc files (serve_support.write_fleet)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_support import EXHAUSTED_REASON, LOG_LINES, TestClient, set_state, write_fleet

from radian.arc import commands, show, texts
from radian.arc.clock import FakeClock
from radian.arc.config import ArcConfig
from radian.arc.errors import UsageError
from radian.arc.serve import access
from radian.arc.serve.app import create_app
from radian.arc.serve.fleet import Fleet, Notifier
from radian.arc.states import State
from radian.arc.store import ArcStore

pytestmark = pytest.mark.unit

LOCAL = "http://127.0.0.1"
TOKEN = "s3cret-token"


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> ArcStore:
    return write_fleet(tmp_path, clock)


@pytest.fixture
def fleet(store: ArcStore, clock: FakeClock) -> Fleet:
    # a timer that stands still: no read is ever held back for the cost of the last one
    return Fleet(ArcStore(store.repo_root), clock, ArcConfig(), poll_secs=0.05, timer=lambda: 0.0)


@pytest.fixture
def client(fleet: Fleet) -> Iterator[TestClient]:
    with TestClient(create_app(fleet), base_url=LOCAL) as http:
        yield http


def test_state_is_the_status_with_the_running_attempts_and_the_failures(
    client: TestClient,
) -> None:
    answer = client.get("/api/v1/state")
    assert answer.status_code == 200
    state = answer.json()
    assert state["generated_at"] == state["at"] == "2026-11-30T07:01:30Z"  # the injected clock
    web = {plan["name"]: plan for plan in state["plans"]}["web"]
    assert web["counts"] == {"doing.working": 1, "failed.exhausted": 1, "todo.retry_wait": 1,
                             "review.rework_pending": 1, "todo.ready": 1}  # fmt: skip
    assert web["cost_usd"] == pytest.approx(0.35)
    assert web["budget_left_usd"] == pytest.approx(0.65)
    assert state["counts"]["todo.ready"] == 1 + 6  # w5 and the six tasks of "big"
    [running] = state["running"]
    assert running["task"] == "w1" and running["attempt_id"] == "001"
    assert running["started_at"] == "2026-11-30T07:00:00Z"
    assert running["elapsed_secs"] == pytest.approx(90)
    assert running["tail"] == LOG_LINES[-20:]  # the last lines of its worker.log
    assert running["last_output_at"] is not None
    failures = {failure["task"]: failure for failure in state["failures"]}
    assert set(failures) == {"w2", "w3"}
    assert failures["w2"]["state"] == "failed.exhausted"
    assert failures["w2"]["class"] == "infrastructure"
    assert failures["w2"]["reason"] == EXHAUSTED_REASON
    assert failures["w3"]["reason"] == "unavailable overloaded"
    assert failures["w3"]["retry_at"] == "2026-11-30T07:06:30Z"
    assert [waiting["task"] for waiting in state["waiting"]] == ["w4"]


def test_a_task_is_shows_document_and_an_unknown_one_a_404(
    client: TestClient, store: ArcStore
) -> None:
    answer = client.get("/api/v1/tasks/w2")
    assert answer.status_code == 200
    assert answer.json() == show.one_task_document(store, ArcConfig(), "w2")
    assert answer.json()["attempts"][0]["reason"] == EXHAUSTED_REASON
    assert client.get("/api/v1/tasks/b3").json()["state"] == "todo.ready"  # loaded, no folder
    missing = client.get("/api/v1/tasks/nope")
    assert missing.status_code == 404
    assert missing.json() == {"error": {"code": "task_not_found",
                                        "message": "no task named 'nope'"}}  # fmt: skip
    assert client.get("/api/v1/nowhere").json()["error"]["code"] == "not_found"
    wrong = client.post("/api/v1/state")
    assert wrong.status_code == 405
    assert wrong.json()["error"]["code"] == "method_not_allowed"


def test_the_state_follows_a_change_and_refresh_reads_again_at_once(
    client: TestClient, store: ArcStore, clock: FakeClock, fleet: Fleet
) -> None:
    first = client.get("/api/v1/state").json()
    assert fleet.state() is fleet.state()  # nothing changed: the same read
    set_state(store, clock, "w5", State.INTEGRATED)  # through the journal
    after = client.get("/api/v1/state").json()
    assert after["counts"].get("done.integrated") == 1
    assert after["counts"]["todo.ready"] == first["counts"]["todo.ready"] - 1
    clock.advance(30)
    version = fleet.notifier.version
    refreshed = client.post("/api/v1/refresh")
    assert refreshed.status_code == 202
    assert refreshed.json()["queued"] is True
    assert refreshed.json()["requested_at"] == "2026-11-30T07:02:00Z"
    assert fleet.notifier.version == version + 1  # the event streams are woken
    assert client.get("/api/v1/state").json()["generated_at"] == "2026-11-30T07:02:00Z"


def test_reads_take_at_most_a_quarter_of_the_time_and_stale_ones_are_read_again(
    store: ArcStore, clock: FakeClock
) -> None:
    ticks = iter([0.0, 1.0, 2.0, 5.0, 5.5, 5.5, 16.0, 16.5])
    fleet = Fleet(ArcStore(store.repo_root), clock, ArcConfig(), timer=lambda: next(ticks))
    first = fleet.state()  # read from 0 to 1 s: none before 4 s
    set_state(store, clock, "w5", State.INTEGRATED)
    assert fleet.state() is first  # at 2 s: changed, held back
    second = fleet.state()  # at 5 s: read again (till 5.5 s)
    assert second is not first and second.status.counts["done.integrated"] == 1
    assert fleet.state() is second  # at 5.5 s: nothing changed
    clock.advance(60)
    third = fleet.state()  # at 16 s: nothing changed, but the read is over 10 s old
    assert third is not second and third.status.at == "2026-11-30T07:02:30Z"


def test_the_event_stream_sends_the_rendered_fleet_and_ends_when_the_server_stops(
    client: TestClient, fleet: Fleet, store: ArcStore, clock: FakeClock
) -> None:
    threading.Timer(0.3, lambda: set_state(store, clock, "w5", State.INTEGRATED)).start()
    threading.Timer(1.0, fleet.close).start()  # what `radian arc serve` does when stopped
    answer = client.get("/events")  # returns once the stream has ended
    assert answer.headers["content-type"].startswith("text/event-stream")
    events = answer.text.split("\n\n")[:-1]
    assert len(events) == 2  # the fleet, then the fleet after the change; nothing unchanged
    assert all(event.startswith("event: update\ndata: ") for event in events)
    assert 'data-state="done.integrated">0<' in events[0]
    assert 'data-state="done.integrated">1<' in events[1]


def test_the_notifier_wakes_a_waiting_stream_from_another_thread() -> None:
    notifier = Notifier()

    async def wait() -> tuple[int, float]:
        loop = asyncio.get_running_loop()
        began = loop.time()
        threading.Timer(0.05, notifier.changed).start()
        version = await notifier.wait(0, timeout=10)
        return version, loop.time() - began

    version, waited = asyncio.run(wait())
    assert version == 1 and waited < 5


def test_a_token_is_needed_on_every_request_and_the_cookie_holds_no_token(
    fleet: Fleet,
) -> None:
    with TestClient(create_app(fleet, token=TOKEN), base_url=LOCAL) as http:
        for path in ("/", "/api/v1/state", "/static/app.js", "/events"):
            refused = http.get(path)
            assert refused.status_code == 401, path
            assert refused.json()["error"]["code"] == "unauthorized"
            assert refused.headers["www-authenticate"] == "Bearer"
        assert http.post("/api/v1/refresh").status_code == 401
        wrong = http.get("/api/v1/state", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        right = http.get("/api/v1/state", headers={"Authorization": f"Bearer {TOKEN}"})
        assert right.status_code == 200 and right.json()["plans"]
        assert http.get("/?token=nope", follow_redirects=False).status_code == 401
        signed = http.get(f"/?token={TOKEN}", follow_redirects=False)
        assert signed.status_code == 303 and signed.headers["location"] == "/"
        cookie = http.cookies.get(access.COOKIE)
        assert cookie is not None and TOKEN not in cookie
        assert http.get("/api/v1/state").status_code == 200  # the cookie alone
        assert "radian arc" in http.get("/").text
    with TestClient(create_app(fleet, token=TOKEN), base_url="http://arc.example") as http:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        assert http.get("/api/v1/state", headers=headers).status_code == 200  # any host


def test_without_a_token_only_a_loopback_host_is_answered(fleet: Fleet) -> None:
    with TestClient(create_app(fleet), base_url="http://localhost:8780") as http:
        assert http.get("/api/v1/state").status_code == 200
    with TestClient(create_app(fleet), base_url="http://rebound.example") as http:
        refused = http.get("/api/v1/state")
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == "wrong_host"


def test_a_host_other_than_127_0_0_1_needs_a_token() -> None:
    access.check_token("127.0.0.1", None)
    access.check_token("0.0.0.0", TOKEN)
    for host, token in (("0.0.0.0", None), ("192.168.1.5", ""), ("::", None)):
        with pytest.raises(UsageError) as refused:
            access.check_token(host, token)
        assert refused.value.exit_code == 2
        assert str(refused.value) == (
            f"radian arc serve --host {host} needs a token: give --token or set "
            "RADIAN_ARC_SERVE_TOKEN (only 127.0.0.1 is served without one)"
        )


def test_the_page_lists_fifty_waiting_tasks_and_says_how_many_more(
    tmp_path: Path, clock: FakeClock
) -> None:
    store = ArcStore(tmp_path)
    commands.add_plan(store, "paused")
    for n in range(53):
        commands.add_task(store, clock, "paused", f"t{n}", "Do.\n")
        set_state(store, clock, f"t{n}", State.PAUSED_BUDGET)
    fleet = Fleet(store, clock, ArcConfig(), timer=lambda: 0.0)
    with TestClient(create_app(fleet), base_url=LOCAL) as http:
        page = http.get("/").text
        assert len(http.get("/api/v1/state").json()["waiting"]) == 53
    assert page.count('<tr data-task="t') == 50
    assert texts.serve_more_waiting(3) in page
