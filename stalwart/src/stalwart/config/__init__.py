"""agent.yaml into typed config: agents, their tools, the rulebook and the record."""

from __future__ import annotations

from .loader import (
    AgentConfig,
    ModelSelector,
    ProjectConfig,
    confirms,
    load_agent,
    load_project,
    unload_tool_modules,
)

__all__ = [
    "AgentConfig",
    "ModelSelector",
    "ProjectConfig",
    "confirms",
    "load_agent",
    "load_project",
    "unload_tool_modules",
]
