"""The JSON API's bodies, typed, so /openapi.json describes every one.

A call's arguments and result are given exactly as the call will run or ran, the same in
every route: as the record keeps them (`exact`), whether they come from a live reply or
from the record. A Decimal is its exact text ("19.00", never 19.0), an integer is whole.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..agent import RecordedCall
from ..record.memory import Message
from ..record.schema import as_recorded
from ..replies import Reply, Waiting
from .questions import question_id
from .views import Snapshot


def exact(value: Any) -> Any:
    """A call's arguments or result as every route gives them: the JSON the record keeps
    for them (`record.schema.as_recorded`). A live reply holds the values the call runs with
    (a Decimal, a datetime), which FastAPI's own encoder would turn into a float (19.00 into
    19.0, 12345678901234567.89 into 1.2345678901234568e+16)."""
    return as_recorded(value)


class ErrorOut(BaseModel):
    code: str = Field(description="The error's stable code (stalwart.errors)")
    message: str


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

    @classmethod
    def of(cls, waiting: Waiting, *, irreversible: bool = False) -> QuestionOut:
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
        )


class EndedOut(BaseModel):
    """Who ended a run from outside it (None: an operator who gave no name), when, why."""

    by: str | None
    at: float
    reason: str


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
            ended=None if ended is None else EndedOut(**vars(ended)),
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


class TurnOut(BaseModel):
    number: int
    turn: str
    reply: str | None
    state: str
    detail: str | None = Field(
        default=None, description="Under the reply: what the tool the run stopped at said"
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

    @classmethod
    def of(cls, found: Snapshot, *, progress: str | None, busy: bool) -> SessionOut:
        return cls(
            session=found.session,
            user=found.user,
            state=found.state,
            text=found.text,
            question=(
                QuestionOut.of(found.question, irreversible=found.irreversible)
                if found.question is not None
                else None
            ),
            turns=[TurnOut(**vars(turn)) for turn in found.turns],
            progress=progress,
            busy=busy,
            updated=found.updated,
        )


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

    @classmethod
    def of(cls, call: RecordedCall) -> CallOut:
        return cls(**{**vars(call), "args": exact(call.args), "result": exact(call.result)})


class MessageOut(BaseModel):
    role: str
    content: str

    @classmethod
    def of(cls, message: Message) -> MessageOut:
        return cls(role=message.role, content=message.content)


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
