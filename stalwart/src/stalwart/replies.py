"""What a person gets back from a turn or an answer: a `Reply`, and what `Waiting`s on them."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Evidence:
    """What a write's probe found when the write's outcome was in doubt: shown under the
    outcome question, never an answer to it (the person still decides).

    `tool` is the probe (a read) and `args` what it was asked with; `text` the sentence
    shown ("get_charge found charge ch_19 for order 4411 under this key"); `found` True when
    it returned something, False when it returned nothing (None, false, an empty text or
    collection), None when it could not be asked (it raised, timed out, or the agent does
    not list it: then `error` says why); `result` what it returned, as recorded; `call` its
    row in the record (None when it was never sent); `at` when it answered (the agent's
    clock).
    """

    tool: str
    args: dict[str, Any]
    text: str
    found: bool | None
    result: Any = None
    error: str | None = None
    call: str | None = None
    at: float | None = None

    @classmethod
    def from_record(cls, evidence: dict[str, Any]) -> Evidence:
        return cls(
            tool=evidence["tool"],
            args=dict(evidence.get("args") or {}),
            text=evidence["text"],
            found=evidence.get("found"),
            result=evidence.get("result"),
            error=evidence.get("error"),
            call=evidence.get("call"),
            at=evidence.get("at"),
        )

    def to_record(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _EVIDENCE_FIELDS}


_EVIDENCE_FIELDS = ("tool", "args", "text", "found", "result", "error", "call", "at")


@dataclass(frozen=True)
class Waiting:
    """A question the run waits on.

    `kind` is "confirm" (a write waits for a person's go-ahead: approve, skip, cancel
    all), "outcome" (nobody knows whether a write took effect: happened, did not
    happen) or "undo" (an undo failed every try and the run is stuck: retry, done by
    hand, abandon). `tool` and `args` are the call asked about (for "undo", the undo);
    `text` what the person is shown; `answers` the answers it takes; `step` the step of
    the run it is about; `call` the recorded call it is about, once there is one;
    `sources`, on a confirmation of a step a model chose, where each argument came from
    ("turn", "step <n> (<tool>)" or "model"); `evidence`, on an outcome question of a
    write that declares a probe, what the probe found (`Evidence`).

    `id` names this asking of the question and no other (`question_id`): an answer that
    can be repeated or reordered names the question it answers by it
    (`Agent.answer(..., question=waiting)` or its id), so an answer meant for one
    question never answers the next.
    """

    kind: str
    tool: str
    args: dict[str, Any]
    text: str
    answers: tuple[str, ...]
    run: str
    step: int
    call: str | None = None
    sources: dict[str, str] | None = None
    id: str = ""  # set from the rest when not given: see question_id
    evidence: Evidence | None = None

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id", question_id(self.run, self.step, self.kind, self.text))

    @classmethod
    def from_record(cls, question: dict[str, Any]) -> Waiting:
        """The question the record's form holds. Built as the record's rows are (without
        the frozen `__init__`'s `object.__setattr__` per field): a run's question is read
        back on every answer and every reply; `__post_init__` gives the id when the form
        has none."""
        evidence = question.get("evidence")
        waiting = object.__new__(cls)
        waiting.__dict__.update(
            kind=question["kind"],
            tool=question["tool"],
            args=dict(question["args"]),
            text=question["text"],
            answers=tuple(question["answers"]),
            run=question["run"],
            step=question["step"],
            call=question.get("call"),
            sources=question.get("sources"),
            id=question.get("id") or "",
            evidence=Evidence.from_record(evidence) if evidence else None,
        )
        waiting.__post_init__()
        return waiting

    def to_record(self) -> dict[str, Any]:
        record = {
            "kind": self.kind,
            "tool": self.tool,
            "args": self.args,
            "text": self.text,
            "answers": list(self.answers),
            "run": self.run,
            "step": self.step,
            "call": self.call,
            "id": self.id,
        }
        if self.sources is not None:
            record["sources"] = self.sources
        if self.evidence is not None:
            record["evidence"] = self.evidence.to_record()
        return record


def question_id(run: str, step: int, kind: str, text: str) -> str:
    """A question's id: `<run>/<step>/<kind>/<digest>`, the digest over what it asks.

    A step is confirmed once and a call's outcome asked once, so run, step and kind name
    those; an undo that fails again is asked again with a new count of tries in its text,
    so the digest of the text tells the second asking from the first. The same question
    read back in any process has the same id.
    """
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{run}/{step}/{kind}/{digest}"


@dataclass(frozen=True)
class Ended:
    """Who ended a run from outside it (None: an operator who gave no name), when (the
    agent's clock) and why, as the record keeps it."""

    by: str | None
    at: float
    reason: str


@dataclass(frozen=True)
class Reply:
    """The one reply of a turn or an answer.

    `text` is what the person reads: the run's reply when it ended, else the question
    at the head of `waiting` (a stuck run's text says why it stopped, then asks).
    `state` is the run's state ("waiting", "done", "rolled_back", "stuck", "abandoned",
    "unread"). `earlier`: see below.
    """

    text: str
    waiting: list[Waiting] = field(default_factory=list)
    session: str = ""
    run: str | None = None
    state: str = ""
    # The reply of an earlier run nobody received: its process stopped mid-rollback, and
    # this call finished it before the new turn. `text` begins with it (a blank line
    # between), so a person always reads it, once.
    earlier: tuple[str, ...] = ()
    # Set on a run an operator ended (state "ended_by_operator"): who, when and why.
    ended: Ended | None = None
    # Shown under `text`, on a line of its own: what the failed tool itself said ("pay_bill
    # said: insufficient funds"), where the reply's sentence names only its error's class
    # (chapter 34's sentence stays as printed). Characters that do not show are escaped and
    # it is cut to `texts.DETAIL_LIMIT`; None when the run did not stop at a tool's error.
    detail: str | None = None
    # The framework of a guarded run (`stalwart.guarded`: "pydantic-ai", "langgraph",
    # "openai-agents"; None for stalwart's own run). Its state "running" means the run
    # waits for that framework's application to go on with it.
    framework: str | None = None
