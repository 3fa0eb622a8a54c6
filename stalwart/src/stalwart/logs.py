"""stalwart's loggers: `stalwart` and its children, silent unless the application says.

The library only logs (retries, waits, resumes, the model's asks, every move of a run's
state, rollbacks included), at INFO, through `logging.getLogger("stalwart")` and its
children; a `NullHandler` on `stalwart` keeps it silent where the application configures
nothing. An application shows the lines with the standard library, e.g.
`logging.basicConfig(level=logging.INFO)` or a handler on `logging.getLogger("stalwart")`.

The command line (and each worker of `stalwart serve --workers N`) prints WARNING and
above to stderr, as Python itself would for a library that installed no handler.
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
