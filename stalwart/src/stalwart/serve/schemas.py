"""The JSON API's bodies, typed, so /openapi.json describes every one.

A call's arguments and result are given exactly as the call will run or ran, the same in
every route: as the record keeps them (`exact`), whether they come from a live reply or
from the record. A Decimal is its exact text ("19.00", never 19.0), an integer is whole.
"""

from __future__ import annotations

import datetime
from typing import Any

from pydantic import BaseModel, Field

from ..agent import RecordedAnswer, RecordedCall
from ..record.memory import Message
from ..record.schema import as_recorded
from ..replies import Evidence, Reply, Waiting
from .questions import question_id
from .views import InboxItem, Snapshot


def exact(value: Any) -> Any:
    """A call's arguments or result as every route gives them: the JSON the record keeps
    for them (`record.schema.as_recorded`). A live reply holds the values the call runs with
    (a Decimal, a datetime), which FastAPI's own encoder would turn into a float (19.00 into
    19.0, 12345678901234567.89 into 1.2345678901234568e+16)."""
    return as_recorded(value)


def iso(moment: float | None) -> str | None:
    """A time of the record (seconds since the epoch) as the API gives it: ISO 8601 with
    its offset, UTC ("2026-12-03T08:19:40.123456+00:00"); None stays None."""
    if moment is None:
        return None
    return datetime.datetime.fromtimestamp(moment, tz=datetime.UTC).isoformat()


ISO = "ISO 8601 with its offset (UTC)"


class ErrorOut(BaseModel):
    code: str = Field(description="The error's stable code (stalwart.errors)")
    message: str


class EvidenceOut(BaseModel):
    """What a write's probe found when its outcome was in doubt: evidence for the person
    answering the outcome question, never an answer to it."""

    tool: str = Field(description="The probe: a read the write declares")
    args: dict[str, Any] = Field(description="What it was asked with, as the record keeps it")
    text: str = Field(
        description="The sentence shown under the question: what it found, or why it "
        "could not be asked"
    )
    found: bool | None = Field(
        description="True: it found something; false: nothing; null: it could not be asked"
    )
    result: Any = Field(default=None, description="What it returned, as the record keeps it")
    error: str | None = Field(default=None, description="Why it could not be asked")
    call: str | None = Field(default=None, description="Its call in the record")
    answered_at: str | None = Field(default=None, description=f"When it answered: {ISO}")

    @classmethod
    def of(cls, evidence: Evidence) -> EvidenceOut:
        return cls(
            tool=evidence.tool,
            args=exact(evidence.args),
            text=evidence.text,
            found=evidence.found,
            result=exact(evidence.result),
            error=evidence.error,
            call=evidence.call,
            answered_at=iso(evidence.at),
        )


class QuestionOut(BaseModel):
    question_id: str = Field(description="Give it back with the answer; a stale one is refused")
    kind: str = Field(description="confirm, outcome or undo")
    tool: str
    args: dict[str, Any] = Field(
        description="Exactly as the call will run: a decimal as its exact text"
    )
    text: str
    answers: list[str]
    run: str
    step: int
    call: str | None = None
    sources: dict[str, str] | None = Field(
        default=None, description="For a model's step: where each argument came from"
    )
    irreversible: bool = False
    asked_at: str | None = Field(default=None, description=f"When it was asked: {ISO}")
    key: str | None = Field(
        default=None, description="An outcome's or a stuck undo's call: the key it was sent under"
    )
    sent_at: str | None = Field(default=None, description=f"That call: when it was sent: {ISO}")
    tries: int | None = Field(default=None, description="That call: the sends made")
    evidence: EvidenceOut | None = Field(
        default=None,
        description="An outcome question of a write that declares a probe: what it found",
    )

    def with_call(self, call: RecordedCall | None) -> QuestionOut:
        """With the key, time and tries of the call an outcome or a stuck undo is about."""
        return _with_call(self, call)

    @classmethod
    def of(
        cls, waiting: Waiting, *, irreversible: bool = False, asked: float | None = None
    ) -> QuestionOut:
        return cls(
            question_id=question_id(waiting),
            kind=waiting.kind,
            tool=waiting.tool,
            args=exact(waiting.args),
            text=waiting.text,
            answers=list(waiting.answers),
            run=waiting.run,
            step=waiting.step,
            call=waiting.call,
            sources=waiting.sources,
            irreversible=irreversible,
            asked_at=iso(asked),
            evidence=EvidenceOut.of(waiting.evidence) if waiting.evidence is not None else None,
        )


def _with_call(question: QuestionOut, call: RecordedCall | None) -> QuestionOut:
    if call is None or question.kind == "confirm":
        return question
    return question.model_copy(
        update={"key": call.key, "sent_at": iso(call.recorded), "tries": call.tries}
    )


class EndedOut(BaseModel):
    """Who ended a run from outside it (None: an operator who gave no name), when, why."""

    by: str | None
    at: float
    reason: str
    ended_at: str | None = Field(default=None, description=f"`at`, {ISO}")


class ReplyOut(BaseModel):
    text: str
    state: str
    session: str
    run: str | None
    waiting: list[QuestionOut]
    ended: EndedOut | None = None
    detail: str | None = Field(
        default=None,
        description="Under the text: what the tool the run stopped at said (its own message)",
    )

    @classmethod
    def of(cls, reply: Reply) -> ReplyOut:
        ended = reply.ended
        return cls(
            text=reply.text,
            state=reply.state,
            session=reply.session,
            run=reply.run,
            waiting=[QuestionOut.of(w) for w in reply.waiting],
            ended=None if ended is None else EndedOut(**vars(ended), ended_at=iso(ended.at)),
            detail=reply.detail,
        )


class AcceptedOut(BaseModel):
    accepted: bool = True
    session: str


class TurnIn(BaseModel):
    text: str
    wait: bool = Field(default=True, description="Answer once the run stops (else 202 at once)")


class AnswerIn(BaseModel):
    question_id: str
    answer: str
    wait: bool = True
    reason: str | None = Field(
        default=None,
        description="Why (skip, cancel all): recorded; a skip's is what a model reads of it",
    )


class TurnOut(BaseModel):
    number: int
    turn: str
    reply: str | None
    state: str
    detail: str | None = Field(
        default=None, description="Under the reply: what the tool the run stopped at said"
    )
    sent_at: str | None = Field(default=None, description=f"When the turn was sent: {ISO}")
    updated_at: str | None = Field(
        default=None, description=f"When its run last moved (its reply, once it has one): {ISO}"
    )


class SessionOut(BaseModel):
    session: str
    user: str
    state: str | None
    text: str
    question: QuestionOut | None
    turns: list[TurnOut]
    progress: str | None
    busy: bool
    updated: float
    updated_at: str | None = Field(default=None, description=f"`updated`, {ISO}")
    title: str = Field(default="", description="The name its person gave it, else its first turn")
    named: bool = Field(default=False, description="Whether its person gave it its title")

    @classmethod
    def of(cls, found: Snapshot, *, progress: str | None, busy: bool) -> SessionOut:
        return cls(
            session=found.session,
            user=found.user,
            state=found.state,
            text=found.text,
            question=(
                QuestionOut.of(
                    found.question, irreversible=found.irreversible, asked=found.asked
                ).with_call(found.asked_call)
                if found.question is not None
                else None
            ),
            turns=[
                TurnOut(
                    number=turn.number,
                    turn=turn.turn,
                    reply=turn.reply,
                    state=turn.state,
                    detail=turn.detail,
                    sent_at=iso(turn.at),
                    updated_at=iso(turn.updated),
                )
                for turn in found.turns
            ],
            progress=progress,
            busy=busy,
            updated=found.updated,
            updated_at=iso(found.updated),
            title=found.title,
            named=found.named is not None,
        )


class AnswerOut(BaseModel):
    """A person's answer, as the record keeps it: who, when, to which question, and why."""

    run: str
    step: int
    kind: str = Field(description="confirm, outcome or undo")
    tool: str
    question_id: str
    text: str = Field(description="The question as the person was shown it")
    answer: str
    by: str | None = Field(description="Who answered (the session's user)")
    answered_at: str = Field(description=f"When: {ISO}")
    asked_at: str | None = Field(description=f"When the question was asked: {ISO}")
    reason: str | None = Field(description="The person's reason (skip, cancel all), if any")
    call: str | None = Field(description="The recorded call it was about, once there was one")

    @classmethod
    def of(cls, given: RecordedAnswer) -> AnswerOut:
        return cls(
            run=given.run,
            step=given.step,
            kind=given.kind,
            tool=given.tool,
            question_id=given.question,
            text=given.text,
            answer=given.answer,
            by=given.by,
            answered_at=iso(given.at) or "",
            asked_at=iso(given.asked),
            reason=given.reason,
            call=given.call,
        )


class InboxItemOut(BaseModel):
    """A line of the inbox: a question waiting for you, or one you answered."""

    session: str
    title: str
    kind: str = Field(description="confirm, outcome or undo (a stuck undo)")
    state: str = Field(description="waiting or answered")
    text: str
    question_id: str
    at: str = Field(description=f"When it was asked (waiting) or answered: {ISO}")
    answers: list[str]
    irreversible: bool
    answer: str | None
    by: str | None
    reason: str | None
    evidence: str | None = Field(
        default=None,
        description="A waiting outcome question's: what the write's probe found (its sentence)",
    )

    @classmethod
    def of(cls, item: InboxItem) -> InboxItemOut:
        return cls(**{**vars(item), "at": iso(item.at) or "", "answers": list(item.answers)})


class CallOut(BaseModel):
    call_id: str
    run: str
    step: int
    kind: str
    tool: str
    args: dict[str, Any] = Field(description="Exactly as the call ran: a decimal as its text")
    status: str
    result: Any = Field(description="As the record keeps it: a decimal as its exact text")
    error: str | None
    key: str | None
    allowed: str | None
    undoes: str | None
    undone_by: str | None
    undone_by_tool: str | None
    tries: int
    recorded_at: str | None = Field(
        default=None, description=f"When it was recorded (in flight, before its send): {ISO}"
    )
    finished_at: str | None = Field(
        default=None, description=f"When its outcome was recorded (None in flight): {ISO}"
    )
    answers: list[AnswerOut] = Field(
        default_factory=list,
        description="The person's answers about it: its confirmation, its outcome, its undo's",
    )

    @classmethod
    def of(cls, call: RecordedCall) -> CallOut:
        given = {
            name: value
            for name, value in vars(call).items()
            if name not in ("recorded", "finished", "answers", "args", "result")
        }
        return cls(
            **given,
            args=exact(call.args),
            result=exact(call.result),
            recorded_at=iso(call.recorded),
            finished_at=iso(call.finished),
            answers=[AnswerOut.of(a) for a in call.answers],
        )


class MessageOut(BaseModel):
    role: str
    content: str

    @classmethod
    def of(cls, message: Message) -> MessageOut:
        return cls(role=message.role, content=message.content)


class TitleIn(BaseModel):
    title: str = Field(description="The session's name, up to 200 characters")


class NewSessionOut(BaseModel):
    session: str


class LoginIn(BaseModel):
    user: str
    password: str


class MeOut(BaseModel):
    user: str
    csrf: str = Field(description="Send it as the X-CSRF-Token header on every POST")


class OperatorLoginIn(BaseModel):
    token: str


class OperatorUndoIn(BaseModel):
    token: str = Field(description="The operator token, checked again on every undo")
    wait: bool = True


class OperatorEndIn(BaseModel):
    token: str = Field(description="The operator token, checked again on every action")
    reason: str = Field(description="Why the run is ended: recorded, and said in its reply")


class OperatorActionOut(BaseModel):
    at: float
    action: str
    session: str | None
    outcome: str
    detail: str
    done_at: str | None = Field(default=None, description=f"`at`, {ISO}")
