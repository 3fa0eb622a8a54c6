"""agent.yaml into typed config: agents, their tools, the rulebook and the record."""

from __future__ import annotations

from .catalogue import unload_tool_modules
from .loader import load_agent, load_project, pick_agent
from .project import AgentConfig, ModelSelector, ProjectConfig, confirms
from .reading import ALLOW_OUTSIDE_ENV

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
