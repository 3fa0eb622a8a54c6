"""The `mcp:` tool source: the tools of a Model Context Protocol server, as stalwart tools.

A server is started over stdio (`command:`) or reached over streamable HTTP (`url:`),
with the official `mcp` SDK as the client (`pip install stalwart[mcp]`). stalwart is
synchronous, the SDK is not: each server is held by an `McpConnection`, which owns an
event loop on a background thread; each tool's `func` is a synchronous call into it.

What a server's tool becomes:

- its name, with the source's `prefix:` before it; its description for the selector and
  the model; its `inputSchema` as the arguments' schema (`McpToolSpec.json_schema`);
- `readOnlyHint: true` a read, anything else a write; `idempotentHint: true` retry-safe;
  `destructiveHint` kept in `extra["mcp"]` and said in the confirmation. Hints are the
  server's word, not stalwart's: the lint `mcp_hint_only` says when a write's retry
  safety comes from a hint alone, and agent.yaml's facts under the tool's name override
  them (`retry_safe:`, `undo:`, `irreversible:`);
- its result: `structuredContent` when the server gives it, else its text parsed as
  JSON, else the text; `isError: true` raises `McpToolError` (a tool failure).

The guarantees: the call's idempotency key travels in the request's `_meta` under
`IDEMPOTENCY_META_KEY` ("io.stalwart/idempotency-key"), for servers that honour it. A
connection lost or a timeout while `tools/call` waits for its answer raises `Ambiguous`
(in doubt: resent under the same key if retry-safe, else a person is asked). A server
found dead before a call is sent is started again, and the call goes to the new one.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stalwart.errors import Ambiguous, McpToolError, ToolSourceError

from .spec import Param, ToolSpec

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

IDEMPOTENCY_META_KEY = "io.stalwart/idempotency-key"
DEFAULT_TIMEOUT = 60.0  # seconds a tools/call may wait for its answer
_START_TIMEOUT = 30.0
_PING_TIMEOUT = 5.0

# JSON schema types as the Python hints the typed boundary checks.
_JSON_TYPES: Mapping[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list[Any],
    "object": dict[str, Any],
}


@dataclass(frozen=True)
class McpServer:
    """One `mcp:` entry of agent.yaml, its `$NAME` values already read."""

    command: tuple[str, ...] = ()
    url: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    prefix: str = ""
    cwd: Path | None = None
    timeout: float = DEFAULT_TIMEOUT

    def describe(self) -> str:
        return self.url if self.url is not None else " ".join(self.command)


@dataclass(frozen=True)
class McpToolSpec(ToolSpec):
    """A tool of an MCP server: its schemas are the server's, not read from hints."""

    input_schema: Mapping[str, Any] = field(default_factory=dict)
    output_schema: Mapping[str, Any] | None = None
    remote_name: str = ""
    hints: Mapping[str, bool] = field(default_factory=dict)  # the server's annotations

    def json_schema(self) -> dict[str, Any]:
        schema = json.loads(json.dumps(dict(self.input_schema)))
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        return dict(schema)


def result_schema(spec: ToolSpec) -> Mapping[str, Any]:
    """The JSON schema of what a tool returns, where its source says one ({} if not)."""
    if isinstance(spec, McpToolSpec) and spec.output_schema is not None:
        return spec.output_schema
    return {}


class McpConnection:
    """A session with one MCP server, held on a background event loop."""

    def __init__(self, server: McpServer) -> None:
        self.server = server
        self.starts = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name=f"mcp {server.describe()}", daemon=True
        )
        self._thread.start()
        self._lock = threading.Lock()
        self._session: ClientSession | None = None
        self._held: concurrent.futures.Future[None] | None = None
        self._stop: asyncio.Event | None = None

    def start(self) -> list[Any]:
        """Connect (starting the server if it is a command) and list its tools."""
        with self._lock:
            self._open()
            listed: list[Any] = self._run(self._list_tools(), _START_TIMEOUT)
            return listed

    def call(self, name: str, args: Mapping[str, Any], key: str | None) -> Any:
        """tools/call, synchronously: the result's value, or the error its outcome says."""
        with self._lock:
            if not self._alive():
                self._reopen()
        future = asyncio.run_coroutine_threadsafe(self._call(name, dict(args), key), self._loop)
        try:
            result = future.result(timeout=self.server.timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            with self._lock:
                self._close()
            raise Ambiguous(
                f"{name}: no answer from the MCP server within {self.server.timeout:g}s"
            ) from None
        except Exception as error:
            if _is_protocol_refusal(error):
                raise McpToolError(f"{name}: the MCP server refused the call: {error}") from None
            with self._lock:
                self._close()
            raise Ambiguous(
                f"{name}: the connection to the MCP server was lost during the call "
                f"({type(error).__name__}: {error})"
            ) from None
        if result is _NOT_SENT:
            # The server died between calls: nothing was sent, so start it again and send.
            with self._lock:
                self._reopen()
            return self.call(name, args, key)
        return _value(name, result)

    def close(self) -> None:
        with self._lock:
            self._close()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._loop.close()

    # --- on the caller's thread, under the lock -----------------------------------

    def _alive(self) -> bool:
        return self._session is not None and self._held is not None and not self._held.done()

    def _reopen(self) -> None:
        self._close()
        try:
            self._open()
        except ToolSourceError as error:
            # Never sent: the in-doubt rules do not treat this as in doubt.
            raise McpToolError(str(error)) from None

    def _open(self) -> None:
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._held = asyncio.run_coroutine_threadsafe(self._hold(ready), self._loop)
        try:
            ready.result(timeout=_START_TIMEOUT)
        except Exception as error:
            self._close()
            raise ToolSourceError(
                f"the MCP server {self.server.describe()!r} cannot be started or reached: "
                f"{_cause(error)}"
            ) from None
        self.starts += 1

    def _close(self) -> None:
        stop, held = self._stop, self._held
        self._session = self._held = self._stop = None
        if stop is not None:
            self._loop.call_soon_threadsafe(stop.set)
        if held is not None:
            with contextlib.suppress(Exception):
                held.result(timeout=10)

    def _run(self, coroutine: Any, timeout: float) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=timeout)

    # --- on the loop's thread -----------------------------------------------------

    async def _hold(self, ready: concurrent.futures.Future[None]) -> None:
        from mcp.client.session import ClientSession

        stop = asyncio.Event()
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(await self._transport(stack))
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                self._session, self._stop = session, stop
                ready.set_result(None)
                await stop.wait()
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error if isinstance(error, Exception) else RuntimeError())
            if not isinstance(error, Exception):
                raise

    async def _transport(self, stack: contextlib.AsyncExitStack) -> Any:
        server = self.server
        if server.url is not None:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            # Ours to close: the SDK closes only a client it made itself.
            client = await stack.enter_async_context(
                create_mcp_http_client(headers=dict(server.headers))
            )
            return streamable_http_client(server.url, http_client=client)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        command, *args = server.command
        parameters = StdioServerParameters(
            command=command, args=args, env=dict(server.env) or None, cwd=server.cwd
        )
        return stdio_client(parameters)

    async def _list_tools(self) -> list[Any]:
        session = self._session
        assert session is not None
        tools: list[Any] = []
        cursor: str | None = None
        while True:
            from mcp_types import PaginatedRequestParams

            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            listed = await session.list_tools(params=params)
            tools.extend(listed.tools)
            cursor = listed.next_cursor
            if not cursor:
                return tools

    async def _call(self, name: str, args: dict[str, Any], key: str | None) -> Any:
        session = self._session
        if session is None:
            return _NOT_SENT
        try:
            await asyncio.wait_for(session.send_ping(), _PING_TIMEOUT)
        except Exception:
            return _NOT_SENT
        meta: Any = {IDEMPOTENCY_META_KEY: key} if key is not None else None
        return await session.call_tool(name, args, meta=meta)


_NOT_SENT = object()  # the session was found dead before the call left


def mcp_source(server: McpServer, connect: Callable[[McpServer], McpConnection] | None = None
               ) -> tuple[McpConnection, dict[str, ToolSpec]]:  # fmt: skip
    """Connect to the server and make a spec of each of its tools, under its prefixed name.

    ToolSourceError if the server cannot be started or reached, or lists a tool twice.
    """
    connection = (connect or McpConnection)(server)
    try:
        listed = connection.start()
    except ToolSourceError:
        connection.close()
        raise
    specs: dict[str, ToolSpec] = {}
    for listed_tool in listed:
        spec = tool_spec(server, connection, listed_tool)
        if spec.name in specs:
            connection.close()
            raise ToolSourceError(f"the MCP server lists {spec.name!r} twice")
        specs[spec.name] = spec
    return connection, specs


def tool_spec(server: McpServer, connection: McpConnection, listed: Any) -> McpToolSpec:
    """One listed tool (an SDK `Tool`) as a spec."""
    annotations = listed.annotations
    hints: dict[str, bool] = {}
    if annotations is not None:
        for attribute, hint in (
            ("read_only_hint", "readOnlyHint"),
            ("destructive_hint", "destructiveHint"),
            ("idempotent_hint", "idempotentHint"),
            ("open_world_hint", "openWorldHint"),
        ):
            value = getattr(annotations, attribute, None)
            if value is not None:
                hints[hint] = bool(value)
    schema: Mapping[str, Any] = listed.input_schema or {}
    remote = str(listed.name)

    def func(idempotency_key: str | None = None, **args: Any) -> Any:
        return connection.call(remote, args, idempotency_key)

    return McpToolSpec(
        name=f"{server.prefix}{remote}",
        func=func,
        description=listed.description or listed.title or remote,
        params=_params(schema),
        writes=not hints.get("readOnlyHint", False),
        retry_safe=hints.get("idempotentHint", False),
        takes_idempotency_key=True,
        extra={"mcp": {"server": server.describe(), "hints": dict(hints)}},
        input_schema=schema,
        output_schema=listed.output_schema,
        remote_name=remote,
        hints=hints,
    )


def destructive(spec: ToolSpec) -> bool:
    """Whether the server hinted that the tool destroys what it writes over."""
    return isinstance(spec, McpToolSpec) and spec.hints.get("destructiveHint", True)


def _params(schema: Mapping[str, Any]) -> tuple[Param, ...]:
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    params: list[Param] = []
    for name, described in properties.items():
        kind = described.get("type") if isinstance(described, Mapping) else None
        annotation = _JSON_TYPES.get(kind, Any) if isinstance(kind, str) else Any
        if name not in required:
            annotation = annotation | None if annotation is not Any else Any
        params.append(
            Param(
                name=name,
                annotation=annotation,
                required=name in required,
                default=described.get("default") if isinstance(described, Mapping) else None,
                description=str(described.get("description", ""))
                if isinstance(described, Mapping)
                else "",
            )
        )
    return tuple(params)


def _value(name: str, result: Any) -> Any:
    """A CallToolResult's value; McpToolError if the server says the tool failed."""
    texts = [item.text for item in result.content if getattr(item, "type", None) == "text"]
    if result.is_error:
        raise McpToolError(f"{name}: {' '.join(texts) or 'the tool reported an error'}")
    if result.structured_content is not None:
        return result.structured_content
    text = "\n".join(texts)
    try:
        return json.loads(text)
    except ValueError:
        return text


def _is_protocol_refusal(error: BaseException) -> bool:
    """A JSON-RPC error answer other than a lost connection: the server read the call
    and refused it (an unknown tool, invalid params), so it did not run."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

    return isinstance(error, MCPError) and error.code not in (CONNECTION_CLOSED, REQUEST_TIMEOUT)


def _cause(error: BaseException) -> str:
    """The innermost useful message of a start-up failure (task groups wrap them)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}"
