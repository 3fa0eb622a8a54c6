"""For any failures (in doubt or not, on writes and on undos), answers, crashes and lost
leases, the chapter's invariant holds: every write that took effect ends undone exactly
once, listed as not undoable, decided by a person, kept by a run that ended well, or
pending in a stuck run; and no write or undo took effect twice.

Real runs of the service's tools (tests/service.py: an idempotent service that acts once
per key and keeps every effect in `DONE`) on a real SQLite record. A crash is a
`SimulatedCrash` the engine does not catch, before or after the service acted; the next
call is made by a new Agent, as another worker would. A lost lease is another worker
taking the session over while a call is inside the service (at a send drawn at random,
whatever that send then does): the session's lock is swept away (the lock folder beside
the database removed, as a clean-up job would) and a worker whose clock is past the lease
resumes the run; the first worker's call then goes on as planned, its next commit raises
LeaseLost and writes nothing, and the worker that took over goes on. And at any question,
an operator may end the run instead of answering it (`Agent.operator_end`): what it
leaves is listed in its reply, for a person.
"""

from __future__ import annotations

import contextlib
import re
import shutil
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from service import turn, write_service_project

from stalwart import Agent, FakeClock, LeaseLost, QuestionPending
from stalwart.record.lease import LEASE_SECS
from stalwart.record.sqlite import SQLiteStore, lock_folder

WRITES = ["charge_card", "book_slot", "send_note", "stamp_form"]
UNDOS = {"charge_card": "refund_card", "book_slot": "free_slot"}
NOT_UNDOABLE = {"send_note", "stamp_form"}
FAULTS = ["ok", "ok", "timeout", "lost", "refused", "error", "crash", "crash_after"]
TOKEN = "op-property-token-0123456789"
OPERATOR_ENDS = 9  # a pick of 9 at a question: an operator ends the run instead
ANSWERS = {
    "confirm": ["approve", "approve", "approve", "skip", "cancel all"],
    "outcome": ["happened", "did not happen"],
    "undo": ["retry", "done by hand", "abandon"],
}


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    steps = draw(st.lists(st.sampled_from(WRITES), min_size=1, max_size=4))
    plan = {
        tool: draw(st.lists(st.sampled_from(FAULTS), max_size=4))
        for tool in [*WRITES, *UNDOS.values()]
    }
    answers = draw(st.lists(st.integers(min_value=0, max_value=9), min_size=30, max_size=30))
    # The send (1st, 2nd, ...) inside which another worker takes the lease over: none in a
    # run that sends less.
    taken_at = draw(st.integers(min_value=1, max_value=3))
    return {"steps": steps, "plan": plan, "answers": answers, "taken_at": taken_at}


class _Workers:
    """The worker advancing the session now, and the one that took its lease mid-call."""

    def __init__(self, project: Any, database: Path, taken_at: int) -> None:
        self.project = project
        self.database = database
        self.agent: Agent = project.agent(clock=FakeClock())
        self.taken_by: Agent | None = None
        self.taken_at = taken_at
        self.sends = 0

    def take_over(self, tool: str) -> None:
        """Inside the `taken_at`-th send (of `agent`): another worker, on a clock past its
        lease, finds the lock gone and resumes the run."""
        self.sends += 1
        if self.sends != self.taken_at:
            return
        event(f"a lease taken over inside {tool}")
        late = FakeClock(start=self.agent.clock.now() + LEASE_SECS + 1)
        self.taken_by = self.project.agent(clock=late)
        shutil.rmtree(lock_folder(str(self.database)))
        # Should it stop too, the run is left for the next worker.
        with contextlib.suppress(self.project.module.SimulatedCrash):
            self.taken_by.pending("u")

    def next_worker(self) -> None:
        """`agent` stopped: the worker that took its lease over goes on, or a new one."""
        self.agent = self.taken_by or self.project.agent(clock=FakeClock())
        self.taken_by = None

    def lost_lease(self) -> None:
        """`agent` raised LeaseLost: only after a takeover; the worker that took over goes on."""
        assert self.taken_by is not None, "a worker lost a lease nobody took"
        self.agent, self.taken_by = self.taken_by, None


def _drive(workers: _Workers, steps: list[str], answers: list[int]) -> Any:
    """Start the run and answer every question at random until it ends or stops stuck
    with nothing more to answer; a crash hands the session to a new worker, a lost lease
    to the worker that took it."""
    module = workers.project.module
    text = turn(*((tool, number) for number, tool in enumerate(steps, 1)))
    started = False
    reply: Any = None
    for pick in answers:
        agent = workers.agent
        ended = False
        try:
            if not started:
                started = True
                reply = agent.chat(text, user="u")
            elif reply is None or not reply.waiting:
                reply = agent.pending("u")
                ended = reply is None or not reply.waiting
            elif pick == OPERATOR_ENDS:
                event("an operator ends the run")
                reply = agent.operator_end("u", token=TOKEN, reason="nobody answers", by="ops")
            else:
                kind = reply.waiting[0].kind
                choices = ANSWERS[kind]
                reply = agent.answer_current("u", choices[pick % len(choices)])
        except module.SimulatedCrash:
            workers.next_worker()  # another worker takes it up
            reply = None
        except LeaseLost:
            workers.lost_lease()
            reply = None
        except QuestionPending:
            reply = agent.pending("u")
        assert workers.taken_by is None, "a worker whose lease was taken committed"
        if ended:
            break
    return workers.agent.pending("u")


def _check_invariant(project: Any, folder: Path, final: Any) -> None:
    module = project.module
    store = SQLiteStore(folder / "record.sqlite")
    try:
        record = store.load("u")
    finally:
        store.close()
    assert record is not None
    calls = {call.key: call for call in record.calls if call.key}
    by_id = {call.call_id: call for call in record.calls}
    [run] = record.runs
    effects = [(tool, key) for tool, key, _ in module.DONE]
    keys = [key for _, key in effects]
    assert len(keys) == len(set(keys)), "the service acted twice on one key"
    acted = set(keys)
    for tool, key in effects:
        call = calls.get(key)
        assert call is not None, f"an effect of {tool} the record does not know"
        if call.kind == "undo":
            write = by_id[call.undoes or ""]
            # An undo acts on a write that took effect, or that a person said did.
            assert write.key in acted or write.status == "happened", (tool, write.status)
            continue
        assert call.kind == "write"
        if call.status == "did_not_happen":
            continue  # decided by a person (who was wrong: the chapter lets them be)
        assert call.status in ("ran", "happened", "in_doubt"), (tool, call.status)
        if call.status == "in_doubt":
            assert run.state in ("waiting", "ended_by_operator"), "a person decides it"
            if run.state == "ended_by_operator":
                # named alone, or with what tells it from another call of the tool
                said = rf"whether {tool}(\([^)]*\))?( at step \d+)? took effect"
                assert re.search(said, run.reply or ""), "it is said"
            continue
        if run.state == "done":
            continue  # a run that ended well keeps its writes
        if call.undone_by is not None:
            undo = by_id[call.undone_by]
            assert undo.status in ("ran", "by_hand"), undo.status
            if undo.status == "ran":
                assert undo.key in acted, "an undo recorded ran that never acted"
            continue
        if tool in NOT_UNDOABLE:
            if run.state in ("rolled_back", "abandoned", "ended_by_operator"):
                assert tool in (run.reply or ""), "an irreversible write is listed"
            continue
        # Not undone: the rollback is stuck on it, a person abandoned it, an operator ended
        # the run and left it to a person, or it waits.
        left = ("stuck", "abandoned", "waiting", "rolling_back", "ended_by_operator")
        assert run.state in left, (tool, run.state)
        if run.state in ("abandoned", "ended_by_operator"):
            assert tool in (run.reply or ""), "a write left to a person is listed"
    # No undo acted twice, and no write was undone by two undos.
    undone = [c.undoes for c in record.calls if c.kind == "undo" and c.key in acted]
    assert len(undone) == len(set(undone))
    del final


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(scenario=scenarios())
def test_every_write_ends_undone_once_listed_decided_or_pending(
    tmp_path_factory: Any, scenario: dict[str, Any]
) -> None:
    folder = tmp_path_factory.mktemp("faults")
    project = write_service_project(folder)
    workers = _Workers(project, folder / "record.sqlite", scenario["taken_at"])
    workers.agent.set_operator_token(TOKEN)
    module = project.module
    assert module is not None
    module.PLAN.update({tool: list(faults) for tool, faults in scenario["plan"].items()})
    module.ON_SEND.append(workers.take_over)
    try:
        final = _drive(workers, scenario["steps"], scenario["answers"])
        _check_invariant(project, folder, final)
    finally:
        for opened in project.agents:
            opened.close()
