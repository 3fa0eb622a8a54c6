"""arc's loggers: each under "radian.arc", silent (a NullHandler) until the application
configures logging. Kept out of `radian.arc` itself: the wrapper, started once per attempt,
never logs, and importing logging (re, traceback) was a fifth of its start-up."""

from __future__ import annotations

import logging

logging.getLogger("radian.arc").addHandler(logging.NullHandler())


def logger(name: str) -> logging.Logger:
    """The logger of the module `name` (a module of radian.arc)."""
    return logging.getLogger(name)
