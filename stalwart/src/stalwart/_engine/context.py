"""What a run needs of its agent, handed to every part of the runner."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..models import Model
from ..policy.check import Check
from ..tools import ToolSpec
from . import model_loop
from .retry import UndoBackoff


@dataclass(frozen=True)
class RunContext:
    """What a run needs of its agent: its name, its tools, its check, the clock's schedule,
    and the model a turn the selector cannot read goes to (on_unread: model)."""

    name: str
    tools: Mapping[str, ToolSpec]
    check: Check
    confirms: Callable[[ToolSpec], bool]  # whether a person confirms the tool's calls
    undo_backoff: UndoBackoff
    model: Model | None = None
    max_model_calls: int = model_loop.DEFAULT_MAX_MODEL_CALLS
