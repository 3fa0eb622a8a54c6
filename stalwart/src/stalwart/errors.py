"""Every error stalwart raises on purpose, under one root class.

Each carries a stable `code` a program can test, beside a message a person can read.
"""

from __future__ import annotations


class StalwartError(Exception):
    """The root of stalwart's errors."""

    code = "stalwart_error"


class ConfigError(StalwartError):
    """agent.yaml, a tool source or the rulebook cannot be used.

    The message names the file, the key path and what was expected.
    """

    code = "config_error"

    def __init__(
        self,
        file: str,
        key_path: str,
        expected: str,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.file = file
        self.key_path = key_path
        self.expected = expected
        self.line = line
        self.column = column
        where = file
        if line is not None:
            where += f":{line}" + (f":{column}" if column is not None else "")
        super().__init__(f"{where}: {key_path}: {expected}" if key_path else f"{where}: {expected}")


class Ambiguous(StalwartError):
    """Raised by a tool to say it does not know whether its call took effect.

    The effect is in doubt (see `stalwart.retry.in_doubt`): a read or a retry-safe
    write is tried again under the same key; any other write goes to a person.
    """

    code = "ambiguous"


class AnswerError(StalwartError):
    """An answer that cannot be taken: from another user, to nothing, or not offered."""

    code = "bad_answer"


class NoModelError(StalwartError):
    """A turn needs a model and none can be called."""

    code = "no_model"


class RewindRefused(StalwartError):
    """A rewind was asked for while an undo remains or the run is stuck."""

    code = "rewind_with_pending_compensation"


class OperatorTokenError(StalwartError):
    """An operator action with a wrong or missing operator token."""

    code = "operator_token"
