"""agent.yaml into typed config: agents, their tools, the rulebook and the record."""

from __future__ import annotations

from .loader import (
    ALLOW_OUTSIDE_ENV,
    AgentConfig,
    ModelSelector,
    ProjectConfig,
    confirms,
    load_agent,
    load_project,
    pick_agent,
    unload_tool_modules,
)

__all__ = [
    "ALLOW_OUTSIDE_ENV",
    "AgentConfig",
    "ModelSelector",
    "ProjectConfig",
    "confirms",
    "load_agent",
    "load_project",
    "pick_agent",
    "unload_tool_modules",
]
