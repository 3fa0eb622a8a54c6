"""agent.yaml's `tools:` into the catalogue: every source's tools, the file's facts laid over.

Each item of `tools:` is a mapping with one key: `python` names a module (a source),
`mcp` a server (see `mcp.py`), any other key is a tool's name and its value the facts
about it: `writes`, `undo`, `irreversible`, `retry_safe`, `confirm`, `timeout`
(seconds a call may take), `probe` (a read asked when the write's outcome is in doubt:
`probe: get_charge`, or `probe: {tool: get_charge, args: {order: $args.order, key:
$key}}`; see `stalwart.tools.probe`) and `phrases` (a few phrasings a person may say for it, read by
the selector as its words: `phrases: ["send money"]`; a phrase two of an agent's tools
say is linted). A fact said here replaces the decorator's; `undo` and
`irreversible` are alternatives, so saying one here drops the other.
`confirm: never` lets a write run without asking a person (see `confirms`); `confirm:
false` is refused for a write (a boolean is too easily said by accident, and YAML reads
`no` as false), so a write runs unasked only where agent.yaml says `never` under its name.
The lints `write_without_confirmation` (QG014) and `irreversible_without_confirmation`
report every such write.

`python:` modules import under their own names with the yaml's folder on `sys.path` (see
`stalwart.tools.sources`), so the project's own code sees the very module the agent calls,
and loading the same file again reuses it. Two folders whose modules share a top-level name
cannot both be loaded in one process: the second load is a ConfigError naming both places,
never a silent mix (`unload_tool_modules(project)` forgets the first project's modules
when that is meant).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal

from stalwart import texts
from stalwart.errors import ToolDefinitionError, ToolSourceError
from stalwart.tools import ProbeSpec, ToolSpec, UndoSpec, closest_tool, parse_probe, parse_undo
from stalwart.tools.mcp import McpConnection, McpServer, McpToolSpec, mcp_source
from stalwart.tools.mcp_seen import compare_with_first_seen
from stalwart.tools.paths import parse_path
from stalwart.tools.probe import probe_bindings
from stalwart.tools.sources import MODULE_NAME, SOURCE_KEYS, python_source, unload_python_sources

from .mcp import mcp_server
from .project import ProjectConfig
from .reading import Raw, Reading
from .yamldoc import Loc


class _RawUndo(Raw):
    tool: str
    args: dict[str, str] | None = None


class _RawProbe(Raw):
    tool: str
    args: dict[str, str] | None = None


class _RawFacts(Raw):
    writes: bool | None = None
    undo: Any = None  # a tool name or a _RawUndo, told apart by hand for a clear error
    irreversible: bool | None = None
    retry_safe: bool | None = None
    # `never` lets a write run unasked; `false` is refused for a write (see _lay_facts).
    confirm: bool | Literal["never"] | None = None
    timeout: int | float | None = None
    phrases: list[str] | None = None
    probe: Any = None  # a tool name or a _RawProbe, told apart by hand for a clear error


class _RawSource(Raw):
    python: str


@dataclasses.dataclass
class ToolItems:
    """The items of `tools:`, each with where it was said, in the order listed."""

    modules: list[tuple[Loc, str]] = dataclasses.field(default_factory=list)
    servers: list[tuple[Loc, McpServer]] = dataclasses.field(default_factory=list)
    facts: list[tuple[Loc, str, _RawFacts]] = dataclasses.field(default_factory=list)


def read_tool_items(reading: Reading, items: list[dict[str, Any]]) -> ToolItems:
    """The sources and facts `tools:` lists, checked one by one; nothing imported yet."""
    read = ToolItems()
    for index, item in enumerate(items):
        loc: Loc = ("tools", index)
        if len(item) != 1:
            raise reading.error(
                loc,
                "expected one key: 'python: <module>', or a tool's name with its facts",
            )
        (key,) = item
        if key in SOURCE_KEYS:
            module = reading.validate(_RawSource, item, loc).python
            if not MODULE_NAME.match(module):
                raise reading.error((*loc, key), f"expected a module name, got {module!r}")
            read.modules.append(((*loc, key), module))
        elif key == "mcp":
            read.servers.append(((*loc, key), mcp_server(reading, item, loc)))
        else:
            raw = reading.validate(_RawFacts, item[key] or {}, (*loc, key))
            read.facts.append(((*loc, key), key, raw))
    return read


def build_catalogue(
    reading: Reading, items: ToolItems, connections: list[McpConnection]
) -> dict[str, ToolSpec]:
    """Every tool the sources provide, with the file's facts laid over; each MCP server
    started is added to `connections` as soon as it is, so a later error can stop it."""
    catalogue: dict[str, ToolSpec] = {}
    provider: dict[str, str] = {}
    said_at: dict[str, Loc] = {}  # where each tool's undo was said, for errors
    probe_at: dict[str, Loc] = {}  # where each tool's probe was said, for errors
    for loc, name in items.modules:
        try:
            found = python_source(reading.folder, name)
        except ToolSourceError as error:
            raise reading.error(loc, str(error)) from error.__cause__
        for tool_name, spec in found.items():
            if tool_name in catalogue and catalogue[tool_name].func is not spec.func:
                raise reading.error(
                    loc,
                    f"tool {tool_name!r} is provided by both {provider[tool_name]!r} and {name!r}",
                )
            catalogue[tool_name] = spec
            provider[tool_name] = name
            said_at[tool_name] = loc
            probe_at[tool_name] = loc
    for loc, server in items.servers:
        try:
            connection, served = mcp_source(server)
        except ToolSourceError as error:
            raise reading.error(loc, str(error)) from None
        connections.append(connection)
        served = compare_with_first_seen(reading.source, server, served)
        for tool_name, spec in served.items():
            if tool_name in catalogue:
                raise reading.error(
                    loc,
                    f"tool {tool_name!r} is provided by both {provider[tool_name]!r} and "
                    f"{server.describe()!r}; a prefix: keeps them apart",
                )
            catalogue[tool_name] = spec
            provider[tool_name] = server.describe()
            said_at[tool_name] = loc
            probe_at[tool_name] = loc
    facts = items.facts
    said_twice = _first_repeat([tool_name for _, tool_name, _ in facts])
    if said_twice is not None:
        raise reading.error(
            facts[said_twice][0], "facts about this tool are already said above", at_key=True
        )
    for loc, tool_name, raw in facts:
        if tool_name not in catalogue:
            raise reading.error(loc, f"no tool source provides {tool_name!r}", at_key=True)
        catalogue[tool_name] = _lay_facts(reading, catalogue[tool_name], raw, loc)
        if raw.undo is not None:
            said_at[tool_name] = (*loc, "undo")
        if raw.probe is not None:
            probe_at[tool_name] = (*loc, "probe")
    for tool_name, spec in catalogue.items():
        _check_undo_binding(reading, spec, catalogue, said_at[tool_name])
        problem = _probe_problem(spec, catalogue)
        if problem is not None:
            raise reading.error(probe_at[tool_name], problem)
    return catalogue


def unload_tool_modules(project: ProjectConfig) -> None:
    """Forget the project's tool modules (those from its folder) and its path entry.

    After this, another folder whose modules have the same names can be loaded (a test
    that copies an example into a temporary folder needs it). The project already loaded
    keeps working: its specs hold the functions themselves.
    """
    unload_python_sources(project.folder, project.modules)


def _lay_facts(reading: Reading, spec: ToolSpec, raw: _RawFacts, loc: Loc) -> ToolSpec:
    changes: dict[str, Any] = {}
    if raw.writes is not None:
        changes["writes"] = raw.writes
    if raw.retry_safe is not None:
        changes["retry_safe"] = raw.retry_safe
    if raw.timeout is not None:
        changes["timeout"] = raw.timeout
    if raw.phrases is not None:
        changes["phrases"] = tuple(raw.phrases)
    if raw.undo is not None and raw.irreversible:
        raise reading.error(loc, "a write cannot both name an undo and be irreversible")
    if raw.undo is not None:
        changes["undo"] = _undo(reading, raw.undo, (*loc, "undo"))
        changes["irreversible"] = False
    if raw.irreversible is not None:
        changes["irreversible"] = raw.irreversible
        if raw.irreversible:
            changes["undo"] = None
    if raw.probe is not None:
        changes["probe"] = _probe(reading, raw.probe, (*loc, "probe"))
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
        raise reading.error(loc, str(error)) from None
    if raw.confirm in (False, "never") and not laid.writes:
        raise reading.error(
            (*loc, "confirm"), "only a write is confirmed; a read never asks", at_key=True
        )
    if raw.confirm is False:
        # Chapter 34 has every write confirmed by a person. A boolean is too easy to
        # say by accident (YAML reads `no` and `off` as false, a copied block carries
        # it along): running a write unasked takes the word `never`, per tool.
        raise reading.error((*loc, "confirm"), texts.confirm_false_refused(laid.name))
    return laid


def _undo(reading: Reading, value: Any, loc: Loc) -> UndoSpec | None:
    if isinstance(value, dict):
        value = reading.validate(_RawUndo, value, loc).model_dump()
    elif not isinstance(value, str):
        raise reading.error(
            loc, f"expected a tool name or {{tool: <name>, args: {{...}}}}, got {value!r}"
        )
    try:
        return parse_undo(value)
    except ToolDefinitionError as error:
        raise reading.error(loc, str(error)) from None


def _probe(reading: Reading, value: Any, loc: Loc) -> ProbeSpec | None:
    if isinstance(value, dict):
        value = reading.validate(_RawProbe, value, loc).model_dump()
    elif not isinstance(value, str):
        raise reading.error(loc, texts.probe_bad_shape(value))
    try:
        return parse_probe(value)
    except ToolDefinitionError as error:
        raise reading.error(loc, str(error)) from None


def _check_undo_binding(
    reading: Reading, spec: ToolSpec, catalogue: Mapping[str, ToolSpec], loc: Loc
) -> None:
    # A binding for an argument the undo does not take could never be sent.
    if spec.undo is None or spec.undo.args is None or spec.undo.tool not in catalogue:
        return
    undo = catalogue[spec.undo.tool]
    for argument in spec.undo.args:
        if undo.param(argument) is None:
            taken = ", ".join(p.name for p in undo.params) or "no arguments"
            raise reading.error(
                loc,
                f"{spec.name}'s undo binds {argument!r}, which {undo.name} does not take "
                f"(it takes {taken})",
            )


def _probe_problem(write: ToolSpec, catalogue: Mapping[str, ToolSpec]) -> str | None:
    """Why `write`'s probe cannot be asked, or None: the registration check. The probe must
    be a tool of the catalogue, a read, and its bindings must name an argument it takes,
    from an argument the write has; every argument it requires must be bound."""
    declared = write.probe
    if declared is None:
        return None
    if not write.writes:
        return texts.probe_on_a_read(write.name)
    probe = catalogue.get(declared.tool)
    if probe is None:
        return texts.probe_unknown(
            write.name, declared.tool, closest_tool(declared.tool, catalogue)
        )
    if probe.writes:
        return texts.probe_is_a_write(write.name, probe.name)
    for argument, source in (declared.args or {}).items():
        if probe.param(argument) is None:
            taken = ", ".join(p.name for p in probe.params) or "no arguments"
            return texts.probe_takes_no(write.name, probe.name, argument, taken)
        kind, path = ProbeSpec.parse_source(source)
        steps = parse_path(path) if kind == "args" else None
        if kind == "args" and (not steps or write.param(str(steps[0])) is None):
            return texts.probe_no_such_argument(write.name, probe.name, argument, source)
    for binding in probe_bindings(write, probe):
        if binding.source is None:
            return texts.probe_unbound(write.name, probe.name, binding.argument)
    return None


def _first_repeat(names: list[str]) -> int | None:
    """The index of the first name that came before, if any."""
    seen: set[str] = set()
    for index, name in enumerate(names):
        if name in seen:
            return index
        seen.add(name)
    return None
