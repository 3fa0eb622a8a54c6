"""agent.yaml into typed config: agents, their tools, the rulebook and the record.

The file's shape (every key but `agents` may be left out)::

    agents:
      desk:
        model: "anthropic:claude-sonnet-5-5"     # "<provider>:<model>"; kept, never called here
        tools: [get_order, charge_card, refund_card]
        on_unread: refuse                         # or "model"; default refuse
        instructions: {file: ./desk.md}           # or a text; the system prompt, beside
                                                  #   stalwart's own rules
        max_tokens: 2048                          # the model's options (docs/models.md)
        temperature: 0.2
        thinking: {budget_tokens: 2048}           # Claude's extended thinking
        timeout: 60                               # seconds; a timeout is tried once more
        stream: true                              # answers streamed, with progress
    tools:
      - python: shop.tools                        # a tool source: every @tool in the module
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

Each item of `tools:` is a mapping with one key: `python` names a module (a source),
any other key is a tool's name and its value the facts about it: `writes`, `undo`,
`irreversible`, `retry_safe`, `confirm`, and `timeout` (seconds a call may take). A
fact said here replaces the decorator's;
`undo` and `irreversible` are alternatives, so saying one here drops the other.
`confirm: never` lets a write run without asking a person (see `confirms`); `confirm:
false` is refused for a write (a boolean is too easily said by accident, and YAML reads
`no` as false), so a write runs unasked only where agent.yaml says `never` under its name.
The lints `write_without_confirmation` (QG014) and `irreversible_without_confirmation`
report every such write.

Relative paths resolve from the yaml's folder. `python:` modules import under their own
names with that folder on `sys.path` (see `stalwart.tools.sources`), so the project's own
code sees the very module the agent calls, and loading the same file again reuses it. Two
folders whose modules share a top-level name cannot both be loaded in one process: the
second load is a ConfigError naming both places, never a silent mix
(`unload_tool_modules(project)` forgets the first project's modules when that is meant).

Every error is a ConfigError naming the file, the key path (`agents.desk.tools[3]`),
what was expected and, where the yaml says, the line and column (`yamldoc.py` reads the
YAML with its positions and refuses a key said twice; this module assembles the config).
"""

from __future__ import annotations

import dataclasses
import os
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from stalwart import texts
from stalwart.config.serve import RawServe, ServeConfig, serve_config
from stalwart.errors import ConfigError, ToolDefinitionError, ToolSourceError
from stalwart.models.options import ModelOptions, check_options
from stalwart.models.pricing import Price, PriceTable
from stalwart.policy.rulebook import Rulebook, load_rulebook
from stalwart.tools import ToolSpec, UndoSpec, parse_undo
from stalwart.tools.mcp import McpConnection, McpServer, McpToolSpec, mcp_source
from stalwart.tools.mcp_seen import compare_with_first_seen
from stalwart.tools.sources import MODULE_NAME, SOURCE_KEYS, python_source, unload_python_sources

from .yamldoc import Loc, YamlDocument

_M = TypeVar("_M", bound=BaseModel)

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_POSTGRES_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")


# --- the typed config -----------------------------------------------------------------


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


def confirms(spec: ToolSpec) -> bool:
    """Whether a person confirms this tool's calls: every write, unless `confirm: never`."""
    return spec.writes and bool(spec.extra.get("confirm", True))


def unload_tool_modules(project: ProjectConfig) -> None:
    """Forget the project's tool modules (those from its folder) and its path entry.

    After this, another folder whose modules have the same names can be loaded (a test
    that copies an example into a temporary folder needs it). The project already loaded
    keeps working: its specs hold the functions themselves.
    """
    unload_python_sources(project.folder, project.modules)


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


# The environment variable that allows agent.yaml's files outside its folder ("1").
ALLOW_OUTSIDE_ENV = "STALWART_ALLOW_OUTSIDE_PROJECT"


# --- the raw shape, checked by pydantic -----------------------------------------------


class _Raw(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _RawInstructionsFile(_Raw):
    file: str


class _RawThinking(_Raw):
    budget_tokens: int


class _RawAgent(_Raw):
    model: str | None = None
    tools: list[str] = []
    on_unread: Literal["refuse", "model"] = "refuse"
    instructions: str | _RawInstructionsFile | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    thinking: _RawThinking | None = None
    timeout: float | None = None
    stream: bool = False


class _RawFile(_Raw):
    agents: dict[str, _RawAgent]
    tools: list[dict[str, Any]] = []
    rulebook: str | None = None
    runs: Literal["atomic"] = "atomic"
    record: str | None = None
    operator_token: str | None = None
    prices: dict[str, dict[str, Any]] = {}
    serve: RawServe | None = None


class _RawUndo(_Raw):
    tool: str
    args: dict[str, str] | None = None


class _RawFacts(_Raw):
    writes: bool | None = None
    undo: Any = None  # a tool name or a _RawUndo, told apart by hand for a clear error
    irreversible: bool | None = None
    retry_safe: bool | None = None
    # `never` lets a write run unasked; `false` is refused for a write (see _lay_facts).
    confirm: bool | Literal["never"] | None = None
    timeout: int | float | None = None


class _RawSource(_Raw):
    python: str


class _RawMcp(_Raw):
    command: list[str] | None = None
    url: str | None = None
    env: dict[str, str] = {}
    headers: dict[str, str] = {}
    prefix: str = ""
    timeout: float | None = None


class _RawMcpSource(_Raw):
    mcp: _RawMcp


_ENV_VALUE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


# --- loading --------------------------------------------------------------------------


class _Loader:
    def __init__(self, source: Path, text: str, *, allow_outside: bool = False) -> None:
        self.source = source
        self.file = str(source)
        self.folder = source.parent
        self.allow_outside = allow_outside
        self.document = YamlDocument(self.file, text)
        self.connections: list[McpConnection] = []

    def error(self, loc: Loc, expected: str, *, at_key: bool = False) -> ConfigError:
        return self.document.error(loc, expected, at_key=at_key)

    def _inside(self, path: Path, loc: Loc) -> Path:
        """`path` (resolved, links followed) if it is inside the project's folder, or the
        caller allowed files outside it; else a ConfigError at `loc`."""
        if self.allow_outside or path.is_relative_to(self.folder):
            return path
        raise self.error(loc, texts.outside_project(str(path), str(self.folder), ALLOW_OUTSIDE_ENV))

    def _serve(self, raw: RawServe | None) -> ServeConfig:
        serve = serve_config(raw, self.folder)
        if serve.users is not None:
            self._inside(serve.users, ("serve", "users"))
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
        raw = self._validate(_RawFile, data, ())
        if not raw.agents:
            raise self.error(("agents",), "expected at least one agent")
        modules, servers, facts = self._read_tool_items(raw.tools)
        catalogue = self._catalogue(modules, servers, facts)
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
            modules=tuple(name for _, name in modules),
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

    def _validate(self, model: type[_M], data: Any, loc: Loc) -> _M:
        try:
            return model.model_validate(data)
        except ValidationError as error:
            first = error.errors()[0]
            error_loc = (*loc, *first["loc"])
            raise self.error(
                error_loc,
                _explain(first, model, tuple(first["loc"])),
                at_key=first["type"] == "extra_forbidden",
            ) from None

    def _read_tool_items(
        self, items: list[dict[str, Any]]
    ) -> tuple[
        list[tuple[Loc, str]], list[tuple[Loc, McpServer]], list[tuple[Loc, str, _RawFacts]]
    ]:
        modules: list[tuple[Loc, str]] = []
        servers: list[tuple[Loc, McpServer]] = []
        facts: list[tuple[Loc, str, _RawFacts]] = []
        for index, item in enumerate(items):
            loc: Loc = ("tools", index)
            if len(item) != 1:
                raise self.error(
                    loc,
                    "expected one key: 'python: <module>', or a tool's name with its facts",
                )
            (key,) = item
            if key in SOURCE_KEYS:
                module = self._validate(_RawSource, item, loc).python
                if not MODULE_NAME.match(module):
                    raise self.error((*loc, key), f"expected a module name, got {module!r}")
                modules.append(((*loc, key), module))
            elif key == "mcp":
                servers.append(((*loc, key), self._mcp_server(item, loc)))
            else:
                raw = self._validate(_RawFacts, item[key] or {}, (*loc, key))
                facts.append(((*loc, key), key, raw))
        return modules, servers, facts

    def _mcp_server(self, item: dict[str, Any], loc: Loc) -> McpServer:
        raw = self._validate(_RawMcpSource, item, loc).mcp
        at: Loc = (*loc, "mcp")
        if (raw.command is None) == (raw.url is None):
            raise self.error(at, "expected either command: [program, args...] (stdio) "
                             "or url: http://... (streamable HTTP)")  # fmt: skip
        if raw.command is not None and not raw.command:
            raise self.error((*at, "command"), "expected the program to start, then its arguments")
        if raw.url is not None and not raw.url.startswith(("http://", "https://")):
            raise self.error((*at, "url"), f"expected an http:// or https:// URL, got {raw.url!r}")
        if raw.command is None and raw.env:
            raise self.error((*at, "env"), "env is for a command; a url takes headers", at_key=True)
        if raw.url is None and raw.headers:
            raise self.error((*at, "headers"), "headers are for a url; a command takes env",
                             at_key=True)  # fmt: skip
        if raw.prefix and not _NAME.match(raw.prefix):
            raise self.error((*at, "prefix"), f"expected letters, digits, '_' and '-', "
                             f"got {raw.prefix!r}")  # fmt: skip
        if raw.timeout is not None and raw.timeout <= 0:
            raise self.error((*at, "timeout"), "expected seconds, more than 0")
        return McpServer(
            command=tuple(raw.command or ()),
            url=raw.url,
            env=self._from_environment(raw.env, (*at, "env")),
            headers=self._from_environment(raw.headers, (*at, "headers")),
            prefix=raw.prefix,
            cwd=self.folder,
            **({"timeout": raw.timeout} if raw.timeout is not None else {}),
        )

    def _from_environment(self, values: dict[str, str], loc: Loc) -> dict[str, str]:
        """Each value with its `$NAME` (or `${NAME}`) read from the environment."""
        read: dict[str, str] = {}
        for key, value in values.items():

            def variable(match: re.Match[str], key: str = key) -> str:
                name = match.group(1) or match.group(2)
                if name not in os.environ:
                    raise self.error((*loc, key), f"${name} is not set in the environment")
                return os.environ[name]

            read[key] = _ENV_VALUE.sub(variable, value)
        return read

    def _catalogue(
        self,
        modules: list[tuple[Loc, str]],
        servers: list[tuple[Loc, McpServer]],
        facts: list[tuple[Loc, str, _RawFacts]],
    ) -> dict[str, ToolSpec]:
        catalogue: dict[str, ToolSpec] = {}
        provider: dict[str, str] = {}
        said_at: dict[str, Loc] = {}  # where each tool's undo was said, for errors
        for loc, name in modules:
            try:
                found = python_source(self.folder, name)
            except ToolSourceError as error:
                raise self.error(loc, str(error)) from error.__cause__
            for tool_name, spec in found.items():
                if tool_name in catalogue and catalogue[tool_name].func is not spec.func:
                    raise self.error(
                        loc,
                        f"tool {tool_name!r} is provided by both {provider[tool_name]!r} "
                        f"and {name!r}",
                    )
                catalogue[tool_name] = spec
                provider[tool_name] = name
                said_at[tool_name] = loc
        for loc, server in servers:
            try:
                connection, served = mcp_source(server)
            except ToolSourceError as error:
                raise self.error(loc, str(error)) from None
            self.connections.append(connection)
            served = compare_with_first_seen(self.source, server, served)
            for tool_name, spec in served.items():
                if tool_name in catalogue:
                    raise self.error(
                        loc,
                        f"tool {tool_name!r} is provided by both {provider[tool_name]!r} and "
                        f"{server.describe()!r}; a prefix: keeps them apart",
                    )
                catalogue[tool_name] = spec
                provider[tool_name] = server.describe()
                said_at[tool_name] = loc
        said_twice = _first_repeat([tool_name for _, tool_name, _ in facts])
        if said_twice is not None:
            raise self.error(
                facts[said_twice][0], "facts about this tool are already said above", at_key=True
            )
        for loc, tool_name, raw in facts:
            if tool_name not in catalogue:
                raise self.error(loc, f"no tool source provides {tool_name!r}", at_key=True)
            catalogue[tool_name] = self._lay_facts(catalogue[tool_name], raw, loc)
            if raw.undo is not None:
                said_at[tool_name] = (*loc, "undo")
        for tool_name, spec in catalogue.items():
            self._check_undo_binding(spec, catalogue, said_at[tool_name])
        return catalogue

    def _lay_facts(self, spec: ToolSpec, raw: _RawFacts, loc: Loc) -> ToolSpec:
        changes: dict[str, Any] = {}
        if raw.writes is not None:
            changes["writes"] = raw.writes
        if raw.retry_safe is not None:
            changes["retry_safe"] = raw.retry_safe
        if raw.timeout is not None:
            changes["timeout"] = raw.timeout
        if raw.undo is not None and raw.irreversible:
            raise self.error(loc, "a write cannot both name an undo and be irreversible")
        if raw.undo is not None:
            changes["undo"] = self._undo(raw.undo, (*loc, "undo"))
            changes["irreversible"] = False
        if raw.irreversible is not None:
            changes["irreversible"] = raw.irreversible
            if raw.irreversible:
                changes["undo"] = None
        if raw.confirm is not None:
            changes["extra"] = {**spec.extra, "confirm": raw.confirm is True}
        if isinstance(spec, McpToolSpec):
            # What agent.yaml said of a server's tool, so the lints know what is hint alone.
            said = [fact for fact in ("writes", "retry_safe") if getattr(raw, fact) is not None]
            mcp = {**spec.extra["mcp"], "said": tuple(said)}
            changes["extra"] = {**changes.get("extra", spec.extra), "mcp": mcp}
        try:
            laid = dataclasses.replace(spec, **changes)
        except ToolDefinitionError as error:
            raise self.error(loc, str(error)) from None
        if raw.confirm in (False, "never") and not laid.writes:
            raise self.error(
                (*loc, "confirm"), "only a write is confirmed; a read never asks", at_key=True
            )
        if raw.confirm is False:
            # Chapter 34 has every write confirmed by a person. A boolean is too easy to
            # say by accident (YAML reads `no` and `off` as false, a copied block carries
            # it along): running a write unasked takes the word `never`, per tool.
            raise self.error((*loc, "confirm"), texts.confirm_false_refused(laid.name))
        return laid

    def _undo(self, value: Any, loc: Loc) -> UndoSpec | None:
        if isinstance(value, dict):
            value = self._validate(_RawUndo, value, loc).model_dump()
        elif not isinstance(value, str):
            raise self.error(
                loc, f"expected a tool name or {{tool: <name>, args: {{...}}}}, got {value!r}"
            )
        try:
            return parse_undo(value)
        except ToolDefinitionError as error:
            raise self.error(loc, str(error)) from None

    def _check_undo_binding(
        self, spec: ToolSpec, catalogue: Mapping[str, ToolSpec], loc: Loc
    ) -> None:
        # A binding for an argument the undo does not take could never be sent.
        if spec.undo is None or spec.undo.args is None or spec.undo.tool not in catalogue:
            return
        undo = catalogue[spec.undo.tool]
        for argument in spec.undo.args:
            if undo.param(argument) is None:
                taken = ", ".join(p.name for p in undo.params) or "no arguments"
                raise self.error(
                    loc,
                    f"{spec.name}'s undo binds {argument!r}, which {undo.name} does not take "
                    f"(it takes {taken})",
                )

    def _rulebook(self, path_text: str | None, catalogue: Mapping[str, ToolSpec]) -> Rulebook:
        if path_text is None:
            return Rulebook(source=None)
        path = self._inside((self.folder / path_text).resolve(), ("rulebook",))
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
        return str(self._inside((self.folder / record).resolve(), ("record",)))

    def _operator_token(self, path_text: str | None) -> Path:
        if path_text is None:
            return self.folder / f"{self.source.stem}.operator-token"
        if not path_text.strip():
            raise self.error(("operator_token",), "expected the path of a verifier file")
        return self._inside((self.folder / path_text).resolve(), ("operator_token",))

    def _agent(self, name: str, raw: _RawAgent, project: ProjectConfig) -> AgentConfig:
        loc: Loc = ("agents", name)
        if not _NAME.match(name):
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
        return AgentConfig(
            name=name,
            model=model,
            tools=types.MappingProxyType(tools),
            on_unread=raw.on_unread,
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
        path = self._inside((self.folder / raw.file).resolve(), (*loc, "file"))
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


def _first_repeat(names: list[str]) -> int | None:
    """The index of the first name that came before, if any."""
    seen: set[str] = set()
    for index, name in enumerate(names):
        if name in seen:
            return index
        seen.add(name)
    return None


_TYPE_NAMES = {
    "string_type": "a string",
    "bool_type": "true or false",
    "dict_type": "a mapping",
    "list_type": "a list",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}


def _explain(error: Any, model: type[BaseModel], loc: Loc) -> str:
    """One pydantic error as the sentence a person reads."""
    kind = error["type"]
    got = error.get("input")
    if kind == "extra_forbidden":
        allowed = ", ".join(_allowed_keys(model, loc[:-1]))
        return f"unknown key {loc[-1]!r}; expected one of: {allowed}"
    if kind == "missing":
        return "a required key is missing"
    if kind == "literal_error":
        return f"expected {error['ctx']['expected']}, got {got!r}"
    if kind in _TYPE_NAMES:
        return f"expected {_TYPE_NAMES[kind]}, got {got!r}"
    return f"{error['msg']}, got {got!r}"


def _allowed_keys(model: Any, loc: Loc) -> list[str]:
    # Walk the model's field types along the error's location to the mapping it names.
    current: Any = model
    for step in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            if not isinstance(step, str) or step not in current.model_fields:
                return []
            current = current.model_fields[step].annotation
        elif typing.get_origin(current) in (dict, list):
            current = typing.get_args(current)[-1]
        else:
            return []
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _unwrap(annotation: Any) -> Any:
    """`X | None` as X."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return members[0]
    return annotation
