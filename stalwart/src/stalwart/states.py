"""A run's states and transitions as one table, public: what a reader of the record needs.

A run's state is a `State` in the record (`RunRow.state`); it changes only on an `Event`,
to the state `TRANSITIONS` names (`transition`), and the engine moves a run through this
table alone (`stalwart._engine.runs.move`). The interface (`stalwart serve`), `stalwart
verify` and the guarded-run API read these names instead of the engine: `ENDED`,
`INTERRUPTED` and `ASKING` say what a run found in the record is doing, and
`others_would_be_undone` what a failure of a run would undo beside a step.

This module holds data and pure functions only: it reads no record and sends nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import TYPE_CHECKING

from .errors import RunStateError

if TYPE_CHECKING:
    from .tools import ToolSpec


class State(StrEnum):
    NEW = "new"  # not yet recorded
    RUNNING = "running"  # steps are being sent
    WAITING = "waiting"  # a question waits for a person (a confirmation or an outcome)
    ROLLING_BACK = "rolling_back"  # the run failed; its writes are being undone
    DONE = "done"  # every step ran or was skipped
    ROLLED_BACK = "rolled_back"  # failed, undone as far as it can be, and rewound
    STUCK = "stuck"  # an undo failed on every try; the rollback stopped; a person is asked
    ABANDONED = "abandoned"  # a person abandoned a stuck rollback; rewound
    ENDING = "ending"  # an operator is ending it; the undos it may send are being sent
    ENDED_BY_OPERATOR = "ended_by_operator"  # an operator ended it (`ending.py`); rewound
    UNREAD = "unread"  # nothing could be read from the turn; nothing ran


class Event(StrEnum):
    READ = "read"  # the turn was read into steps
    NOT_READ = "not_read"  # a clause could not be read (on_unread: refuse)
    TO_MODEL = "to_model"  # a clause could not be read; the model chooses the steps
    ASK = "ask"  # a write waits for its confirmation
    APPROVE = "approve"
    SKIP = "skip"
    CANCEL_ALL = "cancel all"
    IN_DOUBT = "in_doubt"  # nobody knows whether a write took effect: a person is asked
    HAPPENED = "happened"
    DID_NOT_HAPPEN = "did not happen"
    STEP_FAILED = "step_failed"  # a tool raised
    REFUSED = "refused"  # the check refused a step
    MODEL_FAILED = "model_failed"  # the model could not answer, or would not stop
    FINISHED = "finished"  # no step remains
    UNDONE = "undone"  # nothing remains to undo
    UNDO_FAILED = "undo_failed"  # an undo failed on every try
    RETRY_UNDO = "retry"
    DONE_BY_HAND = "done by hand"
    ABANDON = "abandon"
    OPERATOR_UNDO = "operator_undo"  # an operator undoes an ended run from outside
    OPERATOR_END = "operator_end"  # an operator ends a run that cannot go on
    ENDED = "ended"  # the operator's ending is over: what remains is a person's


TRANSITIONS: Mapping[tuple[State, Event], State] = {
    (State.NEW, Event.READ): State.RUNNING,
    (State.NEW, Event.NOT_READ): State.UNREAD,
    (State.NEW, Event.TO_MODEL): State.RUNNING,
    (State.RUNNING, Event.ASK): State.WAITING,
    (State.WAITING, Event.APPROVE): State.RUNNING,
    (State.WAITING, Event.SKIP): State.RUNNING,
    (State.WAITING, Event.CANCEL_ALL): State.ROLLING_BACK,
    (State.RUNNING, Event.IN_DOUBT): State.WAITING,
    (State.WAITING, Event.HAPPENED): State.RUNNING,
    (State.WAITING, Event.DID_NOT_HAPPEN): State.ROLLING_BACK,
    (State.RUNNING, Event.STEP_FAILED): State.ROLLING_BACK,
    (State.RUNNING, Event.REFUSED): State.ROLLING_BACK,
    (State.RUNNING, Event.MODEL_FAILED): State.ROLLING_BACK,
    (State.RUNNING, Event.FINISHED): State.DONE,
    (State.ROLLING_BACK, Event.UNDONE): State.ROLLED_BACK,
    (State.ROLLING_BACK, Event.UNDO_FAILED): State.STUCK,
    (State.STUCK, Event.RETRY_UNDO): State.ROLLING_BACK,
    (State.STUCK, Event.DONE_BY_HAND): State.ROLLING_BACK,
    (State.STUCK, Event.ABANDON): State.ABANDONED,
    (State.DONE, Event.OPERATOR_UNDO): State.ROLLING_BACK,
    (State.ROLLED_BACK, Event.OPERATOR_UNDO): State.ROLLING_BACK,
    (State.ABANDONED, Event.OPERATOR_UNDO): State.ROLLING_BACK,
    (State.WAITING, Event.OPERATOR_END): State.ENDING,
    (State.STUCK, Event.OPERATOR_END): State.ENDING,
    (State.RUNNING, Event.OPERATOR_END): State.ENDING,
    (State.ROLLING_BACK, Event.OPERATOR_END): State.ENDING,
    (State.ENDING, Event.ENDED): State.ENDED_BY_OPERATOR,
}

# A run in one of these states takes no further step of its own; only an operator's undo
# moves it again (not one an operator ended: what it left was handed to a person). STUCK
# is not among them: it still has writes to undo, and a person is asked what to do.
ENDED = frozenset(
    {State.DONE, State.ROLLED_BACK, State.ABANDONED, State.UNREAD, State.ENDED_BY_OPERATOR}
)

# States a run is in only while a process is advancing it; found under the session's lock,
# they mean that process stopped mid-way, and the run is resumed (an ending, finished).
INTERRUPTED = frozenset({State.RUNNING, State.ROLLING_BACK, State.ENDING})

# States in which a run has a question waiting for a person.
ASKING = frozenset({State.WAITING, State.STUCK})


# The table looked up by the state's value as the record keeps it: a StrEnum member is
# equal to its value and hashes as it, so a run's state is not made a `State` (a Python
# call of the enum's) at each of the ten or so moves of an order.
_BY_VALUE: Mapping[tuple[str, Event], State] = {moving: to for moving, to in TRANSITIONS.items()}


def transition(state: str, event: Event) -> State:
    """The state a run in `state` moves to on `event`; RunStateError if the table has none."""
    try:
        return _BY_VALUE[(state, event)]
    except (KeyError, TypeError):
        raise RunStateError(f"a run {state!r} cannot take {event.value!r}") from None


def others_would_be_undone(
    earlier: Iterable[ToolSpec], later: Iterable[ToolSpec], *, model_run: bool
) -> bool:
    """Whether a step's confirmation says the chapter's sentence for a run in which other
    writes would be undone: a write with an undo took effect before it (`earlier`: the
    run's writes that took effect), or a write with an undo comes after it (`later`: the
    run's steps after it), or a model may still choose more steps. An irreversible write,
    or one that declares no undo, is never undone, so two of them in one run do not make
    it. `stalwart verify` asks the same."""
    return (
        any(spec.writes and spec.undo is not None for spec in earlier)
        or any(spec.writes and spec.undo is not None for spec in later)
        or model_run
    )
