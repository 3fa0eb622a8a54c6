"""stalwart: an agent runtime whose every write is confirmed, keyed, recorded and undoable."""

from __future__ import annotations

from ._engine.current import CurrentCall, current_call
from ._engine.keys import UnkeyableArgument
from .agent import Agent, RecordedCall
from .clock import Clock, FakeClock, SystemClock
from .errors import (
    Ambiguous,
    AnswerError,
    ConfigError,
    ModelConfigError,
    ModelError,
    ModelReplyInvalid,
    ModelRequestRejected,
    ModelUnavailable,
    NoModelError,
    NotYourSession,
    OperatorTokenError,
    QuestionPending,
    RewindRefused,
    StalwartError,
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
    "Clock",
    "ConfigError",
    "CurrentCall",
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
    "NotYourSession",
    "OperatorTokenError",
    "QuestionPending",
    "RecordedCall",
    "Reply",
    "RewindRefused",
    "RunUsage",
    "SessionUsage",
    "StalwartError",
    "SystemClock",
    "ToolSpec",
    "UndoSpec",
    "UnkeyableArgument",
    "Usage",
    "Waiting",
    "current_call",
    "tool",
]
