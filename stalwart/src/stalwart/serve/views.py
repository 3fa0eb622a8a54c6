"""What a page or the API shows of a session, read from the record in one load, no lock.

Reading takes no lock, so a page opens while a run thread holds the session's lock for a
slow call. `snapshot` refuses a session that is not the user's with `SessionNotFound`,
the same as one that does not exist (a session id tells nobody else anything).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .._engine.runs import ASKING, State
from ..agent import Agent, RecordedCall, recorded_calls, reply_detail
from ..errors import SessionNotFound
from ..record.memory import Message, read_next
from ..replies import Waiting
from ..texts import serve as texts
from .questions import question_id


@dataclass(frozen=True)
class Turn:
    number: int
    turn: str
    reply: str | None
    state: str
    detail: str | None = None  # under the reply: what the tool it stopped at said


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
        Turn(run.number, run.turn, run.reply, run.state, reply_detail(run)) for run in record.runs
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
        calls=recorded_calls(list(record.calls)),
        memory=read_next(list(record.messages)),
        updated=latest.updated if latest else record.session.created,
    )


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
