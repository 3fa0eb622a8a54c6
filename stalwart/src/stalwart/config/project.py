"""The typed config agent.yaml becomes: the project, each agent, a model's selector."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from stalwart.models.options import ModelOptions
from stalwart.models.pricing import Price
from stalwart.policy.rulebook import Rulebook
from stalwart.tools import ToolSpec
from stalwart.tools.mcp import McpConnection

from .serve import ServeConfig


@dataclass(frozen=True)
class ModelSelector:
    """A model named as "<provider>:<model>", such as "anthropic:claude-sonnet-5-5"."""

    provider: str
    model: str
    raw: str

    def __str__(self) -> str:
        return self.raw


@dataclass(frozen=True, eq=False)
class ProjectConfig:
    """The whole agent.yaml: every agent and the full catalogue of tools."""

    source: Path
    agents: Mapping[str, AgentConfig]
    catalogue: Mapping[str, ToolSpec]
    rulebook: Rulebook
    runs: Literal["atomic"]
    record: str
    operator_token: Path  # the file holding the operator token's verifier (never the token)
    modules: tuple[str, ...]  # the python: sources, in the order listed
    prices: Mapping[str, Price] = field(default_factory=dict)  # by "provider:model"
    serve: ServeConfig = field(default_factory=ServeConfig)  # the `serve:` block
    connections: tuple[McpConnection, ...] = ()  # the mcp: sources' servers, held open

    def close(self) -> None:
        """Stop the `mcp:` sources' servers (those started) and close their sessions."""
        for connection in self.connections:
            connection.close()

    @property
    def folder(self) -> Path:
        return self.source.parent


@dataclass(frozen=True, eq=False)
class AgentConfig:
    """One agent of the file, with the project-wide settings it runs under."""

    name: str
    model: ModelSelector | None
    tools: Mapping[str, ToolSpec]  # in the order listed, with agent.yaml facts laid over
    on_unread: Literal["refuse", "model"]
    rulebook: Rulebook
    runs: Literal["atomic"]
    record: str  # absolute SQLite path, ":memory:", or a postgresql:// URL
    operator_token: Path
    source: Path
    project: ProjectConfig = field(repr=False)
    prices: Mapping[str, Price] = field(default_factory=dict)  # the project's `prices:`
    instructions: str | None = None  # the agent's own, sent beside stalwart's rules
    model_options: ModelOptions = field(default_factory=ModelOptions)
    # The languages its turns are read in (the selector's grammars), English alone unless
    # agent.yaml says `languages: [english, portuguese]`.
    languages: tuple[str, ...] = ("english",)


def confirms(spec: ToolSpec) -> bool:
    """Whether a person confirms this tool's calls: every write, unless `confirm: never`."""
    return spec.writes and bool(spec.extra.get("confirm", True))
