"""agent.yaml into typed config: agents, their tools, the rulebook and the record.

The file's shape (every key but `agents` may be left out)::

    agents:
      desk:
        model: "anthropic:claude-sonnet-5-5"     # "<provider>:<model>"; kept, never called here
        tools: [get_order, charge_card, refund_card]
        on_unread: refuse                         # or "model"; default refuse
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
    operator_token_env: STALWART_OPERATOR_TOKEN
    prices:                                       # dollars per million tokens, laid over
      "anthropic:claude-sonnet-5-5":              #   the prices stalwart ships
        {input_per_mtok: 3, output_per_mtok: 15}

Each item of `tools:` is a mapping with one key: `python` names a module (a source),
any other key is a tool's name and its value the facts about it: `writes`, `undo`,
`irreversible`, `retry_safe`, and `confirm`. A fact said here replaces the decorator's;
`undo` and `irreversible` are alternatives, so saying one here drops the other.
`confirm: false` lets a write run without asking a person (see `confirms`); the lint
`irreversible_without_confirmation` reports it on irreversible writes.

Relative paths resolve from the yaml's folder. `python:` modules import under their own
names with that folder on `sys.path`, so the project's own code (`from shop.tools
import CALLS`) sees the very module the agent calls, and loading the same file again
reuses it. Two folders whose modules share a top-level name cannot both be loaded in
one process: the second load is a ConfigError naming both places, never a silent mix
(`unload_tool_modules(project)` forgets the first project's modules when that is meant).

Every error is a ConfigError naming the file, the key path (`agents.desk.tools[3]`),
what was expected and, where the yaml says, the line and column.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
import sys
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from stalwart.errors import ConfigError, ToolDefinitionError
from stalwart.models.pricing import Price, PriceTable
from stalwart.policy.rulebook import Rulebook, load_rulebook
from stalwart.tools import ToolSpec, UndoSpec, parse_undo, tools_in_module

Loc = tuple[str | int, ...]
_M = TypeVar("_M", bound=BaseModel)

SOURCE_KEYS = ("python",)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
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
    operator_token_env: str | None
    modules: tuple[str, ...]  # the python: sources, in the order listed
    prices: Mapping[str, Price] = field(default_factory=dict)  # by "provider:model"

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
    operator_token_env: str | None
    source: Path
    project: ProjectConfig = field(repr=False)
    prices: Mapping[str, Price] = field(default_factory=dict)  # the project's `prices:`


def confirms(spec: ToolSpec) -> bool:
    """Whether a person confirms this tool's calls: every write, unless `confirm: false`."""
    return spec.writes and bool(spec.extra.get("confirm", True))


def unload_tool_modules(project: ProjectConfig) -> None:
    """Forget the project's tool modules (those from its folder) and its path entry.

    After this, another folder whose modules have the same names can be loaded (a test
    that copies an example into a temporary folder needs it). The project already loaded
    keeps working: its specs hold the functions themselves.
    """
    folder = project.folder
    tops = {name.split(".")[0] for name in project.modules}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] not in tops:
            continue
        origin = _module_origin(module)
        if origin is not None and origin.is_relative_to(folder):
            del sys.modules[name]
    sys.path[:] = [entry for entry in sys.path if entry != str(folder)]
    importlib.invalidate_caches()


def load_agent(path: str | Path, agent: str | None = None) -> AgentConfig:
    """The one agent of the file, or the one named; ConfigError if that is ambiguous."""
    project = load_project(path)
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


def load_project(path: str | Path) -> ProjectConfig:
    """Read agent.yaml, import its tool sources, read its rulebook, check it all."""
    source = Path(path).resolve()
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(str(source), "", f"cannot read the file: {error.strerror}") from error
    return _Loader(source, text).load()


# --- the raw shape, checked by pydantic -----------------------------------------------


class _Raw(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _RawAgent(_Raw):
    model: str | None = None
    tools: list[str] = []
    on_unread: Literal["refuse", "model"] = "refuse"


class _RawFile(_Raw):
    agents: dict[str, _RawAgent]
    tools: list[dict[str, Any]] = []
    rulebook: str | None = None
    runs: Literal["atomic"] = "atomic"
    record: str | None = None
    operator_token_env: str | None = None
    prices: dict[str, dict[str, Any]] = {}


class _RawUndo(_Raw):
    tool: str
    args: dict[str, str] | None = None


class _RawFacts(_Raw):
    writes: bool | None = None
    undo: Any = None  # a tool name or a _RawUndo, told apart by hand for a clear error
    irreversible: bool | None = None
    retry_safe: bool | None = None
    confirm: bool | None = None


class _RawSource(_Raw):
    python: str


# --- loading --------------------------------------------------------------------------


class _Loader:
    def __init__(self, source: Path, text: str) -> None:
        self.source = source
        self.file = str(source)
        self.folder = source.parent
        self.text = text
        self.root: yaml.Node | None = None

    def error(self, loc: Loc, expected: str, *, at_key: bool = False) -> ConfigError:
        line, column = self._position(loc, at_key)
        return ConfigError(self.file, _key_path(loc), expected, line, column)

    def load(self) -> ProjectConfig:
        data = self._parse_yaml()
        raw = self._validate(_RawFile, data, ())
        if not raw.agents:
            raise self.error(("agents",), "expected at least one agent")
        modules, facts = self._read_tool_items(raw.tools)
        catalogue = self._catalogue(modules, facts)
        rulebook = self._rulebook(raw.rulebook, catalogue)
        record = self._record(raw.record)
        if raw.operator_token_env is not None and not _ENV_NAME.match(raw.operator_token_env):
            raise self.error(
                ("operator_token_env",),
                f"expected the name of an environment variable, got {raw.operator_token_env!r}",
            )
        agents: dict[str, AgentConfig] = {}
        project = ProjectConfig(
            source=self.source,
            agents=types.MappingProxyType(agents),
            catalogue=types.MappingProxyType(catalogue),
            rulebook=rulebook,
            runs=raw.runs,
            record=record,
            operator_token_env=raw.operator_token_env,
            modules=tuple(name for _, name in modules),
            prices=types.MappingProxyType(self._prices(raw.prices)),
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
        try:
            self.root = yaml.compose(self.text, Loader=yaml.SafeLoader)
            data = yaml.safe_load(self.text)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            problem = getattr(error, "problem", None) or str(error)
            line = mark.line + 1 if mark is not None else None
            column = mark.column + 1 if mark is not None else None
            raise ConfigError(self.file, "", f"invalid YAML: {problem}", line, column) from error
        if self.root is not None:
            self._refuse_duplicate_keys(self.root, ())
        if not isinstance(data, dict):
            raise ConfigError(
                self.file, "", "expected a mapping with an 'agents' key at the top", 1, 1
            )
        return data

    def _refuse_duplicate_keys(self, node: yaml.Node, loc: Loc) -> None:
        # PyYAML keeps the last of two equal keys; a person meant one of them.
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in node.value:
                name = key.value if isinstance(key, yaml.ScalarNode) else str(key.value)
                if name in seen:
                    raise ConfigError(
                        self.file, _key_path((*loc, name)), "this key appears twice",
                        key.start_mark.line + 1, key.start_mark.column + 1,
                    )  # fmt: skip
                seen.add(name)
                self._refuse_duplicate_keys(value, (*loc, name))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self._refuse_duplicate_keys(item, (*loc, index))

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
    ) -> tuple[list[tuple[Loc, str]], list[tuple[Loc, str, _RawFacts]]]:
        modules: list[tuple[Loc, str]] = []
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
                if not _MODULE.match(module):
                    raise self.error((*loc, key), f"expected a module name, got {module!r}")
                modules.append(((*loc, key), module))
            else:
                raw = self._validate(_RawFacts, item[key] or {}, (*loc, key))
                facts.append(((*loc, key), key, raw))
        return modules, facts

    def _catalogue(
        self, modules: list[tuple[Loc, str]], facts: list[tuple[Loc, str, _RawFacts]]
    ) -> dict[str, ToolSpec]:
        catalogue: dict[str, ToolSpec] = {}
        provider: dict[str, str] = {}
        said_at: dict[str, Loc] = {}  # where each tool's undo was said, for errors
        for loc, name in modules:
            found = tools_in_module(self._import(loc, name))
            if not found:
                raise self.error(loc, f"module {name!r} defines no @tool functions")
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
            changes["extra"] = {**spec.extra, "confirm": raw.confirm}
        try:
            laid = dataclasses.replace(spec, **changes)
        except ToolDefinitionError as error:
            raise self.error(loc, str(error)) from None
        if raw.confirm is False and not laid.writes:
            raise self.error(
                (*loc, "confirm"), "only a write is confirmed; a read never asks", at_key=True
            )
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

    def _import(self, loc: Loc, name: str) -> types.ModuleType:
        top = name.split(".")[0]
        local = _local_module(self.folder, top)
        if local is not None:
            self._refuse_collision(loc, top, local)
            if str(self.folder) not in sys.path:
                # Kept on the path: tools may import more of their package later.
                sys.path.insert(0, str(self.folder))
        importlib.invalidate_caches()
        try:
            module = importlib.import_module(name)
        except Exception as error:  # whatever the module raised while it ran
            raise self.error(
                loc, f"module {name!r} failed to import: {type(error).__name__}: {error}"
            ) from error
        if local is not None:
            self._refuse_collision(loc, top, local)
        return module

    def _refuse_collision(self, loc: Loc, top: str, local: Path) -> None:
        existing = sys.modules.get(top)
        if existing is None:
            return
        origin = _module_origin(existing)
        if origin != local:
            raise self.error(
                loc,
                f"module {top!r} is already imported from {origin or 'elsewhere'}, not from "
                f"{local}; two projects whose tool modules share a name cannot be loaded "
                "in one process",
            )

    def _rulebook(self, path_text: str | None, catalogue: Mapping[str, ToolSpec]) -> Rulebook:
        if path_text is None:
            return Rulebook(source=None)
        path = (self.folder / path_text).resolve()
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
        return str((self.folder / record).resolve())

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
        return AgentConfig(
            name=name,
            model=None if raw.model is None else self._model(raw.model, (*loc, "model")),
            tools=types.MappingProxyType(tools),
            on_unread=raw.on_unread,
            rulebook=project.rulebook,
            runs=project.runs,
            record=project.record,
            operator_token_env=project.operator_token_env,
            source=self.source,
            project=project,
            prices=project.prices,
        )

    def _model(self, raw: str, loc: Loc) -> ModelSelector:
        provider, colon, model = raw.partition(":")
        if not colon or not provider.strip() or not model.strip():
            raise self.error(
                loc, f"expected '<provider>:<model>', such as "
                f"'anthropic:claude-sonnet-5-5', got {raw!r}",
            )  # fmt: skip
        return ModelSelector(provider=provider.strip(), model=model.strip(), raw=raw)

    def _position(self, loc: Loc, at_key: bool) -> tuple[int | None, int | None]:
        node = self.root
        mark = node.start_mark if node is not None else None
        for step in loc:
            if isinstance(node, yaml.MappingNode):
                pair = next(
                    ((k, v) for k, v in node.value if getattr(k, "value", None) == step), None
                )
                if pair is None:
                    break
                mark = pair[0].start_mark if at_key and step == loc[-1] else pair[1].start_mark
                node = pair[1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(step, int):
                if step >= len(node.value):
                    break
                node = node.value[step]
                mark = node.start_mark
            else:
                break
        if mark is None:
            return None, None
        return mark.line + 1, mark.column + 1


def _first_repeat(names: list[str]) -> int | None:
    """The index of the first name that came before, if any."""
    seen: set[str] = set()
    for index, name in enumerate(names):
        if name in seen:
            return index
        seen.add(name)
    return None


def _key_path(loc: Loc) -> str:
    path = ""
    for step in loc:
        if isinstance(step, int):
            path += f"[{step}]"
        else:
            path += ("." if path else "") + str(step)
    return path


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


def _local_module(folder: Path, top: str) -> Path | None:
    """The package folder or module file for `top` in the yaml's folder, if there is one."""
    for candidate in (folder / top, folder / f"{top}.py"):
        if candidate.exists():
            return candidate.resolve()
    return None


def _module_origin(module: types.ModuleType) -> Path | None:
    file = getattr(module, "__file__", None)
    if file is not None:
        path = Path(file).resolve()
        return path.parent if path.name == "__init__.py" else path
    locations = list(getattr(module, "__path__", []))
    return Path(locations[0]).resolve() if locations else None
