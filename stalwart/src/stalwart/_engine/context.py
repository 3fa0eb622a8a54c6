"""What a run needs of its agent, handed to every part of the runner."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..backoff import Backoff
from ..models import Model, ModelProgress
from ..policy.check import Check
from ..selector.grammar import Grammar
from ..tools import ToolSpec

# Asks of the model in one run, the first included. A model that keeps calling tools past
# this is stopped: the run fails and is undone like any failed run.
DEFAULT_MAX_MODEL_CALLS = 8


@dataclass(frozen=True)
class RunContext:
    """What a run needs of its agent: its name, its tools, its check, the clock's schedule,
    the grammars of the languages its turns are written in, and the model a turn the
    selector cannot read goes to (on_unread: model)."""

    name: str
    tools: Mapping[str, ToolSpec]
    check: Check
    confirms: Callable[[ToolSpec], bool]  # whether a person confirms the tool's calls
    undo_backoff: Backoff
    # The grammars of the agent's languages (agent.yaml `languages:`), English alone by
    # default: where a model's argument came from reads the turn with each (provenance).
    grammars: tuple[Grammar, ...]
    model: Model | None = None
    max_model_calls: int = DEFAULT_MAX_MODEL_CALLS
    instructions: str | None = None  # the agent's own, sent beside stalwart's rules
    # Called as a streamed answer comes in (agent.yaml `stream: true`), e.g. by a web page.
    on_progress: Callable[[ModelProgress], None] | None = None
    # The tools the project's other agents have: an undo this agent lacks but one of them
    # has is left for a worker that has it; one no agent has stops the rollback, asking.
    other_agents_tools: frozenset[str] = frozenset()
