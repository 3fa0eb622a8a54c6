"""stalwart: an agent runtime whose every write is confirmed, keyed, recorded and undoable."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from . import logs as logs  # the `stalwart` logger's NullHandler, before anything logs
from .agent import Agent, RecordedAnswer, RecordedCall
from .clock import Clock, FakeClock, SystemClock
from .errors import (
    AddressUnavailable,
    Ambiguous,
    AnswerError,
    ArgumentRefused,
    CallChanged,
    ConfigError,
    CsrfRefused,
    ErrorCode,
    InputRefused,
    LeaseLost,
    McpToolError,
    ModelConfigError,
    ModelError,
    ModelReplyInvalid,
    ModelRequestRejected,
    ModelTimedOut,
    ModelUnavailable,
    NoModelError,
    NotRecordable,
    NotSignedIn,
    NotYourSession,
    OperatorTokenError,
    ProviderFailure,
    ProviderTimeout,
    QuestionPending,
    RecordUnavailable,
    RewindRefused,
    RunStateError,
    RunStopped,
    ScriptExhausted,
    SessionBusy,
    SessionNotFound,
    StaleAnswer,
    StalwartError,
    ToolDefinitionError,
    ToolSourceError,
    ToolTimeout,
    ToolUnavailable,
    UndoGaveUp,
    UndoUnavailable,
    UnkeyableArgument,
    UnsafeSetup,
)
from .guarded import FrameworkTool, Guard, GuardedRun, GuardedStep, StepAction
from .models import Model
from .record.memory import Message
from .record.usage import RunUsage, SessionUsage, Usage
from .replies import Ended, Reply, Waiting
from .tools import ToolSpec, UndoSpec, tool
from .tools.current import CurrentCall, current_call
from .verify.lints import Lint

try:
    __version__ = version("stalwart")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "Ended",
    "__version__",
    "AddressUnavailable",
    "Agent",
    "Ambiguous",
    "AnswerError",
    "ArgumentRefused",
    "CallChanged",
    "Clock",
    "ConfigError",
    "CsrfRefused",
    "CurrentCall",
    "ErrorCode",
    "FakeClock",
    "FrameworkTool",
    "Guard",
    "GuardedRun",
    "GuardedStep",
    "Lint",
    "Message",
    "Model",
    "ModelConfigError",
    "ModelError",
    "ModelReplyInvalid",
    "ModelRequestRejected",
    "ModelTimedOut",
    "ModelUnavailable",
    "NoModelError",
    "NotRecordable",
    "NotSignedIn",
    "InputRefused",
    "NotYourSession",
    "OperatorTokenError",
    "ProviderFailure",
    "ProviderTimeout",
    "QuestionPending",
    "LeaseLost",
    "RecordUnavailable",
    "RecordedAnswer",
    "RecordedCall",
    "Reply",
    "RewindRefused",
    "RunStateError",
    "RunStopped",
    "SessionNotFound",
    "RunUsage",
    "ScriptExhausted",
    "SessionBusy",
    "SessionUsage",
    "StaleAnswer",
    "StepAction",
    "StalwartError",
    "SystemClock",
    "ToolDefinitionError",
    "McpToolError",
    "ToolSourceError",
    "ToolSpec",
    "ToolTimeout",
    "UndoGaveUp",
    "UndoSpec",
    "ToolUnavailable",
    "UndoUnavailable",
    "UnkeyableArgument",
    "UnsafeSetup",
    "Usage",
    "Waiting",
    "current_call",
    "tool",
]
