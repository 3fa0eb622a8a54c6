"""The radian worker's tools, each done through the ACP client (fs/*, terminal/*), after
asking the client's permission for an edit or a command: the client's policy decides."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import acp
from acp import schema

from radian.worker import texts
from radian.worker.models import ToolCall, ToolDefinition

OUTPUT_LIMIT = 100_000

_PATH = {"type": "string", "description": texts.PARAM_PATH}
TOOLS: tuple[ToolDefinition, ...] = (
    ToolDefinition(
        "read_file",
        texts.TOOL_READ,
        {"type": "object", "properties": {"path": _PATH}, "required": ["path"]},
    ),
    ToolDefinition(
        "write_file",
        texts.TOOL_WRITE,
        {
            "type": "object",
            "properties": {"path": _PATH, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    ),
    ToolDefinition(
        "edit_file",
        texts.TOOL_EDIT,
        {
            "type": "object",
            "properties": {
                "path": _PATH,
                "old_text": {"type": "string"},
                "new_text": {"type": "string"},
            },
            "required": ["path", "old_text", "new_text"],
        },
    ),
    ToolDefinition(
        "run_command",
        texts.TOOL_RUN,
        {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
    ),
)

# The ACP tool kind each tool reports (and asks permission for, when it is not a read).
KINDS: dict[str, schema.ToolKind] = {
    "read_file": "read",
    "write_file": "edit",
    "edit_file": "edit",
    "run_command": "execute",
}


@dataclass(frozen=True)
class ToolOutcome:
    content: str
    is_error: bool


class Refused(Exception):
    """The client did not allow it."""


class ToolRunner:
    """Runs the model's tool calls for one session, through the client connection."""

    def __init__(self, client: Any, session_id: str, cwd: Path) -> None:
        self._client = client
        self._session_id = session_id
        self._cwd = cwd

    async def run(self, call: ToolCall, report: Callable[[Any], Any]) -> ToolOutcome:
        kind: schema.ToolKind | None = KINDS.get(call.name)
        if kind is None:
            return ToolOutcome(texts.UNKNOWN_TOOL.format(name=call.name), True)
        path = call.arguments.get("path")
        locations = (
            [schema.ToolCallLocation(path=str(self._absolute(path)))]
            if isinstance(path, str)
            else []
        )
        await report(
            acp.start_tool_call(
                call.id,
                _title(call),
                kind=kind,
                status="in_progress",
                locations=locations,
                raw_input=call.arguments,
            )
        )
        try:
            if kind != "read":
                await self._ask(call, kind, locations)
            content = await getattr(self, f"_{call.name}")(call.arguments)
            outcome = ToolOutcome(content, False)
        except Refused as refused:
            outcome = ToolOutcome(texts.REFUSED.format(reason=refused), True)
        except (KeyError, TypeError):
            needed = ", ".join(TOOLS_BY_NAME[call.name].parameters["required"])
            outcome = ToolOutcome(texts.BAD_ARGUMENTS.format(name=call.name, needed=needed), True)
        except acp.RequestError as error:
            outcome = ToolOutcome(texts.CLIENT_ERROR.format(error=_error_text(error)), True)
        await report(
            acp.update_tool_call(
                call.id,
                status="failed" if outcome.is_error else "completed",
                content=[acp.tool_content(acp.text_block(outcome.content[:2000]))],
            )
        )
        return outcome

    async def _ask(
        self, call: ToolCall, kind: schema.ToolKind, locations: list[schema.ToolCallLocation]
    ) -> None:
        raw_input = dict(call.arguments)
        if kind == "execute":
            raw_input.setdefault("cwd", str(self._cwd))
        answer = await self._client.request_permission(
            session_id=self._session_id,
            tool_call=schema.ToolCallUpdate(
                tool_call_id=call.id,
                title=_title(call),
                kind=kind,
                locations=locations or None,
                raw_input=raw_input,
            ),
            options=[
                schema.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                schema.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ],
        )
        outcome = answer.outcome
        if getattr(outcome, "outcome", None) != "selected" or outcome.option_id != "allow":
            raise Refused(f"{_title(call)} was not allowed")

    async def _read_file(self, arguments: Mapping[str, Any]) -> str:
        response = await self._client.read_text_file(
            session_id=self._session_id, path=str(self._absolute(arguments["path"]))
        )
        return str(response.content)

    async def _write_file(self, arguments: Mapping[str, Any]) -> str:
        content = str(arguments["content"])
        await self._client.write_text_file(
            session_id=self._session_id,
            path=str(self._absolute(arguments["path"])),
            content=content,
        )
        return texts.WROTE.format(path=arguments["path"], size=len(content))

    async def _edit_file(self, arguments: Mapping[str, Any]) -> str:
        path = str(self._absolute(arguments["path"]))
        old, new = str(arguments["old_text"]), str(arguments["new_text"])
        current = (
            await self._client.read_text_file(session_id=self._session_id, path=path)
        ).content
        count = current.count(old) if old else 0
        if count == 0:
            return texts.EDIT_NOT_FOUND.format(path=arguments["path"])
        if count > 1:
            return texts.EDIT_NOT_UNIQUE.format(count=count, path=arguments["path"])
        await self._client.write_text_file(
            session_id=self._session_id, path=path, content=current.replace(old, new, 1)
        )
        return texts.EDITED.format(path=arguments["path"])

    async def _run_command(self, arguments: Mapping[str, Any]) -> str:
        created = await self._client.create_terminal(
            session_id=self._session_id,
            command="sh",
            args=["-c", str(arguments["command"])],
            cwd=str(self._cwd),
            output_byte_limit=OUTPUT_LIMIT,
        )
        terminal_id = created.terminal_id
        try:
            exited = await self._client.wait_for_terminal_exit(
                session_id=self._session_id, terminal_id=terminal_id
            )
            output = await self._client.terminal_output(
                session_id=self._session_id, terminal_id=terminal_id
            )
        finally:
            await self._client.release_terminal(
                session_id=self._session_id, terminal_id=terminal_id
            )
        if exited.signal:
            return texts.COMMAND_KILLED.format(signal=exited.signal, output=output.output)
        return texts.COMMAND_DONE.format(code=exited.exit_code, output=output.output)

    def _absolute(self, path: str) -> Path:
        candidate = Path(path)
        return candidate if candidate.is_absolute() else self._cwd / candidate


TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}


def _title(call: ToolCall) -> str:
    if call.name == "run_command":
        return f"run_command: {call.arguments.get('command', '')}"[:120]
    return f"{call.name}: {call.arguments.get('path', '')}"


def _error_text(error: acp.RequestError) -> str:
    data = getattr(error, "data", None)
    if isinstance(data, Mapping) and isinstance(data.get("error"), str):
        return str(data["error"])
    return str(error)
