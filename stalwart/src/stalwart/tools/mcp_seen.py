"""What each MCP server's tools looked like when first seen, kept beside agent.yaml.

A server's annotations and schemas are its word, and can change between starts (the server
updated, or another one put under the same command): a tool that was a read and is now a
write, a tool that lost `idempotentHint`, a schema with a new field. The first load that
sees a tool writes its annotations and schemas to `<agent.yaml's stem>.mcp-seen.json`;
every later load compares what the server lists with what was seen first and marks the
difference on the tool's spec (`extra["mcp"]["changed"]`), which the lint
`mcp_tool_changed` and `stalwart verify`'s QG015 report. Nothing is changed silently: to
accept a change, delete the tool's entry (or the file) and load again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import texts
from .mcp import McpServer, McpToolSpec
from .spec import ToolSpec

SEEN_SUFFIX = ".mcp-seen.json"
FORMAT = 1


def seen_path(source: Path) -> Path:
    """Where the tools of agent.yaml `source`'s servers were written when first seen."""
    return source.with_name(f"{source.stem}{SEEN_SUFFIX}")


def described(spec: McpToolSpec) -> dict[str, Any]:
    """What is kept of a tool: its annotations and its schemas, as JSON."""
    kept = {
        "annotations": dict(spec.hints),
        "input_schema": spec.input_schema,
        "output_schema": spec.output_schema,
    }
    loaded: dict[str, Any] = json.loads(json.dumps(kept, sort_keys=True, default=str))
    return loaded


def changes(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """What differs, as a person reads it: `readOnlyHint true -> false`, `its input schema`."""
    found: list[str] = []
    was, is_ = before.get("annotations") or {}, now.get("annotations") or {}
    for hint in sorted(set(was) | set(is_)):
        if was.get(hint) != is_.get(hint):
            found.append(texts.mcp_hint_changed(hint, was.get(hint), is_.get(hint)))
    for part in ("input_schema", "output_schema"):
        if before.get(part) != now.get(part):
            found.append(texts.MCP_SCHEMA_CHANGED[part])
    return found


def compare_with_first_seen(
    source: Path, server: McpServer, specs: Mapping[str, ToolSpec]
) -> dict[str, ToolSpec]:
    """The server's specs, each marked with what changed since it was first seen; a tool
    seen for the first time is written down."""
    path = seen_path(source)
    seen = _read(path)
    tools: dict[str, Any] = seen["servers"].setdefault(server.describe(), {})
    marked: dict[str, ToolSpec] = {}
    new = False
    for name, spec in specs.items():
        if not isinstance(spec, McpToolSpec):
            marked[name] = spec
            continue
        now = described(spec)
        before = tools.get(spec.remote_name)
        if before is None:
            tools[spec.remote_name] = now
            new = True
            marked[name] = spec
            continue
        changed = changes(before, now)
        if changed:
            mcp = {**spec.extra.get("mcp", {}), "changed": tuple(changed), "seen": str(path)}
            spec = dataclasses.replace(spec, extra={**spec.extra, "mcp": mcp})
        marked[name] = spec
    if new:
        _write(path, seen)
    return marked


def changed(spec: ToolSpec) -> tuple[str, ...]:
    """What changed in an MCP tool since its server first listed it (empty: nothing)."""
    said = spec.extra.get("mcp")
    return tuple(said.get("changed", ())) if isinstance(said, Mapping) else ()


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"format": FORMAT, "servers": {}}
    except (OSError, ValueError):
        # Unreadable: start again rather than refuse the agent; the next write replaces it.
        return {"format": FORMAT, "servers": {}}
    if not isinstance(data, dict) or not isinstance(data.get("servers"), dict):
        return {"format": FORMAT, "servers": {}}
    return data


def _write(path: Path, seen: Mapping[str, Any]) -> None:
    """Atomically: a reader never sees half a file."""
    text = json.dumps(seen, indent=2, sort_keys=True) + "\n"
    with contextlib.suppress(OSError):  # a read-only folder: nothing pinned, nothing lost
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
