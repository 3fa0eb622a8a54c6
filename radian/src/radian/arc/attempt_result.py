"""One attempt's result, typed: runs/<task>/attempts/<id>/attempt_result.json.

`AttemptResult` is the one value an attempt's end becomes. `settle` builds it where the
attempt ends (`ended_result`, from the `AttemptOutcome` radian.arc.settle made of the
worker's AttemptEnd), a cancel and a reverify build their own, the gate adds its summary;
the store writes `document()` and reads `read()` back, and every reader reads the fields.
JSON is made and read here only.

Nested in it, typed: the worker's model error, the outcome `settle` applied
(`outcome_record`: recovery applies it again when a run died before it saved the task) and
the gate's summary. The flat fields beside them are the chapter's file as people, `show
--json` and earlier builds read it: the chapter's row and class, what the attempt cost,
where it sent the task. (radian.arc.classify's `Classification` stays the table's answer
for an AttemptEnd; it is copied into the outcome, never stored.)

The bytes are what earlier builds wrote (tests/attempt_result_files): the keys every result
has, always, in this order, the chapter's "class" among them; then the keys only some have
(a worker's end, a decided move, a gate), each present exactly when it was given or read;
then any key another build added, kept as read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from radian.arc.classify import Row
from radian.arc.records import FORMAT_VERSION


class _AsGiven(BaseModel):
    """A nested record written with the keys it was given (or read with), no others: an
    earlier build's model error without a message is written back without one."""

    model_config = ConfigDict(frozen=True, extra="allow", allow_inf_nan=False)

    @model_serializer(mode="wrap")
    def _as_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {key: value for key, value in data.items() if key in self.model_fields_set}


class ModelErrorRecord(_AsGiven):
    """The worker's model error (formats.ModelError) as the result keeps it."""

    kind: str | None = None
    retry_after_secs: float | None = None
    message: str | None = None


class GateSummary(_AsGiven):
    """What the gate did with the attempt (radian.arc.gate.apply)."""

    passed: bool = False
    stages: tuple[str, ...] = ()
    reason: str | None = None
    verdicts: tuple[str, ...] = ()  # the verdict files, relative to runs/<task>/
    review_cost_micros: int = 0
    applied_at: str | None = None
    next_state: str | None = None


@dataclass(frozen=True)
class AttemptOutcome:
    """What arc keeps of one attempt's end: everything `settle` needs, and nothing else."""

    row: str  # a key of classify.ROWS
    outcome: str | None
    model_wait: bool
    model_error: ModelErrorRecord | None
    reason: str | None
    session_id: str | None
    session_cost_usd: float | None
    worker_started: bool
    resumed: bool  # the attempt ran in the session it was asked to resume
    base_sha: str | None
    head_sha: str | None
    exit_code: int | None
    wrapper_class: str | None
    result_format: str | None
    started_at: str | None
    ended_at: str | None
    # How the Result's cost counts (formats.CostScope): a session total is differenced on a
    # resumed attempt, a per-process figure taken as it stands.
    cost_scope: str = "session_total"
    fresh_session_next: bool = False  # the session refused or was lost: do not resume it
    # Why the worker's reported cost was refused (NaN, infinite, negative): the attempt's
    # cost is unknown. Absent from records written by earlier builds.
    cost_problem: str | None = None
    # The remote could not be reached: an infrastructure wait (no retry used).
    remote_error: str | None = None


# The keys only some results have, written exactly when given: a worker's end (the first
# three), a decided move (the next three: a cancel's or a reverify's result has none), a gate.
SOMETIMES = frozenset(
    {"exit_code", "wrapper_class", "result_format", "retry_at", "retry_count",
     "outcome_record", "gate", "review_cost_micros"}
)  # fmt: skip


class AttemptResult(BaseModel):
    """One attempt's end, as the chapter's table classed it; see the module's docstring."""

    model_config = ConfigDict(
        frozen=True, extra="allow", protected_namespaces=(), allow_inf_nan=False
    )

    format_version: int = 0  # the file's; 0: written before versions
    task: str
    attempt_id: str
    outcome: str | None = None
    # the chapter's "class"
    failure_class: str | None = Field(
        default=None,
        validation_alias=AliasChoices("class", "failure_class"),
        serialization_alias="class",
    )
    row: str | None = None  # the row's words (classify.Row.result)
    model_wait: bool = False
    model_error: ModelErrorRecord | None = None
    reason: str | None = None
    cost_usd: float | None = 0.0  # None: unknown (cost_unknown says why)
    cost_unknown: str | None = None
    session_cost_usd: float | None = None
    cost_scope: str | None = None  # what session_cost_usd covers (worker.formats.CostScope)
    session_id: str | None = None
    base_sha: str | None = None
    head_sha: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    next_state: str | None = None
    # -- only some results (SOMETIMES) --
    exit_code: int | None = None
    wrapper_class: str | None = None
    result_format: str | None = None
    retry_at: str | None = None
    retry_count: int | None = None
    outcome_record: AttemptOutcome | None = None
    gate: GateSummary | None = None
    review_cost_micros: int | None = None

    # The keys an outcome_record read from a file had: an earlier build's lacks the fields
    # added since, and is written back (a gate's summary joining it) without them.
    _outcome_keys: frozenset[str] | None = PrivateAttr(default=None)

    def given(self, *names: str) -> dict[str, Any]:
        """Those of `names` this result was given (or read with), by field name."""
        return {name: getattr(self, name) for name in names if name in self.model_fields_set}

    def document(self) -> dict[str, Any]:
        """The file as it is written, stamped with this build's format version."""
        data = self.model_dump(by_alias=True, exclude=set(SOMETIMES - self.model_fields_set))
        kept, outcome = self._outcome_keys, data.get("outcome_record")
        if kept is not None and isinstance(outcome, dict):
            data["outcome_record"] = {key: outcome[key] for key in outcome if key in kept}
        return {**data, "format_version": FORMAT_VERSION}

    @classmethod
    def read(cls, data: dict[str, Any] | None) -> AttemptResult | None:
        """A result read back (this build's or an earlier one's); None when there is none
        or it is no attempt result (a file edited into something else)."""
        if data is None:
            return None
        try:
            found = cls.model_validate(data)
        except ValidationError:
            return None
        outcome = data.get("outcome_record")
        if isinstance(outcome, dict):
            found._outcome_keys = frozenset(outcome)
        return found


def ended_result(
    task: str, attempt_id: str, outcome: AttemptOutcome, row: Row, cost: float
) -> AttemptResult:
    """The result of an attempt that ended (settle), before its move is decided."""
    return AttemptResult(
        task=task,
        attempt_id=attempt_id,
        outcome=outcome.outcome,
        failure_class=row.failure_class,
        row=row.result,
        model_wait=outcome.model_wait,
        model_error=outcome.model_error,
        reason=outcome.reason,
        cost_usd=None if outcome.cost_problem else cost,
        cost_unknown=outcome.cost_problem,
        session_cost_usd=outcome.session_cost_usd,
        cost_scope=outcome.cost_scope,
        session_id=outcome.session_id,
        base_sha=outcome.base_sha,
        head_sha=outcome.head_sha,
        exit_code=outcome.exit_code,
        wrapper_class=outcome.wrapper_class,
        result_format=outcome.result_format,
        started_at=outcome.started_at,
        ended_at=outcome.ended_at,
    )
