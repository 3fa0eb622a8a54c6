"""The lines stalwart logs (see `stalwart.logs`), %-style: a line is formatted only when a
handler takes it. Each names the session and the run it is about, where it knows them."""

from __future__ import annotations

# A run's state moved: session, run, state before, state after, the event.
RUN_MOVED = "session %s run %s: %s -> %s (%s)"
# A call in doubt sent again under its key: session, run, tool, try number, error.
CALL_RETRIED = "session %s run %s: %s failed in doubt on try %d (%s); sent again under its key"
# An undo sent: session, run, undo tool, the write it undoes, try number.
UNDO_SENT = "session %s run %s: undoing %s with %s, try %d"
# The wait between two tries of an undo: try number, tries, error, seconds.
UNDO_WAIT = "an undo failed on try %d of %d (%s); the next try in %g s"
# An undo that failed every try: session, run, undo tool, tries, error.
UNDO_GAVE_UP = "session %s run %s: %s failed after %d tries (%s); a person is asked"
# A run taken up from the record: session, run, state.
RUN_RESUMED = "session %s run %s: resumed, %s"
# An operator's ending took the session without its lock from a worker whose lease had
# expired: session, run, the lease's holder ("" for none), the new lease's token.
SESSION_TAKEN_OVER = (
    "session %s run %s: taken without its lock from %r, whose lease had expired; that "
    "worker is fenced (token %d)"
)
# The model asked: session, run, model, ask number, asks allowed.
MODEL_ASKED = "session %s run %s: asking the model %s, ask %d of at most %d"
# The model answered: session, run, model, number of tool calls.
MODEL_ANSWERED = "session %s run %s: the model %s answered with %d tool call(s)"
# The model failed: session, run, model, error.
MODEL_FAILED = "session %s run %s: the model %s failed (%s)"
# The wait before the model is called again: model, error, try number, tries, seconds.
MODEL_WAIT = "the model %s failed (%s) on try %d of %d; the next try in %g s"
# A request `stalwart serve` answered: method, path, status, milliseconds taken.
REQUEST = "%s %s %d %.1f ms"
