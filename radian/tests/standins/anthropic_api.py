"""A stand-in of the Anthropic Messages API on 127.0.0.1, as Claude Code speaks it.

Claude Code (ANTHROPIC_BASE_URL=<url>) sends `POST /v1/messages?beta=true` with
`"stream": true` and reads server-sent events (message_start, content_block_start/delta/stop,
message_delta, message_stop). Each request that carries tools (the agent's own turns) takes
the next scripted reply; other requests (titles, summaries) get a short text.

A reply is one of: `text(...)`, `bash(command)` (a tool_use of Claude Code's Bash tool),
`refusal()`, `error(status, type, message, headers)` (an HTTP error with the API's error body),
`hang()` (headers sent, then nothing until the stand-in stops).
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    kind: str  # text | tool_use | refusal | error | hang
    text: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    status: int = 200
    error_type: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    input_tokens: int = 1000
    output_tokens: int = 100
    sticky: bool = False  # answers every later request too (a credential that stays refused)


def text(value: str = "Done.", *, input_tokens: int = 1000, output_tokens: int = 100) -> Reply:
    return Reply("text", text=value, input_tokens=input_tokens, output_tokens=output_tokens)


def tool(name: str, tool_input: dict[str, Any], **tokens: int) -> Reply:
    """A tool_use of one of Claude Code's tools (Bash, Write, Read, ...)."""
    return Reply("tool_use", text=name, tool_input=tool_input, **tokens)  # type: ignore[arg-type]


def bash(command: str, *, timeout_ms: int | None = None, **tokens: int) -> Reply:
    tool_input: dict[str, Any] = {"command": command, "description": "run a command"}
    if timeout_ms is not None:
        tool_input["timeout"] = timeout_ms
    return tool("Bash", tool_input, **tokens)


def write(path: str, content: str, **tokens: int) -> Reply:
    return tool("Write", {"file_path": path, "content": content}, **tokens)


def refusal(value: str = "I can't help with that.") -> Reply:
    return Reply("refusal", text=value)


def error(
    status: int,
    error_type: str,
    message: str,
    headers: dict[str, str] | None = None,
    *,
    sticky: bool = False,
) -> Reply:
    return Reply(
        "error",
        text=message,
        status=status,
        error_type=error_type,
        headers=headers or {},
        sticky=sticky,
    )


def hang() -> Reply:
    return Reply("hang")


class AnthropicStandIn:
    """Serve scripted replies; `requests` keeps every request body the CLI sent."""

    def __init__(self, replies: list[Reply] | None = None) -> None:
        self.replies: list[Reply] = list(replies or [])
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> AnthropicStandIn:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def add(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def agent_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r.get("tools")]

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if not body.get("tools"):
                return text("A title")
            if not self.replies:
                return text("Done.")
            return self.replies[0] if self.replies[0].sticky else self.replies.pop(0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802
                stand_in.paths.append("GET " + self.path)
                self._json(
                    404,
                    {"type": "error", "error": {"type": "not_found_error", "message": "not here"}},
                )

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                stand_in.paths.append("POST " + self.path)
                if "count_tokens" in self.path:
                    self._json(200, {"input_tokens": 1000})
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                reply = stand_in._next(body)
                if reply.kind == "error":
                    self._json(
                        reply.status,
                        {
                            "type": "error",
                            "error": {"type": reply.error_type, "message": reply.text},
                        },
                        reply.headers,
                    )
                    return
                self._stream(body, reply)

            def _json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", f"req_{next(stand_in._ids)}")
                for name, value_ in (headers or {}).items():
                    self.send_header(name, value_)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body: dict[str, Any], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("request-id", f"req_{next(stand_in._ids)}")
                for name, value_ in reply.headers.items():
                    self.send_header(name, value_)
                self.end_headers()
                if reply.kind == "hang":
                    stand_in._stopping.wait()
                    return
                for event in _events(body, reply, next(stand_in._ids)):
                    chunk = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                    self.wfile.write(chunk.encode())
                    self.wfile.flush()
                self.close_connection = True

        return Handler


def _events(body: dict[str, Any], reply: Reply, number: int) -> Iterator[dict[str, Any]]:
    model = body.get("model", "claude-standin")
    usage = {
        "input_tokens": reply.input_tokens,
        "output_tokens": 1,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    yield {
        "type": "message_start",
        "message": {
            "id": f"msg_{number:04d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        },
    }
    stop_reason = "end_turn"
    if reply.kind == "tool_use":
        stop_reason = "tool_use"
        yield {
            "type": "content_block_start",
            "index": 0,
            "content_block": {
                "type": "tool_use",
                "id": f"toolu_{number:04d}",
                "name": reply.text,
                "input": {},
            },
        }
        yield {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": json.dumps(reply.tool_input)},
        }
    else:
        if reply.kind == "refusal":
            stop_reason = "refusal"
        yield {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "text", "text": ""},
        }
        yield {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": reply.text},
        }
    yield {"type": "content_block_stop", "index": 0}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": reply.output_tokens},
    }
    yield {"type": "message_stop"}
