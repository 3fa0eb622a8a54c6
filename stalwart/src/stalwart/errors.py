"""Every error stalwart raises on purpose, under one root class.

Each carries a stable `code` (an `ErrorCode`, a `str`) a program can test, beside a message
a person can read. An error that a caller has long caught as a builtin (`TypeError`,
`ValueError`) keeps that base too.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .replies import Reply
    from .tools.boundary import Refusal


class ErrorCode(StrEnum):
    """Every error's code; the values are stable and compare equal to plain strings."""

    STALWART_ERROR = "stalwart_error"
    CONFIG = "config_error"
    AMBIGUOUS = "ambiguous"
    BAD_ANSWER = "bad_answer"
    NO_MODEL = "no_model"
    MODEL_CONFIG = "model_config"
    MODEL_ERROR = "model_error"
    MODEL_UNAVAILABLE = "model_unavailable"
    MODEL_TIMED_OUT = "model_timed_out"
    MODEL_REJECTED = "model_rejected"
    MODEL_REPLY_INVALID = "model_reply_invalid"
    MODEL_SCRIPT_EXHAUSTED = "model_script_exhausted"
    PROVIDER_FAILURE = "provider_failure"
    PROVIDER_TIMEOUT = "provider_timeout"
    REWIND_WITH_PENDING_COMPENSATION = "rewind_with_pending_compensation"
    OPERATOR_TOKEN = "operator_token"
    QUESTION_PENDING = "question_pending"
    NOT_YOUR_SESSION = "not_your_session"
    RUN_STATE = "run_state"
    SESSION_BUSY = "session_busy"
    UNKEYABLE_ARGUMENT = "unkeyable_argument"
    TOOL_DEFINITION = "tool_definition"
    TOOL_SOURCE = "tool_source"
    UNDO_GAVE_UP = "undo_gave_up"
    NOT_RECORDABLE = "not_recordable"
    ARGUMENT_REFUSED = "argument_refused"
    TOOL_TIMEOUT = "tool_timeout"
    STALE_ANSWER = "stale_answer"
    NOT_SIGNED_IN = "not_signed_in"
    CSRF_REFUSED = "csrf_refused"
    MCP_TOOL_FAILED = "mcp_tool_failed"
    UNDO_UNAVAILABLE = "undo_unavailable"
    TOOL_UNAVAILABLE = "tool_unavailable"
    RECORD_UNAVAILABLE = "record_unavailable"
    LEASE_LOST = "lease_lost"
    INPUT_REFUSED = "input_refused"
    UNSAFE_SETUP = "unsafe_setup"
    CALL_CHANGED = "call_changed"
    RUN_STOPPED = "run_stopped"
    ADDRESS_UNAVAILABLE = "address_unavailable"


class StalwartError(Exception):
    """The root of stalwart's errors."""

    code: ErrorCode = ErrorCode.STALWART_ERROR


class ConfigError(StalwartError):
    """agent.yaml, a tool source or the rulebook cannot be used.

    The message names the file, the key path and what was expected.
    """

    code = ErrorCode.CONFIG

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

    code = ErrorCode.AMBIGUOUS


class AnswerError(StalwartError):
    """An answer that cannot be taken: from another user, to nothing, or not offered."""

    code = ErrorCode.BAD_ANSWER


class NoModelError(StalwartError):
    """A turn needs a model and none can be called."""

    code = ErrorCode.NO_MODEL


class ModelConfigError(NoModelError):
    """A `provider:model` selector cannot be loaded: bad form, unknown provider, missing
    extra or missing API key. Raised by `load_model`, before any turn."""

    code = ErrorCode.MODEL_CONFIG


class ModelError(StalwartError):
    """A call to a model failed. `selector` names the model (`provider:model`)."""

    code = ErrorCode.MODEL_ERROR

    def __init__(self, selector: str, message: str) -> None:
        self.selector = selector
        super().__init__(f"{selector}: {message}")


class ModelUnavailable(ModelError):
    """Rate-limited, overloaded or unreachable past the retry cap; the engine replies."""

    code = ErrorCode.MODEL_UNAVAILABLE

    def __init__(
        self, selector: str, message: str, *, attempts: int, last_status: int | None
    ) -> None:
        self.attempts = attempts
        self.last_status = last_status
        super().__init__(selector, message)


class ModelTimedOut(ModelUnavailable):
    """No answer came within the timeout, on the first try and on the one retry.

    A reply slower than the timeout may still be billed, so it is retried at most once,
    whatever the backoff would allow for a lost connection.
    """

    code = ErrorCode.MODEL_TIMED_OUT

    def __init__(self, selector: str, message: str, *, attempts: int, timeout: float) -> None:
        self.timeout = timeout
        super().__init__(selector, message, attempts=attempts, last_status=None)


class ModelRequestRejected(ModelError):
    """The provider refused the request (400, 401, 403, 404, ...); retrying cannot help."""

    code = ErrorCode.MODEL_REJECTED

    def __init__(self, selector: str, message: str, *, status: int) -> None:
        self.status = status
        super().__init__(selector, message)


class ModelReplyInvalid(ModelError):
    """The provider's answer cannot be read: a malformed body or tool-call arguments."""

    code = ErrorCode.MODEL_REPLY_INVALID


class RewindRefused(StalwartError):
    """A rewind was asked for while an undo remains or the run is stuck."""

    code = ErrorCode.REWIND_WITH_PENDING_COMPENSATION


class OperatorTokenError(StalwartError):
    """An operator action with a wrong or missing operator token."""

    code = ErrorCode.OPERATOR_TOKEN


class QuestionPending(StalwartError):
    """A new turn came while the session's run still waits for a person's answer."""

    code = ErrorCode.QUESTION_PENDING


class NotYourSession(StalwartError):
    """A session that is not the user's: another user's, or (where a session id is given,
    as in the interface's addresses) one that does not exist, which looks the same so an id
    tells nobody whether it is in use. The one error for "not yours", in the library, the
    CLI and the interface (`SessionNotFound` is the same class)."""

    code = ErrorCode.NOT_YOUR_SESSION


class ScriptExhausted(ModelError):
    """A scripted model was called more often than its script says."""

    code = ErrorCode.MODEL_SCRIPT_EXHAUSTED


class ProviderFailure(StalwartError):
    """One failed HTTP exchange with a model provider, as an adapter reports it.

    `status` is None when no response came back (refused, reset, timed out). The model's
    backoff turns it into `ModelUnavailable` or `ModelRequestRejected`.
    """

    code = ErrorCode.PROVIDER_FAILURE

    def __init__(
        self, status: int | None, message: str, headers: Mapping[str, str] | None = None
    ) -> None:
        self.status = status
        self.message = message
        self.headers: Mapping[str, str] = headers or {}
        super().__init__(f"HTTP {status}: {message}" if status is not None else message)


class ProviderTimeout(ProviderFailure):
    """No answer within the client's timeout (`timeout` seconds)."""

    code = ErrorCode.PROVIDER_TIMEOUT

    def __init__(self, timeout: float, message: str) -> None:
        self.timeout = timeout
        super().__init__(None, message)


class RunStateError(StalwartError):
    """A transition the table does not allow: the record and the code disagree."""

    code = ErrorCode.RUN_STATE


class SessionBusy(StalwartError):
    """Another worker is advancing this session and did not finish in time."""

    code = ErrorCode.SESSION_BUSY


class LeaseLost(StalwartError):
    """This worker's lease on the session ended (it expired and another worker took it):
    its commit wrote nothing, and it must not act on the session again."""

    code = ErrorCode.LEASE_LOST


class Unencodable(ValueError):
    """A value with no exact JSON form (`codec`); `reason` says which kind of refusal it is.
    Plain, not a `StalwartError`: whoever renders the value says so in its own words, as
    `UnkeyableArgument` or `NotRecordable`, and nobody outside stalwart ever sees it."""

    class Reason(StrEnum):
        NOT_FINITE = "not finite"  # NaN or an infinity: no JSON number reads back as it
        NO_JSON_FORM = "no JSON form"  # an arbitrary object, a set, bytes

    def __init__(self, value: Any, reason: Reason) -> None:
        super().__init__(f"{type(value).__name__}: {reason}")
        self.value = value
        self.reason = reason


class UnkeyableArgument(StalwartError, TypeError):
    """An argument whose value cannot be rendered stably into an idempotency key."""

    code = ErrorCode.UNKEYABLE_ARGUMENT


class NotRecordable(StalwartError, TypeError):
    """A value the record cannot hold exactly (an arbitrary object, a set): it would come
    back as something else, so the step that produced it fails instead."""

    code = ErrorCode.NOT_RECORDABLE


class ArgumentRefused(StalwartError, ValueError):
    """A value that does not fit its parameter's type; `refusal` says where, what it was
    and what it should have been (`tools.boundary.Refusal`)."""

    code = ErrorCode.ARGUMENT_REFUSED

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.reason)
        self.refusal = refusal


class ToolTimeout(StalwartError, TimeoutError):
    """A tool call ran past the timeout its tool declares. Its effect is in doubt (a
    `TimeoutError`): the chapter's rules for a call in doubt apply."""

    code = ErrorCode.TOOL_TIMEOUT


class ToolDefinitionError(StalwartError, ValueError):
    """A tool is declared in a way that cannot work (raised when it is declared)."""

    code = ErrorCode.TOOL_DEFINITION


class ToolSourceError(StalwartError):
    """A tool source cannot give its tools: a module that fails to import, defines no
    tools, or shares its name with another project's. Loading a config reports it as a
    ConfigError at the source's key."""

    code = ErrorCode.TOOL_SOURCE


class McpToolError(StalwartError):
    """An MCP server's tool failed: its result said `isError: true`, the server refused
    the call, or the server could not be started again before it was sent. Not in doubt:
    the server said what happened, or nothing was sent."""

    code = ErrorCode.MCP_TOOL_FAILED


class UndoGaveUp(StalwartError):
    """An undo that failed on every try; `error` is the last failure.

    The message is the `(<error>)` part of "Undoing <tool> failed after <tries> tries".
    """

    code = ErrorCode.UNDO_GAVE_UP

    def __init__(self, tries: int, error: BaseException, rendered: str) -> None:
        self.tries = tries
        self.error = error
        super().__init__(f"failed after {tries} tries ({rendered})")


# --- the interface (`stalwart serve`, chapter 35) ---


class StaleAnswer(AnswerError):
    """An answer to a question that no longer waits: answered already, or moved on (a stale
    page's button, a double click, an HTTP retry, a second worker). Nothing changed."""

    code = ErrorCode.STALE_ANSWER


class NotSignedIn(StalwartError):
    """A request of the interface with nobody signed in (or a wrong password)."""

    code = ErrorCode.NOT_SIGNED_IN


class CsrfRefused(StalwartError):
    """A form or API call whose anti-forgery token is missing or wrong; nothing changed."""

    code = ErrorCode.CSRF_REFUSED


class AddressUnavailable(StalwartError, OSError):
    """`stalwart serve` cannot listen on the address it was given: another program listens
    on the port, the host is not this machine's, or the port needs privileges."""

    code = ErrorCode.ADDRESS_UNAVAILABLE


# The interface's name for the one "not yours" error: no session of that id is the
# signed-in user's (another user's looks the same). Kept so callers that catch it keep working.
SessionNotFound = NotYourSession


class InputRefused(StalwartError, ValueError):
    """A turn, a user's or a session's name past the documented limits (`stalwart.limits`):
    too long, too many steps, a number of too many digits, a control character or a lone
    surrogate. Refused before anything is read or recorded; nothing changed."""

    code = ErrorCode.INPUT_REFUSED


class UndoUnavailable(StalwartError):
    """The session's run is being undone, and this worker's agent.yaml lacks the undo its
    next write declared when it ran: the run is left for a worker that has it."""

    code = ErrorCode.UNDO_UNAVAILABLE


class ToolUnavailable(StalwartError):
    """The session's run stopped while a call was being sent, and this worker's agent.yaml
    lacks the call's tool: the run is left for a worker that has it."""

    code = ErrorCode.TOOL_UNAVAILABLE


class RecordUnavailable(StalwartError):
    """The record's database cannot be reached (a PostgreSQL server stopped, restarting or
    out of reach). Nothing was sent that the record did not hold first."""

    code = ErrorCode.RECORD_UNAVAILABLE


class UnsafeSetup(StalwartError):
    """A foreign framework set up in a way that would break one of stalwart's guarantees,
    refused when its guarded agent is built (or, for what only a run shows, before the
    run sends anything): a framework timeout on a write, an approval that changes a call's
    arguments, an inline approver, a durable engine around guarded writes, a guarded agent
    run without its driver. The message says which, and why."""

    code = ErrorCode.UNSAFE_SETUP


class CallChanged(StalwartError):
    """A framework's call, found again by its id, has another tool or other arguments than
    the step it was recorded as: nothing is sent (an approval sends exactly the arguments
    a person was shown)."""

    code = ErrorCode.CALL_CHANGED


class RunStopped(StalwartError):
    """Raised inside a framework's run to end it: its guarded run stopped (failed and
    rolled back, or ended). `reply` is the run's one reply; an adapter's driver catches
    it and returns the reply."""

    code = ErrorCode.RUN_STOPPED

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.text)
        self.reply = reply


class CallLeftForAPerson(Exception):  # noqa: N818 - a signal, not an error a caller sees
    """Inside an adapter: a call its framework let through that must wait for a person after
    all. The framework's run ends, and the adapter's driver takes the run up from what it
    kept. It never reaches a caller, so it is no StalwartError and has no code."""
