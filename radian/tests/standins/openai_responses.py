"""A stand-in of the OpenAI Responses API on 127.0.0.1, as the Codex CLI speaks it.

Codex (a model provider with `base_url = "<url>/v1"`, `wire_api = "responses"`) sends
`POST /v1/responses` with `"stream": true` and reads server-sent events (response.created,
response.output_item.added/done, response.output_text.delta, response.completed with the
turn's token usage). Each request takes the next scripted reply.
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
    kind: str  # text | shell | error | hang
    text: str = ""
    command: list[str] = field(default_factory=list)
    status: int = 200
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    input_tokens: int = 1000
    cached_tokens: int = 0
    output_tokens: int = 100
    sticky: bool = False


def text(value: str = "Done.", **tokens: int) -> Reply:
    return Reply("text", text=value, **tokens)  # type: ignore[arg-type]


def shell(command: str, **tokens: int) -> Reply:
    """A call of Codex's exec_command tool."""
    return Reply("shell", command=[command], **tokens)  # type: ignore[arg-type]


def error(
    status: int,
    body: dict[str, Any],
    headers: dict[str, str] | None = None,
    *,
    sticky: bool = False,
) -> Reply:
    return Reply("error", status=status, body=body, headers=headers or {}, sticky=sticky)


def hang() -> Reply:
    return Reply("hang")


class ResponsesStandIn:
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

    def __enter__(self) -> ResponsesStandIn:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
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
                self._json(404, {"error": {"message": "not here", "type": "not_found"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                stand_in.paths.append("POST " + self.path)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                reply = stand_in._next(body)
                if reply.kind == "error":
                    self._json(reply.status, reply.body, reply.headers)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if reply.kind == "hang":
                    stand_in._stopping.wait()
                    return
                for event in _events(body, reply, next(stand_in._ids)):
                    chunk = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                    self.wfile.write(chunk.encode())
                    self.wfile.flush()
                self.close_connection = True

            def _json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value_ in (headers or {}).items():
                    self.send_header(name, value_)
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _events(body: dict[str, Any], reply: Reply, number: int) -> Iterator[dict[str, Any]]:
    response_id = f"resp_{number:04d}"
    model = body.get("model", "gpt-standin")
    base = {"id": response_id, "object": "response", "model": model, "output": []}
    yield {"type": "response.created", "response": base | {"status": "in_progress"}}
    if reply.kind == "shell":
        item = {
            "type": "function_call",
            "id": f"fc_{number:04d}",
            "call_id": f"call_{number:04d}",
            "name": "exec_command",
            "arguments": json.dumps({"cmd": reply.command[0], "tty": False}),
            "status": "completed",
        }
        yield {"type": "response.output_item.added", "output_index": 0, "item": item}
        yield {"type": "response.output_item.done", "output_index": 0, "item": item}
    else:
        item_id = f"msg_{number:04d}"
        started = {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        yield {"type": "response.output_item.added", "output_index": 0, "item": started}
        yield {
            "type": "response.output_text.delta",
            "item_id": item_id,
            "output_index": 0,
            "content_index": 0,
            "delta": reply.text,
        }
        done = started | {
            "status": "completed",
            "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
        }
        yield {"type": "response.output_item.done", "output_index": 0, "item": done}
    usage = {
        "input_tokens": reply.input_tokens,
        "input_tokens_details": {"cached_tokens": reply.cached_tokens},
        "output_tokens": reply.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }
    yield {"type": "response.completed", "response": base | {"status": "completed", "usage": usage}}
