"""Tools: the `@tool` decorator, a tool's spec, and the JSON schema of its arguments.

`spec.py` holds the decorator and the spec; `sources.py` where tools come from (`python:`
modules); `current.py` the call being sent now, as a tool reads it (`stalwart.current_call()`,
set by the engine around each send). The registration lints over an agent's catalogue are
`stalwart.verify.lints`.
"""

from __future__ import annotations

from ..errors import ToolDefinitionError
from .probe import ProbeSpec, parse_probe
from .spec import (
    IDEMPOTENCY_KEY_PARAM,
    Param,
    ToolSpec,
    UndoSpec,
    closest_tool,
    parse_undo,
    spec_from_function,
    spec_of,
    tool,
    tools_in_module,
    type_schema,
)

__all__ = [
    "IDEMPOTENCY_KEY_PARAM",
    "Param",
    "ProbeSpec",
    "ToolDefinitionError",
    "ToolSpec",
    "UndoSpec",
    "closest_tool",
    "parse_probe",
    "parse_undo",
    "spec_from_function",
    "spec_of",
    "tool",
    "tools_in_module",
    "type_schema",
]
