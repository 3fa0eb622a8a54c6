"""Sample turns that must keep reading the same (`stalwart verify --turns`, QG201)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from .. import texts
from ..config import AgentConfig, ProjectConfig
from ..errors import ConfigError
from ..selector import Reading, read_turn
from ..tools import ToolSpec
from .findings import Code, Finding

Reader = Callable[[str, Sequence[ToolSpec]], Reading]


@dataclass(frozen=True)
class ExpectedStep:
    tool: str
    args: Mapping[str, Any]


@dataclass(frozen=True)
class SampleTurn:
    """One turn of a turns file and how it must read: its steps, or unread with a reason."""

    turn: str
    steps: tuple[ExpectedStep, ...] = ()
    unread: str | None = None  # the reason it is not read, when it must not be
    key_path: str = ""  # where the file says it, for a finding


class _RawStep(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    tool: str
    args: dict[str, Any] = {}


class _RawTurn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    turn: str
    steps: list[_RawStep] | None = None
    unread: str | None = None


class _RawTurns(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    agent: str | None = None
    turns: list[_RawTurn]


@dataclass(frozen=True)
class TurnsFile:
    agent: str | None
    turns: tuple[SampleTurn, ...]


def load_turns(path: str | Path) -> TurnsFile:
    """Read a turns file (see docs/verify.md); ConfigError naming the key if it is wrong."""
    source = str(path)
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(source, "", f"cannot read the file: {error.strerror}") from error
    except yaml.YAMLError as error:
        raise ConfigError(source, "", f"invalid YAML: {error}") from error
    try:
        raw = _RawTurns.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ConfigError(source, where, f"{first['msg']}, got {first.get('input')!r}") from None
    turns: list[SampleTurn] = []
    for index, item in enumerate(raw.turns):
        key_path = f"turns[{index}]"
        if (item.steps is None) == (item.unread is None):
            raise ConfigError(source, key_path, texts.TURNS_STEPS_OR_UNREAD)
        steps = tuple(ExpectedStep(s.tool, dict(s.args)) for s in item.steps or ())
        turns.append(SampleTurn(item.turn, steps, item.unread, key_path))
    return TurnsFile(raw.agent, tuple(turns))


def check_turns(project: ProjectConfig, path: str | Path) -> tuple[list[Finding], int]:
    """The findings of a turns file over the agent it names (or the file's only agent),
    and how many turns it holds."""
    sample = load_turns(path)
    name = sample.agent
    if name is None and len(project.agents) > 1:
        raise ConfigError(str(path), "agent", texts.turns_agent_missing(list(project.agents)))
    if name is not None and name not in project.agents:
        raise ConfigError(str(path), "agent", texts.turns_agent_unknown(name, list(project.agents)))
    agent = project.agents[name] if name is not None else next(iter(project.agents.values()))
    return verify_turns(agent, sample.turns), len(sample.turns)


def verify_turns(
    agent: AgentConfig, turns: Sequence[SampleTurn], reader: Reader | None = None
) -> list[Finding]:
    """Read each sample turn with the selector and compare it with what the file expects.

    Each turn is read in the agent's languages (agent.yaml `languages:`), as its turns
    are. Steps compare by tool and arguments; the expected arguments are first typed by
    the tool's hints, as a run types them (so `amount: 40` is the float 40.0 of a float
    parameter). An unread turn compares by its reason.
    """
    read = reader or partial(read_turn, languages=agent.languages)
    tools = list(agent.tools.values())
    findings: list[Finding] = []
    for sample in turns:
        reading = read(sample.turn, tools)
        got = _shown_reading(agent, reading.reason, [(s.tool, s.args) for s in reading.steps])
        expected = _shown_reading(agent, sample.unread, [(s.tool, s.args) for s in sample.steps])
        if got != expected:
            text, fix = texts.verify_finding(
                Code.TURN_READS_DIFFERENTLY.value, turn=sample.turn, got=got, expected=expected
            )
            findings.append(
                Finding(Code.TURN_READS_DIFFERENTLY, agent.name, sample.key_path, (), text, fix)
            )
    return findings


def _shown_reading(
    agent: AgentConfig, unread: str | None, steps: Sequence[tuple[str, Mapping[str, Any]]]
) -> str:
    """A reading as a finding shows it: its calls as a confirmation shows them, or why it
    is not read."""
    if unread is not None:
        return texts.verify_unread(unread)
    shown: list[str] = []
    for tool, args in steps:
        spec = agent.tools.get(tool)
        typed = spec.typed(args) if spec is not None else dict(args)
        shown.append(texts.call_text(tool, typed))
    return texts.verify_steps(shown)
