"""What a page or the API shows of a session, read from the record in one load, no lock.

Reading takes no lock, so a page opens while a run thread holds the session's lock for a
slow call. `snapshot` refuses a session that is not the user's with `SessionNotFound`,
the same as one that does not exist (a session id tells nobody else anything).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import texts as run_texts
from ..agent import (
    Agent,
    RecordedAnswer,
    RecordedCall,
    recorded_answers,
    recorded_calls,
    reply_detail,
)
from ..errors import InputRefused, SessionNotFound
from ..labels import step_label, step_labels
from ..record.memory import Message, read_next
from ..record.schema import CallRow, CallStatus, RunRow
from ..replies import Waiting
from ..states import ASKING, State
from ..texts import serve as texts
from .questions import question_id


@dataclass(frozen=True)
class Outcome:
    """One step of a run that ended well, as the page shows it: how the reply names it,
    its status, its result, and the result's rows when it reads as a small table."""

    label: str
    status: str
    result: Any
    rows: list[tuple[str, str]] | None  # (field, value shown)


@dataclass(frozen=True)
class Turn:
    number: int
    turn: str
    reply: str | None
    state: str
    detail: str | None = None  # under the reply: what the tool it stopped at said
    at: float = 0.0  # when the turn was sent (its run recorded)
    updated: float = 0.0  # when its run last moved (its reply, once it has one)
    outcomes: list[Outcome] = field(default_factory=list)  # a run that ended well's steps
    # A turn nothing was read from: how the selector reads it, clause by clause, as
    # `stalwart explain` prints it (read again now, over the agent's tools as they are).
    reading: tuple[str, ...] = ()
    # A guarded run's framework (`stalwart.guarded`): its reply is the framework's model's
    # last word, shown as it is.
    framework: str | None = None

    @property
    def readable(self) -> str | None:
        """A run that ended well, in sentences (its results as tables below): None when
        the reply is read as it is (always, for a guarded run's)."""
        if self.state != State.DONE.value or not any(o.rows for o in self.outcomes):
            return None
        if self.framework is not None:
            return None
        return texts.done_readable(
            [(o.label, o.result, o.status, o.rows is not None) for o in self.outcomes]
        )


@dataclass(frozen=True)
class Snapshot:
    session: str
    user: str
    recorded: bool
    turns: list[Turn] = field(default_factory=list)
    state: str | None = None
    run: str | None = None
    text: str = ""
    question: Waiting | None = None
    question_id: str | None = None
    irreversible: bool = False
    calls: list[RecordedCall] = field(default_factory=list)
    memory: list[Message] = field(default_factory=list)
    updated: float = 0.0
    answers: list[RecordedAnswer] = field(default_factory=list)
    asked: float | None = None  # when the question waiting now was asked
    named: str | None = None  # the name its person gave it, if any

    @property
    def asked_call(self) -> RecordedCall | None:
        """The recorded call the waiting question is about (an outcome's write, a stuck
        undo), for the person to check: its key, when it was sent, its arguments."""
        wanted = self.question.call if self.question is not None else None
        return next((c for c in self.calls if wanted and c.call_id == wanted), None)

    @property
    def title(self) -> str:
        """What a person calls the session: the name they gave it, else its first turn."""
        if self.named:
            return run_texts.visible(self.named)
        return texts.session_title(self.turns[0].turn if self.turns else None)

    @property
    def fingerprint(self) -> tuple[object, ...]:
        """What changes whenever the page would: the latest run's state, its calls."""
        return (self.state, self.run, self.question_id, len(self.calls),
                tuple((c.status, c.tries) for c in self.calls[-3:]), self.updated)  # fmt: skip


def snapshot(agent: Agent, session: str, user: str | None) -> Snapshot:
    """The session as committed; `user` None reads any user's (the operator)."""
    record = agent.store.load(session)
    if record is None or record.session.agent != agent.name:
        if user is None or record is not None:
            raise SessionNotFound(texts.session_not_found(session))
        return Snapshot(session=session, user=user, recorded=False)
    if user is not None and record.session.user != user:
        raise SessionNotFound(texts.session_not_found(session))
    turns = [
        Turn(
            run.number,
            run.turn,
            run.reply,
            run.state,
            reply_detail(run),
            at=run.created,
            updated=run.updated,
            outcomes=_outcomes(agent, run, record.calls),
            reading=_reading(agent, run),
            framework=(run.framework or {}).get("name"),
        )
        for run in record.runs
    ]
    latest = record.runs[-1] if record.runs else None
    question = None
    text = ""
    if latest is not None:
        text = latest.reply or ""
        if latest.state in ASKING and latest.question is not None:
            question = Waiting.from_record(latest.question)
            if latest.state != State.STUCK or not latest.reply:
                text = question.text
    spec = agent.tools.get(question.tool) if question is not None else None
    return Snapshot(
        session=session,
        user=record.session.user,
        recorded=True,
        turns=turns,
        state=latest.state if latest else None,
        run=latest.run_id if latest else None,
        text=text,
        question=question,
        question_id=question_id(question) if question is not None else None,
        irreversible=bool(spec and question and question.kind == "confirm" and spec.irreversible),
        calls=recorded_calls(list(record.calls), list(record.runs)),
        memory=read_next(list(record.messages)),
        updated=latest.updated if latest else record.session.created,
        answers=recorded_answers(list(record.runs)),
        asked=latest.updated if question is not None and latest is not None else None,
        named=record.session.title,
    )


# A result shown as a table: at most this many rows, else as the reply says it.
TABLE_ROWS = 12


def _reading(agent: Agent, run: RunRow) -> tuple[str, ...]:
    """How the selector reads a turn it did not read (`Agent.explain`), clause by clause;
    nothing for any other run, or a turn the selector never saw (past the limits)."""
    if run.state != State.UNREAD.value:
        return ()
    try:
        return tuple(agent.explain(run.turn).clause_lines())
    except InputRefused:
        return ()


def _outcomes(agent: Agent, run: RunRow, calls: Sequence[CallRow]) -> list[Outcome]:
    """The steps of a run that ended well, named as its reply names them."""
    if run.state != State.DONE.value:
        return []
    labels = step_labels(agent.tools, run)
    return [
        Outcome(
            step_label(run, labels, call.step, call.tool),
            call.status,
            call.result,
            _rows(call.result) if call.status == CallStatus.RAN.value else None,
        )  # fmt: skip
        for call in calls
        if call.run_id == run.run_id and call.kind in ("read", "write")
    ]


def _rows(result: Any) -> list[tuple[str, str]] | None:
    """A result as (field, value) rows when it is a small object."""
    if not isinstance(result, dict) or not result or len(result) > TABLE_ROWS:
        return None
    return [(str(name), run_texts.brief(value, limit=80)) for name, value in result.items()]


def every_session(agent: Agent) -> list[str]:
    """Every session of the record with a run (sorted)."""
    return agent.store.sessions_with_runs_in([state.value for state in State])


def sessions_of(agent: Agent, user: str | None) -> list[Snapshot]:
    """The user's sessions (every user's for None), most recently moved first."""
    found: list[Snapshot] = []
    for session in every_session(agent):
        try:
            found.append(snapshot(agent, session, user))
        except SessionNotFound:
            continue
    return sorted(found, key=lambda s: s.updated, reverse=True)


def inbox(agent: Agent, user: str | None) -> list[Snapshot]:
    """The user's sessions that wait for an answer, newest question first."""
    waiting: list[Snapshot] = []
    for session in agent.store.sessions_with_runs_in([state.value for state in ASKING]):
        try:
            found = snapshot(agent, session, user)
        except SessionNotFound:
            continue
        if found.question is not None:
            waiting.append(found)
    return sorted(waiting, key=lambda s: s.updated, reverse=True)


# The inbox's filters: a question's kind, and whether it waits or was answered.
KINDS = ("confirm", "outcome", "undo")
STATES = ("waiting", "answered")


@dataclass(frozen=True)
class InboxItem:
    """One line of the inbox: a question that waits for the person, or one they answered."""

    session: str
    title: str
    kind: str  # confirm, outcome or undo (a stuck undo)
    state: str  # waiting or answered
    text: str  # the question as asked
    question_id: str
    at: float  # when it was asked (waiting) or answered
    answers: tuple[str, ...] = ()
    irreversible: bool = False
    answer: str | None = None
    by: str | None = None
    reason: str | None = None
    evidence: str | None = None  # a waiting outcome's: what the write's probe found


def inbox_items(
    agent: Agent, user: str | None, *, kind: str | None = None, state: str | None = "waiting",
    limit: int = 100,
) -> list[InboxItem]:  # fmt: skip
    """What waits for the user (`state` "waiting"), what they answered ("answered"), or both
    (None), of one `kind` or all (None), newest first."""
    items: list[InboxItem] = []
    sessions = inbox(agent, user) if state == "waiting" else sessions_of(agent, user)
    for snap in sessions:
        question = snap.question
        if state != "answered" and question is not None and snap.question_id is not None:
            evidence = question.evidence.text if question.evidence is not None else None
            items.append(InboxItem(snap.session, snap.title, question.kind, "waiting",
                                   question.text, snap.question_id, snap.asked or snap.updated,
                                   question.answers, snap.irreversible,
                                   evidence=evidence))  # fmt: skip
        if state != "waiting":
            items.extend(
                InboxItem(
                    snap.session,
                    snap.title,
                    given.kind,
                    "answered",
                    given.text,
                    given.question,
                    given.at,
                    answer=given.answer,
                    by=given.by,
                    reason=given.reason,
                )  # fmt: skip
                for given in snap.answers
            )
    found = [item for item in items if kind is None or item.kind == kind]
    return sorted(found, key=lambda item: item.at, reverse=True)[:limit]
