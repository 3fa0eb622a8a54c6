"""The interface under load, on loopback: `python stalwart/benchmarks/serve_load.py`.

A real `stalwart serve` process (SQLite record, the desk of the interface's tests) and
`--sessions` (50) sessions driven at once through the JSON API to their replies: a turn,
then the approval of a write whose tool sleeps `--sleep` seconds (0.2). Half the sessions
send their approval twice at once (a double click): exactly one of the two may be taken.
Meanwhile one more session's page is fetched again and again: it must stay responsive
while every run thread is busy in a sleeping tool.

It prints the API's requests per second and the p50/p95 latency of its requests, the
page's p50/p95, and checks the record and the tool's own log: every session done, every
sleeping write run exactly once under its key, no approval lost or applied twice. Bounded:
a fixed number of requests, every one with a timeout, on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))  # the interface tests' desk and server helper

from serve.serve_support import (  # noqa: E402
    OPERATOR_ENV,
    OPERATOR_TOKEN,
    PASSWORDS,
    Served,
    write_desk,
)

from stalwart.record import open_store  # noqa: E402

SLEEPING_TOOL = '''

import json as _json
import os as _os
import pathlib as _pathlib
import time as _time

from stalwart import current_call as _current_call


@tool(writes=True, irreversible=True)
def pack_parcel(order: int) -> dict[str, object]:
    """Pack the parcel of an order."""
    _time.sleep(float(_os.environ["STALWART_BENCH_SLEEP"]))
    call = _current_call()
    with open(_pathlib.Path(__file__).parent / "packed.log", "a") as out:
        out.write(_json.dumps([order, call.key if call else None]) + "\\n")
    return {"order": order, "packed": True}
'''
TIMEOUT_SECS = 60.0


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def drive(url: str, sessions: int) -> dict[str, Any]:
    latencies: list[float] = []
    page_latencies: list[float] = []
    statuses: dict[int, int] = {}
    async with httpx.AsyncClient(base_url=url, timeout=TIMEOUT_SECS) as http:
        login = await http.post(
            "/api/login", json={"user": "alice", "password": PASSWORDS["alice"]}
        )
        headers = {"X-CSRF-Token": login.json()["csrf"]}

        async def timed(method: str, path: str, **options: Any) -> httpx.Response:
            started = time.perf_counter()
            answer = await http.request(method, path, headers=headers, **options)
            latencies.append(time.perf_counter() - started)
            statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
            return answer

        async def new_session() -> str:
            # The server names a session (POST /api/sessions); a name made up here is
            # refused as nobody's.
            made = await timed("POST", "/api/sessions")
            assert made.status_code == 201, made.text
            session: str = made.json()["session"]
            return session

        watched = await new_session()
        await timed("POST", f"/api/sessions/{watched}/turns", json={"text": "get order 4411"})

        async def one(number: int) -> tuple[str, str]:
            session = await new_session()
            reply = (
                await timed(
                    "POST",
                    f"/api/sessions/{session}/turns",
                    json={"text": f"pack the parcel for order {number}"},
                )
            ).json()
            assert "waiting" in reply, (session, reply)
            body = {"question_id": reply["waiting"][0]["question_id"], "answer": "approve"}
            sends = 2 if number % 2 else 1  # a double click on every other session
            answers = await asyncio.gather(
                *(
                    timed("POST", f"/api/sessions/{session}/answers", json=body)
                    for _ in range(sends)
                )
            )
            taken = [a.json() for a in answers if a.status_code == 200]
            refused = [a.json()["code"] for a in answers if a.status_code != 200]
            assert len(taken) == 1, (session, [a.text for a in answers])
            assert refused == ["stale_answer"] * (sends - 1), refused
            state: str = taken[0]["state"]
            return session, state

        done = asyncio.Event()

        async def watch_page() -> None:
            while not done.is_set():
                started = time.perf_counter()
                page = await http.get(f"/s/{watched}")
                page_latencies.append(time.perf_counter() - started)
                assert page.status_code == 200
                await asyncio.sleep(0.02)

        watcher = asyncio.create_task(watch_page())
        started = time.perf_counter()
        ended = await asyncio.gather(*(one(n) for n in range(1, sessions + 1)))
        elapsed = time.perf_counter() - started
        done.set()
        await watcher
    return {
        "sessions": [session for session, _ in ended],
        "states": [state for _, state in ended],
        "elapsed": elapsed,
        "latencies": latencies,
        "page": page_latencies,
        "statuses": statuses,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--sleep", type=float, default=0.2)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="stalwart-serve-bench-") as folder:
        desk = write_desk(Path(folder) / "desk", more_source=SLEEPING_TOOL,
                          more_tools=", pack_parcel")  # fmt: skip
        env = {OPERATOR_ENV: OPERATOR_TOKEN, "STALWART_BENCH_SLEEP": str(options.sleep)}
        served = Served(desk.yaml, "--run-threads", str(options.sessions + 14), env=env)
        try:
            found = asyncio.run(drive(served.url, options.sessions))
        finally:
            served.stop()
        packed = [
            json.loads(line) for line in (desk.folder / "packed.log").read_text().splitlines()
        ]
        store = open_store(str(desk.folder / "record.sqlite"))
        try:
            calls = [
                call
                for session in found["sessions"]
                for call in (store.load(session) or _missing(session)).calls
                if call.tool == "pack_parcel"
            ]
        finally:
            store.close()
    assert found["states"] == ["done"] * options.sessions, found["states"]
    assert sorted(order for order, _ in packed) == list(range(1, options.sessions + 1))
    assert len({key for _, key in packed}) == options.sessions
    assert [(c.status, c.tries) for c in calls] == [("ran", 1)] * options.sessions
    latencies, page = found["latencies"], found["page"]
    print(f"stalwart serve under load ({os.cpu_count()} cores, SQLite, loopback)")
    print(f"  {options.sessions} sessions at once, each: a turn, an approval (every other one "
          f"sent twice), a tool sleeping {options.sleep:g} s")  # fmt: skip
    print(f"  API: {len(latencies)} requests in {found['elapsed']:.2f} s = "
          f"{len(latencies) / found['elapsed']:.1f} requests/s; "
          f"p50 {statistics.median(latencies) * 1000:.0f} ms, "
          f"p95 {percentile(latencies, 0.95) * 1000:.0f} ms")  # fmt: skip
    page_p50, page_p95 = statistics.median(page) * 1000, percentile(page, 0.95) * 1000
    print(f"  another session's page, meanwhile: {len(page)} loads, "
          f"p50 {page_p50:.0f} ms, p95 {page_p95:.0f} ms")  # fmt: skip
    print(f"  statuses: {dict(sorted(found['statuses'].items()))}; every session done, each "
          "sleeping write ran once under its key; no answer lost or applied twice")  # fmt: skip


def _missing(session: str) -> Any:
    raise AssertionError(f"session {session} was never recorded")


if __name__ == "__main__":
    main()
