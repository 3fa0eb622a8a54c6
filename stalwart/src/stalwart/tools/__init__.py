"""Tools: the `@tool` decorator, a tool's spec, and the JSON schema of its arguments.

`spec.py` holds the decorator and the spec; `sources.py` where tools come from (`python:`
modules); `lints.py` the registration lints over an agent's catalogue (imported on its
own: it reads the config, which reads the tools).
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
