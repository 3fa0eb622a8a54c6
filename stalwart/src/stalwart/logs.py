"""stalwart's loggers: `stalwart` and its children, silent unless the application says.

The library only logs (retries, waits, resumes, the model's asks, every move of a run's
state, rollbacks included), at INFO, through `logging.getLogger("stalwart")` and its
children; a `NullHandler` on `stalwart` keeps it silent where the application configures
nothing. An application shows the lines with the standard library, e.g.
`logging.basicConfig(level=logging.INFO)` or a handler on `logging.getLogger("stalwart")`.

The command line prints WARNING and above to stderr, as Python itself would for a library
that installed no handler; `stalwart serve` (and each of its workers) also prints the
interface's INFO lines (`SERVE`: each request, the runs it resumed, what a stop waits for).
"""

from __future__ import annotations

import logging
import sys

ROOT = "stalwart"
RUN = "stalwart.run"  # a run's moves, its calls' retries, its undos and their waits, resumes
MODEL = "stalwart.model"  # the model's asks and its backoff's waits
SERVE = "stalwart.serve"  # the interface (stalwart/serve/)

logging.getLogger(ROOT).addHandler(logging.NullHandler())


class StderrHandler(logging.Handler):
    """Writes to whatever `sys.stderr` is when a line comes (as Python's own last-resort
    handler does), so a test runner's swapped stream is honoured."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:
            self.handleError(record)


def warnings_to_stderr() -> None:
    """An application's set-up (the CLI's): WARNING and above of `stalwart` on stderr, the
    message alone (with its traceback, if any), once however often it is called."""
    root = logging.getLogger(ROOT)
    if not any(isinstance(handler, StderrHandler) for handler in root.handlers):
        root.addHandler(StderrHandler(logging.WARNING))


class _WarningsAndServe(logging.Filter):
    """WARNING and above of every logger, and the interface's (`SERVE`) INFO lines."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or (
            record.name == SERVE or record.name.startswith(SERVE + ".")
        )


def serve_to_stderr() -> None:
    """`stalwart serve`'s set-up (and each worker's): `warnings_to_stderr`, and the INFO lines
    of `SERVE` on the same handler, so a server is not silent; once however often called."""
    warnings_to_stderr()
    handler = next(h for h in logging.getLogger(ROOT).handlers if isinstance(h, StderrHandler))
    if not any(isinstance(found, _WarningsAndServe) for found in handler.filters):
        handler.addFilter(_WarningsAndServe())
    handler.setLevel(logging.INFO)
    serve = logging.getLogger(SERVE)
    if serve.getEffectiveLevel() > logging.INFO:
        serve.setLevel(logging.INFO)
