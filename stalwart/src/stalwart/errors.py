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


class ModelConfigError(NoModelError):
    """A `provider:model` selector cannot be loaded: bad form, unknown provider, missing
    extra or missing API key. Raised by `load_model`, before any turn."""

    code = "model_config"


class ModelError(StalwartError):
    """A call to a model failed. `selector` names the model (`provider:model`)."""

    code = "model_error"

    def __init__(self, selector: str, message: str) -> None:
        self.selector = selector
        super().__init__(f"{selector}: {message}")


class ModelUnavailable(ModelError):
    """Rate-limited, overloaded or unreachable past the retry cap; the engine replies."""

    code = "model_unavailable"

    def __init__(
        self, selector: str, message: str, *, attempts: int, last_status: int | None
    ) -> None:
        self.attempts = attempts
        self.last_status = last_status
        super().__init__(selector, message)


class ModelRequestRejected(ModelError):
    """The provider refused the request (400, 401, 403, 404, ...); retrying cannot help."""

    code = "model_rejected"

    def __init__(self, selector: str, message: str, *, status: int) -> None:
        self.status = status
        super().__init__(selector, message)


class ModelReplyInvalid(ModelError):
    """The provider's answer cannot be read: a malformed body or tool-call arguments."""

    code = "model_reply_invalid"


class RewindRefused(StalwartError):
    """A rewind was asked for while an undo remains or the run is stuck."""

    code = "rewind_with_pending_compensation"


class OperatorTokenError(StalwartError):
    """An operator action with a wrong or missing operator token."""

    code = "operator_token"


class QuestionPending(StalwartError):
    """A new turn came while the session's run still waits for a person's answer."""

    code = "question_pending"


class NotYourSession(StalwartError):
    """A user acted on a session another user started."""

    code = "not_your_session"
