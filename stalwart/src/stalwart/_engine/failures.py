"""Why a run fails: one small class per cause, and the run's failure as the record keeps it.

A failed run records why (`RunRow.failure`, JSON): its cause, one of `Failure`, with the
fields that cause has; then what happened since, as its rollback went (the new round of
tries a person gave an undo, the undo the rollback stopped at and why, the writes a person
abandoned) and an operator's ending. `RunFailure` is that whole value. `to_record` gives
the form the record keeps, the one it has always had (the cause's name under "cause",
every field under its own name, a field not set left out), and `from_record` reads that
form back, whenever it was written. The record's encoder (`stalwart.codec`) renders it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypedDict, assert_never

from .. import texts


@dataclass(frozen=True)
class Failed:
    """A tool raised, its effect not in doubt; or a guarded run's framework failed (its
    model, its own code), and `tool` names the framework."""

    CAUSE: ClassVar[str] = "failed"
    tool: str
    error: str  # the error's class name
    tool_said: str | None = None  # what the tool said: the line under the reply

    def fields(self) -> dict[str, Any]:
        return _set({"tool": self.tool, "error": self.error}, tool_said=self.tool_said)

    @classmethod
    def from_fields(cls, recorded: Mapping[str, Any]) -> Failed:
        return cls(recorded["tool"], recorded["error"], recorded.get("tool_said"))


@dataclass(frozen=True)
class Unrecordable:
    """A tool ran, but what it returned cannot be kept exactly (`detail` says why)."""

    CAUSE: ClassVar[str] = "unrecordable"
    tool: str
    detail: str

    def fields(self) -> dict[str, Any]:
        return {"tool": self.tool, "detail": self.detail}

    @classmethod
    def from_fields(cls, recorded: Mapping[str, Any]) -> Unrecordable:
        return cls(recorded["tool"], recorded["detail"])


@dataclass(frozen=True)
class Refused:
    """The check refused a step (`reason`: the clause the reply builds on)."""

    CAUSE: ClassVar[str] = "refused"
    tool: str
    reason: str

    def fields(self) -> dict[str, Any]:
        return {"tool": self.tool, "reason": self.reason}

    @classmethod
    def from_fields(cls, recorded: Mapping[str, Any]) -> Refused:
        return cls(recorded["tool"], recorded["reason"])


@dataclass(frozen=True)
class ModelFailed:
    """The model could not be asked, or gave no usable answer (`detail` says why)."""

    CAUSE: ClassVar[str] = "model"
    model: str  # the model's selector
    detail: str

    def fields(self) -> dict[str, Any]:
        return {"model": self.model, "detail": self.detail}

    @classmethod
    def from_fields(cls, recorded: Mapping[str, Any]) -> ModelFailed:
        return cls(recorded["model"], recorded["detail"])


@dataclass(frozen=True)
class ModelCapped:
    """The model was asked as many times as one run allows; `not_run`, the calls it asked
    for on its last ask, which never ran (None: it asked for none, or was not asked)."""

    CAUSE: ClassVar[str] = "model_cap"
    model: str
    calls: int
    not_run: list[str] | None = None

    def fields(self) -> dict[str, Any]:
        return _set({"model": self.model, "calls": self.calls}, not_run=self.not_run)

    @classmethod
    def from_fields(cls, recorded: Mapping[str, Any]) -> ModelCapped:
        return cls(recorded["model"], recorded["calls"], recorded.get("not_run"))


@dataclass(frozen=True)
class ModelRefused:
    """The model refused to go on; `said`, its words (None when it said nothing)."""

    CAUSE: ClassVar[str] = "model_refused"
    model: str
    said: str | None

    def fields(self) -> dict[str, Any]:
        return {"model": self.model, "said": self.said}

    @classmethod
    def from_fields(cls, recorded: Mapping[str, Any]) -> ModelRefused:
        return cls(recorded["model"], recorded.get("said"))


@dataclass(frozen=True)
class Cancelled:
    """A person answered `cancel all` to the confirmation of `tool` (and said why)."""

    CAUSE: ClassVar[str] = "cancelled"
    tool: str
    reason: str | None = None

    def fields(self) -> dict[str, Any]:
        return _set({"tool": self.tool}, reason=self.reason)

    @classmethod
    def from_fields(cls, recorded: Mapping[str, Any]) -> Cancelled:
        return cls(recorded["tool"], recorded.get("reason"))


@dataclass(frozen=True)
class DidNotHappen:
    """A person said a write in doubt took no effect."""

    CAUSE: ClassVar[str] = "did_not_happen"
    tool: str

    def fields(self) -> dict[str, Any]:
        return {"tool": self.tool}

    @classmethod
    def from_fields(cls, recorded: Mapping[str, Any]) -> DidNotHappen:
        return cls(recorded["tool"])


@dataclass(frozen=True)
class OperatorUndo:
    """An operator undoes an ended run from outside; `before`, the run's failure then
    (None for a run that ended well)."""

    CAUSE: ClassVar[str] = "operator"
    before: RunFailure | None

    def fields(self) -> dict[str, Any]:
        return {"before": self.before.to_record() if self.before is not None else None}

    @classmethod
    def from_fields(cls, recorded: Mapping[str, Any]) -> OperatorUndo:
        before = recorded.get("before")
        return cls(RunFailure.from_record(before) if before is not None else None)


Failure = (
    Failed
    | Unrecordable
    | Refused
    | ModelFailed
    | ModelCapped
    | ModelRefused
    | Cancelled
    | DidNotHappen
    | OperatorUndo
)

# What the model loop fails a run with.
ModelFailure = ModelFailed | ModelCapped | ModelRefused

# Each cause by the name the record keeps it under.
CAUSES: Mapping[str, Callable[[Mapping[str, Any]], Failure]] = {
    kind.CAUSE: kind.from_fields
    for kind in (
        Failed,
        Unrecordable,
        Refused,
        ModelFailed,
        ModelCapped,
        ModelRefused,
        Cancelled,
        DidNotHappen,
        OperatorUndo,
    )
}


@dataclass(frozen=True)
class Ending:
    """An operator's ending of the run (`ending.py`): who, when, why, the state it was in;
    the lease's holder the session was taken from, and the step whose confirmation waited
    (never run), when there were."""

    by: str | None
    at: float
    reason: str
    state: str
    taken_from: str | None = None
    not_run: str | None = None

    def to_record(self) -> dict[str, Any]:
        ended = {"by": self.by, "at": self.at, "reason": self.reason, "state": self.state}
        return _set(ended, taken_from=self.taken_from, not_run=self.not_run)

    @classmethod
    def from_record(cls, recorded: Mapping[str, Any]) -> Ending:
        return cls(
            by=recorded.get("by"),
            at=recorded["at"],
            reason=recorded["reason"],
            state=recorded["state"],
            taken_from=recorded.get("taken_from"),
            not_run=recorded.get("not_run"),
        )


@dataclass(frozen=True)
class RunFailure:
    """A run's failure: its `cause` (None for a run an operator ended while nothing had
    failed), and what its rollback and an operator's ending added to it.

    `undo_rounds`: each undo's tries before the round a person's `retry` (or an operator's
    undo) gave it. `undo`: the undo tool the rollback last stopped at, and why: the check
    refused it (`undo_refused`), no agent has its tool (`undo_missing`), or it failed on
    every try (`undo_error`, after `tries`); a later stop adds its own why to the earlier
    one's. `abandoned`: the writes left undone when a person abandoned the rollback.
    `ended`: an operator's ending.
    """

    cause: Failure | None = None
    undo_rounds: dict[str, int] | None = None
    undo: str | None = None
    undo_refused: str | None = None
    undo_missing: str | None = None
    undo_error: str | None = None
    tries: int | None = None
    abandoned: list[str] | None = None
    ended: Ending | None = None

    def to_record(self) -> dict[str, Any]:
        """The failure as the record keeps it (`RunRow.failure`)."""
        recorded = {"cause": self.cause.CAUSE, **self.cause.fields()} if self.cause else {}
        return _set(
            recorded,
            undo_rounds=self.undo_rounds,
            undo=self.undo,
            undo_refused=self.undo_refused,
            undo_missing=self.undo_missing,
            undo_error=self.undo_error,
            tries=self.tries,
            abandoned=self.abandoned,
            ended=self.ended.to_record() if self.ended is not None else None,
        )

    @classmethod
    def from_record(cls, recorded: Mapping[str, Any]) -> RunFailure:
        """The failure the record's form `recorded` holds."""
        cause = recorded.get("cause")
        ended = recorded.get("ended")
        # Built as the record's rows are, without the frozen `__init__`'s setattr per
        # field (no `__post_init__` to skip): a failed run's failure is read on every
        # undo and every reply.
        failure = object.__new__(cls)
        failure.__dict__.update(
            cause=CAUSES[cause](recorded) if cause is not None else None,
            undo_rounds=recorded.get("undo_rounds"),
            undo=recorded.get("undo"),
            undo_refused=recorded.get("undo_refused"),
            undo_missing=recorded.get("undo_missing"),
            undo_error=recorded.get("undo_error"),
            tries=recorded.get("tries"),
            abandoned=recorded.get("abandoned"),
            ended=Ending.from_record(ended) if ended is not None else None,
        )
        return failure


class StuckWhy(TypedDict, total=False):
    """Why a rollback stopped at an undo, as `RunFailure` keeps it (see its fields)."""

    undo_refused: str
    undo_missing: str
    undo_error: str
    tries: int


def failure_of(recorded: Mapping[str, Any] | None) -> RunFailure:
    """A run's failure as recorded (`RunRow.failure`); an empty one for None."""
    return RunFailure.from_record(recorded) if recorded is not None else RunFailure()


def recorded_failure(cause: Failure) -> dict[str, Any]:
    """A new failure of `cause` as the record keeps it: `RunFailure(cause).to_record()`,
    whose other fields are all unset."""
    return {"cause": cause.CAUSE, **cause.fields()}


def cause_text(cause: Failure, named: Callable[[str], str]) -> str:
    """Why the run stopped, as its reply says it; `named(tool)`, the step it failed at, as
    the reply names it apart from the run's other calls of its tool."""
    match cause:
        case Failed():
            return texts.failed_because(named(cause.tool), cause.error)
        case Unrecordable():
            return texts.unrecordable_because(named(cause.tool), cause.detail)
        case Refused():
            return texts.refused_because(named(cause.tool), cause.reason)
        case ModelFailed():
            return texts.model_failed_because(cause.model, cause.detail)
        case ModelCapped():
            return texts.model_cap_because(cause.model, cause.calls, cause.not_run or ())
        case ModelRefused():
            return texts.model_refused_because(cause.model, cause.said)
        case Cancelled():
            return texts.cancelled_because(named(cause.tool))
        case DidNotHappen():
            return texts.did_not_happen_because(named(cause.tool))
        case OperatorUndo():
            return texts.operator_because()
        case _:
            assert_never(cause)


def _set(recorded: dict[str, Any], **optional: Any) -> dict[str, Any]:
    """`recorded` with each of `optional` that is set (not None)."""
    recorded.update((name, value) for name, value in optional.items() if value is not None)
    return recorded
