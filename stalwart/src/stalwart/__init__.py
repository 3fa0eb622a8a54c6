"""stalwart: an agent runtime whose every write is confirmed, keyed, recorded and undoable."""

from __future__ import annotations

from .agent import Agent, RecordedCall
from .clock import Clock, FakeClock, SystemClock
from .errors import (
    Ambiguous,
    AnswerError,
    ConfigError,
    NoModelError,
    NotYourSession,
    QuestionPending,
    RewindRefused,
    StalwartError,
)
from .memory import Message
from .replies import Reply, Waiting
from .runs import RunUnfinished
from .tools import ToolSpec, UndoSpec, tool

__all__ = [
    "Agent",
    "Ambiguous",
    "AnswerError",
    "Clock",
    "ConfigError",
    "FakeClock",
    "Message",
    "NoModelError",
    "NotYourSession",
    "QuestionPending",
    "RecordedCall",
    "Reply",
    "RewindRefused",
    "RunUnfinished",
    "StalwartError",
    "SystemClock",
    "ToolSpec",
    "UndoSpec",
    "Waiting",
    "tool",
]
