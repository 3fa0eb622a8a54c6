"""stalwart: an agent runtime whose every write is confirmed, keyed, recorded and undoable."""

from __future__ import annotations

from .agent import Agent, RecordedCall
from .clock import Clock, FakeClock, SystemClock
from .current import CurrentCall, current_call
from .errors import (
    Ambiguous,
    AnswerError,
    ConfigError,
    NoModelError,
    NotYourSession,
    OperatorTokenError,
    QuestionPending,
    RewindRefused,
    StalwartError,
)
from .memory import Message
from .replies import Reply, Waiting
from .tools import ToolSpec, UndoSpec, tool

__all__ = [
    "Agent",
    "Ambiguous",
    "AnswerError",
    "Clock",
    "ConfigError",
    "CurrentCall",
    "FakeClock",
    "Message",
    "NoModelError",
    "NotYourSession",
    "OperatorTokenError",
    "QuestionPending",
    "RecordedCall",
    "Reply",
    "RewindRefused",
    "StalwartError",
    "SystemClock",
    "ToolSpec",
    "UndoSpec",
    "Waiting",
    "current_call",
    "tool",
]
