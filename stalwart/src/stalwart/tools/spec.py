"""Tools: the `@tool` decorator, a tool's spec, and the JSON schema of its arguments.

A tool is a plain Python function. `@tool` marks it and records what recovery
needs to know about it (does it write, what undoes it, is it irreversible, is it
safe to send twice). The function itself is returned unchanged, so it stays
callable and testable on its own.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, overload

from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

from .. import texts
from ..errors import ArgumentRefused, ToolDefinitionError
from . import invoke
from .boundary import ParamType
from .probe import ProbeSpec, parse_probe

# A parameter with this name is filled by the runtime with the call's idempotency key;
# it is never bound from a turn and never shown to a model.
IDEMPOTENCY_KEY_PARAM = "idempotency_key"

_MARK = "__stalwart_tool__"
# `$args.<path>` or `$result.<path>`; the path's syntax is tools/paths.py's.
_BINDING = re.compile(
    r"^\$(args|result)\.([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*|\[(?:\*|[0-9]+)\])*)$"
)


@dataclass(frozen=True)
class UndoSpec:
    """What undoes a write: the undo tool's name and, optionally, explicit bindings.

    `args` maps each argument of the undo to `$args.<name>` (an argument of the write)
    or `$result.<field>` (a field of what the write returned). When `args` is None the
    undo's arguments are bound by name: first the write's arguments, then its result's
    fields.
    """

    tool: str
    args: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        for name, source in (self.args or {}).items():
            if not isinstance(source, str) or not _BINDING.match(source):
                raise ToolDefinitionError(
                    f"undo {self.tool!r}: argument {name!r} is bound to {source!r}; "
                    "expected '$args.<name>' or '$result.<field>'"
                )

    @staticmethod
    def parse_source(source: str) -> tuple[str, str]:
        """Split '$args.order' into ('args', 'order')."""
        match = _BINDING.match(source)
        if match is None:
            raise ToolDefinitionError(
                f"binding {source!r}: expected '$args.<name>' or '$result.<field>'"
            )
        return match.group(1), match.group(2)


def closest_tool(name: str, names: Iterable[str]) -> str | None:
    """The name among `names` closest to `name` (what a misspelt undo likely meant), or
    None when none is close enough to be a misspelling of it."""
    found = difflib.get_close_matches(name, [n for n in names if n != name], n=1, cutoff=0.75)
    return found[0] if found else None


@dataclass(frozen=True)
class Param:
    """One argument a tool takes; `type` checks and converts its values (boundary.py)."""

    name: str
    annotation: Any
    required: bool
    default: Any = None
    description: str = ""
    type: ParamType = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "type", ParamType(self.annotation))

    @property
    def base_type(self) -> Any:
        """The annotation with Optional[...] and Annotated[...] removed."""
        return _strip_optional(self.annotation)


_POSITION = itemgetter(0)  # of `typed`'s (position, parameter, name)


@dataclass(frozen=True)
class ToolSpec:
    """Everything the runtime knows about a tool."""

    name: str
    func: Callable[..., Any]
    description: str
    params: tuple[Param, ...]
    writes: bool = False
    undo: UndoSpec | None = None
    irreversible: bool = False
    retry_safe: bool = False
    takes_idempotency_key: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)
    timeout: float | None = None  # seconds a call may take (invoke.py)
    # A few phrasings a person may say for it ("send money" for transfer): the selector
    # reads a phrase said in full as the tool's own words (selector/vocabulary.py).
    phrases: tuple[str, ...] = ()
    # The read asked when its outcome is in doubt, its answer shown as evidence (probe.py).
    probe: ProbeSpec | None = None
    # Each parameter with its position, by name: what `param` and `typed` look up.
    _by_name: Mapping[str, tuple[int, Param]] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        by_name = {param.name: (at, param) for at, param in enumerate(self.params)}
        object.__setattr__(self, "_by_name", by_name)
        object.__setattr__(self, "timeout", invoke.check_timeout(self.name, self.timeout))
        object.__setattr__(self, "phrases", check_phrases(self.name, self.phrases))
        _check_phrase_parameters(self.name, self.phrases, [p.name for p in self.params])
        if not self.writes and (self.undo is not None or self.irreversible):
            raise ToolDefinitionError(
                f"tool {self.name!r}: only a write (writes=True) can have an undo "
                "or be irreversible"
            )
        if self.undo is not None and self.irreversible:
            raise ToolDefinitionError(
                f"tool {self.name!r}: a write cannot both name an undo and be irreversible"
            )
        if self.probe is not None and not self.writes:
            raise ToolDefinitionError(texts.probe_on_a_read(self.name))

    @property
    def summary(self) -> str:
        """The docstring's first paragraph, on one line."""
        first = self.description.strip().split("\n\n", 1)[0]
        return " ".join(first.split())

    def param(self, name: str) -> Param | None:
        found = self._by_name.get(name)
        return found[1] if found is not None else None

    def with_facts(
        self,
        *,
        writes: bool | None = None,
        undo: UndoSpec | None = None,
        irreversible: bool | None = None,
        retry_safe: bool | None = None,
        timeout: float | None = None,
        probe: ProbeSpec | None = None,
    ) -> ToolSpec:
        """A copy with facts said elsewhere (agent.yaml) laid over the decorator's."""
        changes: dict[str, Any] = {}
        if probe is not None:
            changes["probe"] = probe
        if timeout is not None:
            changes["timeout"] = timeout
        if writes is not None:
            changes["writes"] = writes
        if undo is not None:
            changes["undo"] = undo
        if irreversible is not None:
            changes["irreversible"] = irreversible
        if retry_safe is not None:
            changes["retry_safe"] = retry_safe
        return dataclasses.replace(self, **changes)

    def json_schema(self) -> dict[str, Any]:
        """A JSON schema (draft 2020-12 object) of the arguments a caller supplies: each
        parameter's from its hint (boundary.py), with its docstring's description and its
        default; the definitions of models it names gathered in one `$defs`."""
        properties: dict[str, Any] = {}
        definitions: dict[str, Any] = {}
        for param in self.params:
            schema = param.type.schema()
            definitions.update(schema.pop("$defs", {}))
            if param.description:
                schema = {**schema, "description": param.description}
            if not param.required and _is_jsonable(param.default):
                schema = {**schema, "default": param.default}
            properties[param.name] = schema
        described: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }
        if definitions:
            described["$defs"] = definitions
        return described

    def typed(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Arguments as the tool's hints declare them, in the order of its parameters.

        Each value that fits its parameter is converted (the record's `"40.00"` is the
        Decimal again, an ISO text a datetime); one that does not is left as it is, for
        the check to refuse.
        """
        by_name = self._by_name
        unknown = (len(by_name), None)  # an argument the tool lacks goes last, kept as it is
        # (position, parameter, name), in the parameters' order: sorted by position alone
        # (C's itemgetter, no Python key per argument), so the sort is stable as before.
        found = [(*by_name.get(name, unknown), name) for name in args]
        found.sort(key=_POSITION)
        typed: dict[str, Any] = {}
        for _, param, name in found:
            value = args[name]
            try:
                typed[name] = value if param is None else param.type.convert(name, value)
            except ArgumentRefused:
                typed[name] = value  # kept as it is, for the check to refuse
        return typed

    def call(self, args: Mapping[str, Any], idempotency_key: str | None = None) -> Any:
        """Call the function with exactly these arguments (and the key, if it takes one):
        awaited if it is async, within its timeout if it declares one (see invoke.py)."""
        kwargs = dict(args)
        if self.takes_idempotency_key:
            kwargs[IDEMPOTENCY_KEY_PARAM] = idempotency_key
        return invoke.call(self.name, self.func, kwargs, self.timeout)


@overload
def tool(func: Callable[..., Any], /) -> Callable[..., Any]: ...


@overload
def tool(
    *,
    writes: bool = False,
    undo: str | UndoSpec | Mapping[str, Any] | None = None,
    irreversible: bool = False,
    retry_safe: bool = False,
    name: str | None = None,
    timeout: float | None = None,
    phrases: Iterable[str] = (),
    probe: str | ProbeSpec | Mapping[str, Any] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]: ...


def tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    writes: bool = False,
    undo: str | UndoSpec | Mapping[str, Any] | None = None,
    irreversible: bool = False,
    retry_safe: bool = False,
    name: str | None = None,
    timeout: float | None = None,
    phrases: Iterable[str] = (),
    probe: str | ProbeSpec | Mapping[str, Any] | None = None,
) -> Any:
    """Mark a function as a tool.

    `@tool` is a read. `@tool(writes=True, undo="refund_card")` is a write that
    `refund_card` undoes; `undo={"tool": "cancel_flight", "args": {"booking":
    "$result.booking"}}` binds the undo's arguments explicitly.
    `@tool(writes=True, irreversible=True)` is a write nothing can undo;
    `@tool(writes=True, retry_safe=True)` is a write that may be sent again under
    its idempotency key. `timeout=` (seconds) bounds a call: past it the call is in
    doubt. An `async def` tool is awaited (see invoke.py). `phrases=["send money"]` gives
    the tool a few phrasings a person may say for it, read by the selector as its words.
    `probe="get_charge"` (or `{"tool": "get_charge", "args": {"order": "$args.order",
    "key": "$key"}}`) names the read asked when the write's outcome is in doubt, its
    answer shown to the person as evidence (see probe.py).
    """

    def mark(function: Callable[..., Any]) -> Callable[..., Any]:
        spec = spec_from_function(
            function,
            name=name,
            writes=writes,
            undo=parse_undo(undo),
            irreversible=irreversible,
            retry_safe=retry_safe,
            timeout=timeout,
            phrases=phrases,
            probe=parse_probe(probe),
        )
        setattr(function, _MARK, spec)
        return function

    if func is not None:
        return mark(func)
    return mark


def parse_undo(undo: str | UndoSpec | Mapping[str, Any] | None) -> UndoSpec | None:
    """Accept an undo as a tool name, an UndoSpec, or {'tool': ..., 'args': {...}}."""
    if undo is None or isinstance(undo, UndoSpec):
        return undo
    if isinstance(undo, str):
        return UndoSpec(tool=undo)
    if isinstance(undo, Mapping):
        unknown = set(undo) - {"tool", "args"}
        if unknown or not isinstance(undo.get("tool"), str):
            raise ToolDefinitionError(
                f"undo {dict(undo)!r}: expected {{'tool': <name>, 'args': {{...}}}}"
            )
        args = undo.get("args")
        if args is not None and not isinstance(args, Mapping):
            raise ToolDefinitionError(f"undo {undo['tool']!r}: 'args' must be a mapping")
        return UndoSpec(tool=undo["tool"], args=dict(args) if args is not None else None)
    raise ToolDefinitionError(f"undo {undo!r}: expected a tool name or a mapping")


def spec_of(obj: Any) -> ToolSpec | None:
    """The ToolSpec of a function marked with @tool, else None."""
    spec = getattr(obj, _MARK, None)
    return spec if isinstance(spec, ToolSpec) else None


def tools_in_module(module: types.ModuleType) -> dict[str, ToolSpec]:
    """Every @tool function defined in or imported into a module, by tool name."""
    found: dict[str, ToolSpec] = {}
    for value in vars(module).values():
        spec = spec_of(value)
        if spec is not None:
            found[spec.name] = spec
    return found


def spec_from_function(
    function: Callable[..., Any],
    *,
    name: str | None = None,
    writes: bool = False,
    undo: UndoSpec | None = None,
    irreversible: bool = False,
    retry_safe: bool = False,
    timeout: float | None = None,
    phrases: Iterable[str] = (),
    probe: ProbeSpec | None = None,
) -> ToolSpec:
    """Read a function's signature, hints and docstring into a ToolSpec."""
    tool_name = name or function.__name__
    try:
        hints = typing.get_type_hints(function, include_extras=True)  # Annotated kept
    except Exception as error:  # a hint that names something undefined
        raise ToolDefinitionError(f"tool {tool_name!r}: cannot read type hints: {error}") from error
    doc = inspect.getdoc(function) or ""
    described = _param_descriptions(doc)
    params: list[Param] = []
    takes_key = False
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise ToolDefinitionError(
                f"tool {tool_name!r}: *args and **kwargs cannot be described to a caller"
            )
        if parameter.name == IDEMPOTENCY_KEY_PARAM:
            takes_key = True
            continue
        required = parameter.default is inspect.Parameter.empty
        annotation = hints.get(parameter.name, Any)
        try:
            param = Param(
                name=parameter.name,
                annotation=annotation,
                required=required,
                default=None if required else parameter.default,
                description=described.get(parameter.name, ""),
            )
        except (PydanticSchemaGenerationError, PydanticUserError) as error:
            raise ToolDefinitionError(
                texts.unchecked_parameter(tool_name, parameter.name, annotation, error)
            ) from None
        params.append(param)
    return ToolSpec(
        name=tool_name,
        func=function,
        description=doc,
        params=tuple(params),
        writes=writes,
        undo=undo,
        irreversible=irreversible,
        retry_safe=retry_safe,
        takes_idempotency_key=takes_key,
        timeout=timeout,
        phrases=check_phrases(tool_name, phrases),
        probe=probe,
    )


_PHRASE_WORD = re.compile(r"[^\W\d_]")
# A parameter in a declared phrase: "send {amount} from {source} to {target}". The word
# before it (a role word of the turn's grammar: "from", "to", "de", "para") names that
# parameter in a turn, as a docstring's "from the source account" does (selector/
# vocabulary.py).
PLACEHOLDER = re.compile(r"\{([^{}\s]*)\}")


def check_phrases(tool_name: str, phrases: object) -> tuple[str, ...]:
    """A tool's declared phrases, each a text with a word in it, its spaces made single;
    a `ToolDefinitionError` for anything else (a lone string is one phrase's letters)."""
    if isinstance(phrases, str) or not isinstance(phrases, Iterable):
        raise ToolDefinitionError(texts.phrases_not_a_list(tool_name, phrases))
    checked: list[str] = []
    for phrase in phrases:
        if not isinstance(phrase, str) or not _PHRASE_WORD.search(PLACEHOLDER.sub(" ", phrase)):
            raise ToolDefinitionError(texts.phrase_without_words(tool_name, phrase))
        checked.append(" ".join(phrase.split()))
    return tuple(checked)


def _check_phrase_parameters(tool_name: str, phrases: Sequence[str], params: Sequence[str]) -> None:
    """Each `{name}` of a phrase is one of the tool's parameters, named once."""
    for phrase in phrases:
        named = PLACEHOLDER.findall(phrase)
        for name in named:
            if name not in params or name == IDEMPOTENCY_KEY_PARAM:
                shown = [p for p in params if p != IDEMPOTENCY_KEY_PARAM]
                raise ToolDefinitionError(
                    texts.phrase_names_no_parameter(tool_name, phrase, name, shown)
                )
            if named.count(name) > 1:
                raise ToolDefinitionError(
                    texts.phrase_names_parameter_twice(tool_name, phrase, name)
                )


def type_schema(annotation: Any) -> dict[str, Any]:
    """The JSON schema of one Python type hint (see boundary.py)."""
    return ParamType(annotation).schema()


def _strip_optional(annotation: Any) -> Any:
    """The hint less Optional[...] and Annotated[...]'s constraints."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _strip_optional(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return _strip_optional(members[0])
    return annotation


def _is_jsonable(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


_ARG_LINE = re.compile(r"^\s*(?::param\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:\s*(.+)$")


def _param_descriptions(doc: str) -> dict[str, str]:
    """Argument descriptions from a Google-style 'Args:' section or ':param x:' lines."""
    found: dict[str, str] = {}
    in_args = False
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.lower() in ("args:", "arguments:", "parameters:"):
            in_args = True
            continue
        if in_args and stripped.endswith(":") and not line.startswith((" ", "\t")):
            in_args = False
        if in_args or stripped.startswith(":param"):
            match = _ARG_LINE.match(stripped)
            if match:
                found[match.group(1)] = match.group(2).strip()
    return found
