"""The benchmarks still run: `make bench` is not part of the suite, so a change to the
runtime's interface could break them unseen (the serve load benchmark once named its own
sessions after the server began to name them, and failed with a KeyError). Each runs here
in a subprocess on a few runs; the figures are not looked at, only that every check the
benchmark makes of its own results passed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def run_benchmark(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=300, cwd=BENCHMARKS
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_record_benchmark_runs_on_sqlite() -> None:
    out = run_benchmark("run.py", "--runs", "3", "--backend", "sqlite", "--sessions", "0",
                        "--turns", "20")  # fmt: skip
    assert "sqlite failed order: ms/run" in out
    assert "sqlite happy order: ms/run" in out
    assert "selector, shop desk, three-clause turns/s" in out


def test_the_orders_the_instructions_benchmark_counts_run() -> None:
    # What runs under callgrind (valgrind itself is left out: minutes per scenario): the
    # warm-up and the counted orders, each checked by its reply as run.py checks it.
    for scenario in ("failed", "happy"):
        run_benchmark("instructions.py", "--child", "1", "--scenario", scenario)


def test_the_pydantic_ai_guard_benchmark_runs() -> None:
    out = run_benchmark("pydantic_ai_guard.py", "--runs", "2")
    assert "a read (get_order, 5 per run): unguarded" in out
    assert "a write (charge_card, update_crm, send_receipt, 3 per run, each approved)" in out
    assert "the guard adds" in out


def test_the_langgraph_guard_benchmark_runs() -> None:
    out = run_benchmark("langgraph_guard.py", "--runs", "2")
    assert "a read (get_order, 5 per run): unguarded" in out
    assert "a write (charge_card, update_crm, send_receipt, 3 per run, each approved)" in out
    assert "the guard adds" in out


def test_the_openai_agents_guard_benchmark_runs() -> None:
    out = run_benchmark("openai_agents_guard.py", "--runs", "2")
    assert "a read (get_order, 5 per run): unguarded" in out
    assert "a write (charge_card, update_crm, send_receipt, 3 per run, each approved)" in out
    assert "the guard adds" in out


def test_the_serve_load_benchmark_runs() -> None:
    out = run_benchmark("serve_load.py", "--sessions", "4", "--sleep", "0")
    assert "4 sessions at once" in out
    assert "no answer lost or applied twice" in out


def test_the_workers_benchmark_runs_on_postgresql() -> None:
    out = run_benchmark("workers.py", "--sessions", "4", "--workers", "1,2", "--tool-ms", "0",
                        "--rounds", "1")  # fmt: skip
    if "PostgreSQL skipped" in out:
        if os.environ.get("CI"):
            pytest.fail(out)
        pytest.skip(out)
    assert "sessions/s on PostgreSQL (durable)" in out
    assert "round 1: 2 worker(s), tools 0 ms" in out


def test_sessions_per_second_is_the_steady_state_median() -> None:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import workers
    finally:
        sys.path.remove(str(BENCHMARKS))
    # Two workers: the second is done at 2.5; the first's session ending at 3.0 came after.
    scaling = workers.steady_state(0, 2, [(0.0, [1.0, 2.0, 3.0]), (0.1, [1.5, 2.5])])
    assert (scaling.sessions, scaling.seconds) == (4, 2.5)
    assert scaling.per_sec == pytest.approx(1.6)
    rounds = [workers.Scaling(0, 2, n, 1.0) for n in (30, 10, 20)]
    assert workers.median_of(rounds).sessions == 20
    assert workers.median_of(rounds[:2]).sessions == 10  # of two, the lower


def test_the_record_alone_makes_the_runs_own_commits_again(tmp_path: Path) -> None:
    """The record alone is a floor only if it writes what the run wrote: made again on a
    fresh record, a failed order's commits give back the very session the run left."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import run
        from floor import CommitsSeen, RecordAlone
    finally:
        sys.path.remove(str(BENCHMARKS))
    from stalwart import Agent
    from stalwart.record import open_store

    store = CommitsSeen(open_store(str(tmp_path / "record.sqlite")))
    desk = Agent.from_file(run.SHOP / "agent.yaml", store=store)
    run._order(desk, run.SCENARIOS[0], "alone-1")
    run._shop_calls().clear()
    commits = store.take()
    assert len(commits) == store.commits == 9
    assert store.take() == []  # taken once
    alone = RecordAlone(str(tmp_path / "alone.sqlite"))
    assert alone.commit(commits) > 0
    alone.close()
    again = open_store(str(tmp_path / "alone.sqlite"))
    try:
        made_again = again.load("alone-1")
        assert made_again is not None
        assert made_again == store.load("alone-1")
        assert [call.status for call in made_again.calls] == [
            "ran", "ran", "failed", "ran", "ran"
        ]  # fmt: skip
    finally:
        again.close()
        store.close()
