"""A write's probe: a read that says, when the write's outcome is in doubt, what it finds.

`probe: get_charge` under a write in agent.yaml, or `@tool(writes=True,
probe="get_charge")`, names the read; `probe: {tool: get_charge, args: {order:
$args.order, key: $key}}` binds its arguments explicitly, as an undo's are bound:
`$args.<path>` is an argument of the write (the path's syntax is tools/paths.py's) and
`$key` the key the write was sent under. An argument the bindings do not name is bound
by name from the write's arguments; a probe that takes an `idempotency_key` gets the
write's key there. There is no `$result`: a write in doubt returned nothing.

A probe is checked when the catalogue is built (config/catalogue.py: it must exist, be
a read, and every binding name a real parameter on both sides) and linted
(verify/lints.py). It is asked by the engine when the write's outcome is in doubt
(_engine/probe.py), once, before the person is asked; its answer is evidence shown under
the question, never an answer to it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import texts
from ..errors import ToolDefinitionError

if TYPE_CHECKING:
    from .spec import ToolSpec

KEY_SOURCE = "$key"
# `$args.<path>` or `$key`; the path's syntax is tools/paths.py's.
_BINDING = re.compile(
    r"^(?:\$(args)\.([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*|\[(?:\*|[0-9]+)\])*)"
    r"|\$(key))$"
)


@dataclass(frozen=True)
class ProbeSpec:
    """The read that checks a write in doubt: its name and, optionally, explicit bindings
    ({argument of the probe: '$args.<path>' or '$key'})."""

    tool: str
    args: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        for name, source in (self.args or {}).items():
            if not isinstance(source, str) or not _BINDING.match(source):
                raise ToolDefinitionError(texts.probe_bad_binding(self.tool, name, source))

    @staticmethod
    def parse_source(source: str) -> tuple[str, str]:
        """'$args.order' as ('args', 'order'); '$key' as ('key', '')."""
        match = _BINDING.match(source)
        if match is None:
            raise ToolDefinitionError(texts.probe_bad_binding("probe", "?", source))
        if match.group(3):
            return "key", ""
        return "args", match.group(2)

    def to_record(self) -> dict[str, Any]:
        return {"tool": self.tool, "args": dict(self.args) if self.args is not None else None}


def parse_probe(probe: str | ProbeSpec | Mapping[str, Any] | None) -> ProbeSpec | None:
    """Accept a probe as a tool name, a ProbeSpec, or {'tool': ..., 'args': {...}}."""
    if probe is None or isinstance(probe, ProbeSpec):
        return probe
    if isinstance(probe, str):
        return ProbeSpec(tool=probe)
    if isinstance(probe, Mapping):
        unknown = set(probe) - {"tool", "args"}
        if unknown or not isinstance(probe.get("tool"), str):
            raise ToolDefinitionError(texts.probe_bad_shape(probe))
        args = probe.get("args")
        if args is not None and not isinstance(args, Mapping):
            raise ToolDefinitionError(texts.probe_bad_shape(probe))
        return ProbeSpec(tool=probe["tool"], args=dict(args) if args is not None else None)
    raise ToolDefinitionError(texts.probe_bad_shape(probe))


@dataclass(frozen=True)
class ProbeBinding:
    """Where one argument of a probe comes from: '$args.<path>', '$key', or nowhere."""

    argument: str
    source: str | None  # None: bound to nothing


def probe_bindings(write: ToolSpec, probe: ToolSpec) -> list[ProbeBinding]:
    """How each argument of `probe` is bound from `write`: as said explicitly, else by
    name from the write's arguments; a required argument neither binds is unbound, an
    optional one is left to its default (and not listed)."""
    explicit = (write.probe.args if write.probe else None) or {}
    bindings: list[ProbeBinding] = []
    for param in probe.params:
        if param.name in explicit:
            bindings.append(ProbeBinding(param.name, explicit[param.name]))
        elif write.param(param.name) is not None:
            bindings.append(ProbeBinding(param.name, f"$args.{param.name}"))
        elif param.required:
            bindings.append(ProbeBinding(param.name, None))
    return bindings
