"""The registration lints: what recovery needs from each write, and what is missing.

None fails anything. Each lint is one function over one of an agent's tools; the texts
are the chapter's, with placeholders filled. Printed one per line as
`<tool>: <name>: <text>`, or `<agent>/<tool>: <name>: <text>` in a file of several
agents.

Decisions the chapter leaves open:

- An *undo tool* is a tool some write of the catalogue names as its undo. It is judged
  as an undo, not as a write of its own: `write_without_compensation` and
  `write_not_retry_safe` skip it, and its retry safety is reported on each write it
  undoes, as `compensation_not_retry_safe` (an undo is always retried under its key,
  so an ambiguous failure of an undo never goes to a person).
- "Idempotency" is `retry_safe`: a write that takes an `idempotency_key` but is not
  marked retry-safe is still sent once, so it is still `write_not_retry_safe`.
- `irreversible_without_confirmation`: every write is confirmed unless agent.yaml says
  `confirm: never` under its name; an irreversible write that says so is linted.
- `write_without_confirmation` (stalwart's own, not the chapter's): any other write that
  says `confirm: never`, since chapter 34 has every write confirmed by a person
  (`stalwart verify` reports it as QG014).
- `compensation_not_retry_safe` fires only for an undo that is a write: a read is
  always retried.
- `compensation_unbound`: each *required* argument of the undo is bound from the write
  (see `undo_bindings`); one lint per argument that cannot be.
- `compensation_cycle`: following undo links from a tool reaches a tool already on the
  path; `<at>` names that tool.
- `compensation_out_of_reach`: the agent lists the write but not its undo, which the
  catalogue has (an undo the catalogue lacks is `compensation_unknown_tool` only).
- Lints are about what agents can call: a catalogue tool no agent lists is not linted.
- A write's probe (tools/probe.py) is checked when the catalogue is built (it exists, is
  a read, its bindings name real parameters, what it requires is bound); the lints add
  what that check cannot refuse: `probe_out_of_reach` (the agent lists the write but
  not its probe, so no evidence is shown) and `probe_binding_not_in_schema` (an
  `$args.<path>` deeper than the write's schema goes).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import textwrap
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from stalwart import selector, texts
from stalwart.config import AgentConfig, ProjectConfig, confirms
from stalwart.selector.vocabulary import phrase_parts
from stalwart.tools import ProbeSpec, ToolSpec, UndoSpec
from stalwart.tools.mcp import result_schema
from stalwart.tools.mcp_seen import changed
from stalwart.tools.paths import in_schema, parse_path
from stalwart.tools.spec import PLACEHOLDER


@dataclass(frozen=True)
class Lint:
    name: str
    agent: str | None  # set only when the file has several agents
    tool: str
    text: str

    def __str__(self) -> str:
        where = f"{self.agent}/{self.tool}" if self.agent else self.tool
        return f"{where}: {self.name}: {self.text}"


def lint_project(project: ProjectConfig) -> list[Lint]:
    """Every agent's lints, agent by agent in file order."""
    return [lint for agent in project.agents.values() for lint in lint_agent(agent)]


def lint_agent(agent: AgentConfig) -> list[Lint]:
    """The agent's lints: tool by tool as listed, each tool's in the chapter's order."""
    context = _Context(agent)
    return [
        lint for spec in agent.tools.values() for check in LINTS for lint in check(spec, context)
    ]


@dataclass(frozen=True)
class Binding:
    """Where one argument of an undo comes from: '$args.x', '$result.x', or nowhere."""

    argument: str
    source: str | None  # None: unbound
    looked_for: str  # what `<from>` prints when unbound


def undo_bindings(write: ToolSpec, undo: ToolSpec) -> list[Binding]:
    """How each required argument of `undo` is bound from `write`.

    An explicit binding (`undo: {tool: ..., args: {x: $args.y}}`) is used as said; an
    argument it does not name is bound by name, as when there are no explicit bindings:
    first an argument of the write, then a field of its result. The result's fields
    are known from its return hint (TypedDict, dataclass, NamedTuple, pydantic model),
    else from a `Returns:` section of `name: description` lines in its docstring, else
    from its `return {...}` statements when every one is a dict literal with string
    keys. When none of those tells, a `$result.<name>` binding is assumed possible and
    left to the check at run time.
    """
    explicit = (write.undo.args if write.undo else None) or {}
    fields = result_fields(write)
    bindings: list[Binding] = []
    for param in undo.params:
        if not param.required:
            continue
        if param.name in explicit:
            source = explicit[param.name]
            kind, path = UndoSpec.parse_source(source)
            steps = parse_path(path) or (path,)
            head = str(steps[0])  # deeper steps are binding_not_in_schema's
            found = write.param(head) is not None if kind == "args" else _has(fields, head)
            bindings.append(Binding(param.name, source if found else None, source))
        elif write.param(param.name) is not None:
            bindings.append(Binding(param.name, f"$args.{param.name}", ""))
        elif _has(fields, param.name):
            bindings.append(Binding(param.name, f"$result.{param.name}", ""))
        else:
            looked_for = texts.UNBOUND_SOURCE.format(argument=param.name)
            bindings.append(Binding(param.name, None, looked_for))
    return bindings


def result_fields(spec: ToolSpec) -> frozenset[str] | None:
    """The fields of what a tool returns, or None when they cannot be known."""
    for finder in (_fields_from_hint, _fields_from_docstring, _fields_from_returns):
        found = finder(spec)
        if found is not None:
            return found
    return None


# --- the eight lints ------------------------------------------------------------------


class _Context:
    def __init__(self, agent: AgentConfig) -> None:
        self.agent = agent
        self.catalogue = agent.project.catalogue
        self.undo_tools = {s.undo.tool for s in self.catalogue.values() if s.undo is not None}
        self.shown_agent = agent.name if len(agent.project.agents) > 1 else None

    def lint(self, name: str, spec: ToolSpec, **placeholders: str) -> Lint:
        template = texts.LINT_TEXTS.get(name) or texts.EXTRA_LINT_TEXTS[name]
        return Lint(name, self.shown_agent, spec.name, template.format(**placeholders))

    def undo_of(self, spec: ToolSpec) -> ToolSpec | None:
        return self.catalogue.get(spec.undo.tool) if spec.undo is not None else None


def write_without_compensation(spec: ToolSpec, context: _Context) -> Iterator[Lint]:
    if (
        spec.writes
        and spec.undo is None
        and not spec.irreversible
        and spec.name not in context.undo_tools
    ):
        yield context.lint("write_without_compensation", spec)


def write_not_retry_safe(spec: ToolSpec, context: _Context) -> Iterator[Lint]:
    if spec.writes and not spec.retry_safe and spec.name not in context.undo_tools:
        yield context.lint("write_not_retry_safe", spec)


def irreversible_without_confirmation(spec: ToolSpec, context: _Context) -> Iterator[Lint]:
    if spec.irreversible and not confirms(spec):
        yield context.lint("irreversible_without_confirmation", spec)


def write_without_confirmation(spec: ToolSpec, context: _Context) -> Iterator[Lint]:
    if spec.writes and not spec.irreversible and not confirms(spec):
        yield context.lint("write_without_confirmation", spec)


def compensation_unknown_tool(spec: ToolSpec, context: _Context) -> Iterator[Lint]:
    if spec.undo is not None and spec.undo.tool not in context.catalogue:
        yield context.lint("compensation_unknown_tool", spec, undo=spec.undo.tool)


def compensation_not_retry_safe(spec: ToolSpec, context: _Context) -> Iterator[Lint]:
    undo = context.undo_of(spec)
    if undo is not None and undo.writes and not undo.retry_safe:
        yield context.lint("compensation_not_retry_safe", spec, undo=undo.name)


def compensation_unbound(spec: ToolSpec, context: _Context) -> Iterator[Lint]:
    undo = context.undo_of(spec)
    if undo is None:
        return
    for binding in undo_bindings(spec, undo):
        if binding.source is None:
            yield context.lint(
                "compensation_unbound", spec, argument=binding.argument, source=binding.looked_for
            )


def compensation_cycle(spec: ToolSpec, context: _Context) -> Iterator[Lint]:
    path = [spec.name]
    current: ToolSpec | None = spec
    while current is not None and current.undo is not None:
        following = current.undo.tool
        if following in path:
            yield context.lint("compensation_cycle", spec, at=following)
            return
        path.append(following)
        current = context.catalogue.get(following)


def compensation_out_of_reach(spec: ToolSpec, context: _Context) -> Iterator[Lint]:
    undo = context.undo_of(spec)
    if undo is not None and undo.name not in context.agent.tools:
        yield context.lint(
            "compensation_out_of_reach", spec, agent_name=context.agent.name, undo=undo.name
        )


def read_from_hint(spec: ToolSpec, context: _Context) -> Iterator[Lint]:
    """An MCP tool taken as a read on its server's word alone (hints are untrusted)."""
    if _from_hint(spec, "writes") and not spec.writes:
        yield context.lint("read_from_hint", spec)


def retry_safe_from_hint(spec: ToolSpec, context: _Context) -> Iterator[Lint]:
    """An MCP write retry-safe on its server's word alone."""
    if spec.writes and spec.retry_safe and _from_hint(spec, "retry_safe"):
        yield context.lint("retry_safe_from_hint", spec)


def binding_not_in_schema(spec: ToolSpec, context: _Context) -> Iterator[Lint]:
    """An explicit undo binding whose path the write's schema (arguments or result)
    does not have; one lint per binding."""
    if spec.undo is None or not spec.undo.args:
        return
    for argument, source in spec.undo.args.items():
        kind, path = UndoSpec.parse_source(source)
        steps = parse_path(path) or (path,)
        schema = spec.json_schema() if kind == "args" else result_schema(spec)
        if in_schema(schema, steps[:1]) and not in_schema(schema, steps):
            yield context.lint("binding_not_in_schema", spec, argument=argument, source=source)


def probe_out_of_reach(spec: ToolSpec, context: _Context) -> Iterator[Lint]:
    """The agent lists the write but not its probe: its runs cannot ask it."""
    probe = spec.probe
    if probe is None or probe.tool not in context.catalogue:
        return  # an unknown probe is refused when the catalogue is built
    if probe.tool not in context.agent.tools:
        yield context.lint(
            "probe_out_of_reach", spec, agent_name=context.agent.name, probe=probe.tool
        )


def probe_binding_not_in_schema(spec: ToolSpec, context: _Context) -> Iterator[Lint]:
    """An explicit `$args.<path>` probe binding whose path the write's arguments' schema
    does not have (its head is checked at registration); one lint per binding."""
    if spec.probe is None or not spec.probe.args:
        return
    for argument, source in spec.probe.args.items():
        kind, path = ProbeSpec.parse_source(source)
        steps = parse_path(path) if kind == "args" else None
        if steps and not in_schema(spec.json_schema(), steps):
            yield context.lint(
                "probe_binding_not_in_schema", spec, argument=argument, source=source
            )


def phrase_shared(spec: ToolSpec, context: _Context) -> Iterator[Lint]:
    """A declared phrase another tool of the agent declares too (its words, case aside):
    a turn that only this phrase decides names both tools and is not read."""
    for phrase in spec.phrases:
        said = phrase.lower()
        for other in context.agent.tools.values():
            if other.name != spec.name and said in (p.lower() for p in other.phrases):
                yield context.lint("phrase_shared", spec, phrase=phrase, other=other.name)


def phrase_ties_nothing(spec: ToolSpec, context: _Context) -> Iterator[Lint]:
    """A `{parameter}` of a declared phrase after a word that is no role word in any of the
    agent's languages ("hold {payee}"): it only shows where the value stands, and ties no
    word of a turn to the parameter, which an author may not expect."""
    grammars = selector.grammars(context.agent.languages)
    languages = " or ".join(language.capitalize() for language in context.agent.languages)
    for phrase in spec.phrases:
        tied = {name for g in grammars for _, name in phrase_parts(phrase, g)[1]}
        for name in PLACEHOLDER.findall(phrase):
            if name not in tied:
                yield context.lint(
                    "phrase_ties_nothing", spec, phrase=phrase, parameter=name, languages=languages
                )


def mcp_tool_changed(spec: ToolSpec, context: _Context) -> Iterator[Lint]:
    """An MCP tool whose server lists other annotations or schemas than when first seen."""
    differs = changed(spec)
    if differs:
        seen = str(spec.extra["mcp"].get("seen", ""))
        yield context.lint("mcp_tool_changed", spec, changes="; ".join(differs), file=seen)


def _from_hint(spec: ToolSpec, fact: str) -> bool:
    """Whether an MCP tool's fact came from its server's hints, agent.yaml silent on it."""
    said = spec.extra.get("mcp")
    return isinstance(said, dict) and fact not in said.get("said", ())


LINTS: tuple[Callable[[ToolSpec, _Context], Iterator[Lint]], ...] = (
    mcp_tool_changed,
    read_from_hint,
    retry_safe_from_hint,
    binding_not_in_schema,
    write_without_compensation,
    write_not_retry_safe,
    irreversible_without_confirmation,
    write_without_confirmation,
    compensation_unknown_tool,
    compensation_not_retry_safe,
    compensation_unbound,
    compensation_cycle,
    compensation_out_of_reach,
    probe_out_of_reach,
    probe_binding_not_in_schema,
    phrase_shared,
    phrase_ties_nothing,
)


# --- what a tool returns --------------------------------------------------------------


def _has(fields: frozenset[str] | None, name: str) -> bool:
    return fields is None or name in fields


def _fields_from_hint(spec: ToolSpec) -> frozenset[str] | None:
    try:
        hint = typing.get_type_hints(spec.func).get("return")
    except Exception:  # an unresolvable hint says nothing about fields
        return None
    if not isinstance(hint, type):
        return None
    if typing.is_typeddict(hint):
        return frozenset(typing.get_type_hints(hint))
    if dataclasses.is_dataclass(hint):
        return frozenset(f.name for f in dataclasses.fields(hint))
    if issubclass(hint, BaseModel):
        return frozenset(hint.model_fields)
    if issubclass(hint, tuple) and hasattr(hint, "_fields"):
        return frozenset(hint._fields)
    return None


_SECTION = re.compile(r"^\s*Returns?:\s*$")
_FIELD_LINE = re.compile(r"^\s+([A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:\s*\S")


def _fields_from_docstring(spec: ToolSpec) -> frozenset[str] | None:
    lines = spec.description.splitlines()
    start = next((i for i, line in enumerate(lines) if _SECTION.match(line)), None)
    if start is None:
        return None
    fields: set[str] = set()
    for line in lines[start + 1 :]:
        if line.strip() and not line.startswith((" ", "\t")):
            break
        match = _FIELD_LINE.match(line)
        if match:
            fields.add(match.group(1))
    return frozenset(fields) or None


def _fields_from_returns(spec: ToolSpec) -> frozenset[str] | None:
    try:
        source = textwrap.dedent(inspect.getsource(spec.func))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return None
    function = tree.body[0] if tree.body else None
    if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    fields: set[str] = set()
    returns = list(_returns(function))
    if not returns:
        return None
    for value in returns:
        if not isinstance(value, ast.Dict):
            return None
        for key in value.keys:
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return None  # a `**spread` or a computed key: the fields are not known
            fields.add(key.value)
    return frozenset(fields)


def _returns(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.expr | None]:
    """The values of the function's own return statements (not of nested functions)."""
    stack: list[Any] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(node, ast.Return):
            yield node.value
        stack.extend(ast.iter_child_nodes(node))
