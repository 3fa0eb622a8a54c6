"""stalwart: an agent runtime whose every write is confirmed, keyed, recorded and undoable."""

from __future__ import annotations

from .agent import Agent, RecordedCall
from .clock import Clock, FakeClock, SystemClock
from .current import CurrentCall, current_call
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
from .keys import UnkeyableArgument
from .lints import Lint
from .memory import Message
from .models import Model
from .replies import Reply, Waiting
from .tools import ToolSpec, UndoSpec, tool
from .usage import RunUsage, SessionUsage, Usage

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
