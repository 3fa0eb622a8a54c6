"""stalwart: an agent runtime whose every write is confirmed, keyed, recorded and undoable."""

from __future__ import annotations

from ._engine.current import CurrentCall, current_call
from .agent import Agent, RecordedCall
from .clock import Clock, FakeClock, SystemClock
from .errors import (
    Ambiguous,
    AnswerError,
    ArgumentRefused,
    ConfigError,
    ErrorCode,
    ModelConfigError,
    ModelError,
    ModelReplyInvalid,
    ModelRequestRejected,
    ModelUnavailable,
    NoModelError,
    NotRecordable,
    NotYourSession,
    OperatorTokenError,
    ProviderFailure,
    QuestionPending,
    RewindRefused,
    RunStateError,
    ScriptExhausted,
    SessionBusy,
    StalwartError,
    ToolDefinitionError,
    ToolSourceError,
    ToolTimeout,
    UndoGaveUp,
    UnkeyableArgument,
)
from .models import Model
from .record.memory import Message
from .record.usage import RunUsage, SessionUsage, Usage
from .replies import Reply, Waiting
from .tools import ToolSpec, UndoSpec, tool
from .tools.lints import Lint

__all__ = [
    "Agent",
    "Ambiguous",
    "AnswerError",
    "ArgumentRefused",
    "Clock",
    "ConfigError",
    "CurrentCall",
    "ErrorCode",
    "FakeClock",
    "Lint",
    "Message",
    "Model",
    "ModelConfigError",
    "ModelError",
    "ModelReplyInvalid",
    "ModelRequestRejected",
    "ModelUnavailable",
    "NoModelError",
    "NotRecordable",
    "NotYourSession",
    "OperatorTokenError",
    "ProviderFailure",
    "QuestionPending",
    "RecordedCall",
    "Reply",
    "RewindRefused",
    "RunStateError",
    "RunUsage",
    "ScriptExhausted",
    "SessionBusy",
    "SessionUsage",
    "StalwartError",
    "SystemClock",
    "ToolDefinitionError",
    "ToolSourceError",
    "ToolSpec",
    "ToolTimeout",
    "UndoGaveUp",
    "UndoSpec",
    "UnkeyableArgument",
    "Usage",
    "Waiting",
    "current_call",
    "tool",
]
