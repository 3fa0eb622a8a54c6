"""agent.yaml into typed config: agents, their tools, the rulebook and the record.

The file's shape (every key but `agents` may be left out)::

    agents:
      desk:
        model: "anthropic:claude-sonnet-5-5"     # "<provider>:<model>"; kept, never called here
        tools: [get_order, charge_card, refund_card]
        on_unread: refuse                         # or "model"; default refuse
        languages: [english, portuguese]          # what turns are read in; default english
        instructions: {file: ./desk.md}           # or a text; the system prompt, beside
                                                  #   stalwart's own rules
        max_tokens: 2048                          # the model's options (docs/models.md)
        temperature: 0.2
        thinking: {budget_tokens: 2048}           # Claude's extended thinking
        timeout: 60                               # seconds; a timeout is tried once more
        stream: true                              # answers streamed, with progress
    tools:
      - python: shop.tools                        # a tool source: every @tool in the module
      - mcp: {command: [mcp-server-memory]}       # a server's tools (see config/mcp.py)
      - charge_card:                              # facts about one tool, under its name,
          undo: refund_card                       #   laid over what its @tool says
          retry_safe: true
      - cancel_flight: {irreversible: true}
      - book_flight:
          undo: {tool: cancel_flight, args: {booking: $result.booking}}
    rulebook: ./policy.co                         # default: an empty rulebook
    runs: atomic                                  # the only mode, and the default
    record: ./desk.sqlite                         # or ":memory:" or a postgresql:// URL
    operator_token: ./desk.operator-token         # the token's verifier (never the token)
    prices:                                       # dollars per million tokens, laid over
      "anthropic:claude-sonnet-5-5":              #   the prices stalwart ships
        {input_per_mtok: 3, output_per_mtok: 15}
    serve: {users: ./users.txt}                   # `stalwart serve` (see config/serve.py)

Relative paths resolve from the yaml's folder. The config is read in parts: `yamldoc.py`
reads the YAML with its positions and refuses a key said twice; `reading.py` turns a raw
shape's errors into sentences at a key path; `catalogue.py` reads `tools:` (its `python:`
and `mcp:` sources, see `mcp.py`, and the facts laid over them); `project.py` is the typed
config; this module assembles it.

Every error is a ConfigError naming the file, the key path (`agents.desk.tools[3]`),
what was expected and, where the yaml says, the line and column.
"""

from __future__ import annotations

import os
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from stalwart import texts
from stalwart.errors import ConfigError
from stalwart.models.options import ModelOptions, check_options
from stalwart.models.pricing import Price, PriceTable
from stalwart.policy.rulebook import Rulebook, load_rulebook
from stalwart.tools import ToolSpec
from stalwart.tools.mcp import McpConnection

from .catalogue import build_catalogue, read_tool_items
from .project import AgentConfig, ModelSelector, ProjectConfig
from .reading import ALLOW_OUTSIDE_ENV, NAME, Raw, Reading
from .serve import RawServe, ServeConfig, serve_config
from .yamldoc import Loc

_POSTGRES_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")


def load_agent(
    path: str | Path, agent: str | None = None, *, allow_outside_project: bool | None = None
) -> AgentConfig:
    """The one agent of the file, or the one named; ConfigError if that is ambiguous.
    `allow_outside_project` as `load_project` takes it."""
    return pick_agent(load_project(path, allow_outside_project=allow_outside_project), agent)


def pick_agent(project: ProjectConfig, agent: str | None) -> AgentConfig:
    """The project's one agent, or the one named; ConfigError if that is ambiguous."""
    names = ", ".join(project.agents)
    if agent is None:
        if len(project.agents) > 1:
            raise ConfigError(
                str(project.source), "agents",
                f"the file has several agents ({names}); name one, e.g. agent="
                f"{next(iter(project.agents))!r}",
            )  # fmt: skip
        return next(iter(project.agents.values()))
    if agent not in project.agents:
        raise ConfigError(
            str(project.source), "agents", f"no agent named {agent!r}; the file has: {names}"
        )
    return project.agents[agent]


def load_project(path: str | Path, *, allow_outside_project: bool | None = None) -> ProjectConfig:
    """Read agent.yaml, import its tool sources, read its rulebook, check it all.

    The files agent.yaml names (the rulebook, the record, the operator token's verifier,
    instructions, the users file) must be inside the yaml's folder: an agent.yaml from
    somewhere else cannot make stalwart read or write `../../etc/passwd`.
    `allow_outside_project=True` allows it; None reads `ALLOW_OUTSIDE_ENV` ("1": allow),
    which `stalwart --allow-outside-project` sets.
    """
    source = Path(path).resolve()
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(str(source), "", f"cannot read the file: {error.strerror}") from error
    if allow_outside_project is None:
        allow_outside_project = os.environ.get(ALLOW_OUTSIDE_ENV) == "1"
    return _Loader(source, text, allow_outside=allow_outside_project).load()


# --- the raw shape, checked by pydantic -----------------------------------------------


class _RawInstructionsFile(Raw):
    file: str


class _RawThinking(Raw):
    budget_tokens: int


class _RawAgent(Raw):
    model: str | None = None
    tools: list[str] = []
    on_unread: Literal["refuse", "model"] = "refuse"
    instructions: str | _RawInstructionsFile | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    thinking: _RawThinking | None = None
    timeout: float | None = None
    stream: bool = False
    languages: list[Literal["english", "portuguese"]] = ["english"]


class _RawFile(Raw):
    agents: dict[str, _RawAgent]
    tools: list[dict[str, Any]] = []
    rulebook: str | None = None
    runs: Literal["atomic"] = "atomic"
    record: str | None = None
    operator_token: str | None = None
    prices: dict[str, dict[str, Any]] = {}
    serve: RawServe | None = None


# --- loading --------------------------------------------------------------------------


class _Loader(Reading):
    """The file as it is read, assembled into a ProjectConfig."""

    def __init__(self, source: Path, text: str, *, allow_outside: bool = False) -> None:
        super().__init__(source, text, allow_outside=allow_outside)
        self.connections: list[McpConnection] = []

    def _serve(self, raw: RawServe | None) -> ServeConfig:
        serve = serve_config(raw, self.folder)
        if serve.users is not None:
            self.inside(serve.users, ("serve", "users"))
        return serve

    def load(self) -> ProjectConfig:
        try:
            return self._load()
        except BaseException:
            for connection in self.connections:  # a bad file leaves no server running
                connection.close()
            raise

    def _load(self) -> ProjectConfig:
        data = self._parse_yaml()
        if isinstance(data, dict) and "operator_token_env" in data:
            # The old key named the variable the token was compared with, so whoever set
            # it chose the token: refused, never quietly ignored.
            raise self.error(("operator_token_env",), texts.operator_token_env_gone(), at_key=True)
        raw = self.validate(_RawFile, data, ())
        if not raw.agents:
            raise self.error(("agents",), "expected at least one agent")
        items = read_tool_items(self, raw.tools)
        catalogue = build_catalogue(self, items, self.connections)
        rulebook = self._rulebook(raw.rulebook, catalogue)
        record = self._record(raw.record)
        operator_token = self._operator_token(raw.operator_token)
        agents: dict[str, AgentConfig] = {}
        project = ProjectConfig(
            source=self.source,
            agents=types.MappingProxyType(agents),
            catalogue=types.MappingProxyType(catalogue),
            rulebook=rulebook,
            runs=raw.runs,
            record=record,
            operator_token=operator_token,
            modules=tuple(name for _, name in items.modules),
            prices=types.MappingProxyType(self._prices(raw.prices)),
            serve=self._serve(raw.serve),
            connections=tuple(self.connections),
        )
        for name, raw_agent in raw.agents.items():
            agents[name] = self._agent(name, raw_agent, project)
        return project

    def _prices(self, raw: dict[str, dict[str, Any]]) -> dict[str, Price]:
        prices: dict[str, Price] = {}
        for selector, price in raw.items():
            loc: Loc = ("prices", selector)
            if ":" not in selector:
                raise self.error(loc, f"expected a 'provider:model' selector, got {selector!r}",
                                 at_key=True)  # fmt: skip
            if any(isinstance(v, bool) or not isinstance(v, int | float | str)
                   for v in price.values()):  # fmt: skip
                raise self.error(loc, "expected input_per_mtok and output_per_mtok in dollars")
            try:
                table = PriceTable().updated({selector: price})
            except ValueError as error:
                raise self.error(loc, str(error)) from None
            found = table.get(selector)
            assert found is not None
            prices[selector] = found
        return prices

    def _parse_yaml(self) -> Any:
        data = self.document.parse()
        if not isinstance(data, dict):
            raise ConfigError(
                self.file, "", "expected a mapping with an 'agents' key at the top", 1, 1
            )
        return data

    def _rulebook(self, path_text: str | None, catalogue: Mapping[str, ToolSpec]) -> Rulebook:
        if path_text is None:
            return Rulebook(source=None)
        path = self.inside((self.folder / path_text).resolve(), ("rulebook",))
        if not path.is_file():
            raise self.error(("rulebook",), f"expected a rulebook file, found none at {path}")
        rulebook = load_rulebook(path)
        for reference in rulebook.references():
            spec = catalogue.get(reference.tool)
            if spec is None:
                raise ConfigError(
                    str(path), "", f"no tool source provides {reference.tool!r}",
                    reference.line, reference.column,
                )  # fmt: skip
            if reference.kind == "arg" and spec.param(reference.name) is None:
                raise ConfigError(
                    str(path), "", f"{spec.name} takes no argument {reference.name!r}",
                    reference.line, reference.column,
                )  # fmt: skip
        return rulebook

    def _record(self, record: str | None) -> str:
        if record is None:
            return str(self.folder / f"{self.source.stem}.record.sqlite")
        if record == ":memory:" or record.startswith(_POSTGRES_SCHEMES):
            return record
        if "://" in record or not record.strip():
            raise self.error(
                ("record",),
                f"expected a SQLite path, ':memory:' or a postgresql:// URL, got {record!r}",
            )
        return str(self.inside((self.folder / record).resolve(), ("record",)))

    def _operator_token(self, path_text: str | None) -> Path:
        if path_text is None:
            return self.folder / f"{self.source.stem}.operator-token"
        if not path_text.strip():
            raise self.error(("operator_token",), "expected the path of a verifier file")
        return self.inside((self.folder / path_text).resolve(), ("operator_token",))

    def _agent(self, name: str, raw: _RawAgent, project: ProjectConfig) -> AgentConfig:
        loc: Loc = ("agents", name)
        if not NAME.match(name):
            raise self.error(
                loc, "expected an agent name of letters, digits, '_' and '-'", at_key=True
            )
        tools: dict[str, ToolSpec] = {}
        for index, tool_name in enumerate(raw.tools):
            if tool_name in tools:
                raise self.error((*loc, "tools", index), f"{tool_name!r} is listed twice")
            if tool_name not in project.catalogue:
                raise self.error((*loc, "tools", index), f"no tool source provides {tool_name!r}")
            tools[tool_name] = project.catalogue[tool_name]
        model = None if raw.model is None else self._model(raw.model, (*loc, "model"))
        if not raw.languages:
            raise self.error((*loc, "languages"), "expected one language or more")
        for index, language in enumerate(raw.languages):
            if language in raw.languages[:index]:
                raise self.error((*loc, "languages", index), f"{language!r} is listed twice")
        return AgentConfig(
            name=name,
            model=model,
            tools=types.MappingProxyType(tools),
            on_unread=raw.on_unread,
            languages=tuple(raw.languages),
            rulebook=project.rulebook,
            runs=project.runs,
            record=project.record,
            operator_token=project.operator_token,
            source=self.source,
            project=project,
            prices=project.prices,
            instructions=self._instructions(raw.instructions, (*loc, "instructions")),
            model_options=self._model_options(raw, model, loc),
        )

    def _instructions(self, raw: str | _RawInstructionsFile | None, loc: Loc) -> str | None:
        if raw is None or isinstance(raw, str):
            return raw or None
        path = self.inside((self.folder / raw.file).resolve(), (*loc, "file"))
        try:
            return path.read_text(encoding="utf-8").strip() or None
        except OSError as error:
            raise self.error(
                (*loc, "file"), f"cannot read {str(path)!r}: {error.strerror}"
            ) from None

    def _model_options(self, raw: _RawAgent, model: ModelSelector | None, loc: Loc) -> ModelOptions:
        keys = ("max_tokens", "temperature", "thinking", "timeout")
        options = ModelOptions(
            max_tokens=raw.max_tokens,
            temperature=raw.temperature,
            thinking_budget=raw.thinking.budget_tokens if raw.thinking is not None else None,
            timeout=raw.timeout if raw.timeout is not None else ModelOptions().timeout,
            stream=raw.stream,
        )
        problem = check_options(options, model.provider if model is not None else None)
        if problem is not None:
            key, expected = problem
            where = (*loc, key) if key in keys else loc
            raise self.error(where, expected)
        return options

    def _model(self, raw: str, loc: Loc) -> ModelSelector:
        provider, colon, model = raw.partition(":")
        if not colon or not provider.strip() or not model.strip():
            raise self.error(
                loc, f"expected '<provider>:<model>', such as "
                f"'anthropic:claude-sonnet-5-5', got {raw!r}",
            )  # fmt: skip
        return ModelSelector(provider=provider.strip(), model=model.strip(), raw=raw)
