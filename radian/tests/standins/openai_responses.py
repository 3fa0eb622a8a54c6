"""A stand-in of the OpenAI Responses API on 127.0.0.1, as the Codex CLI speaks it.

Codex (a model provider with `base_url = "<url>/v1"`, `wire_api = "responses"`) sends
`POST /v1/responses` with `"stream": true` and reads server-sent events (response.created,
response.output_item.added/done, response.output_text.delta, response.completed with the
turn's token usage). Each request takes the next scripted reply.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from standins.http import Exchange, StandInServer
from standins.script import Script


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


class ResponsesStandIn(StandInServer):
    def __init__(self, replies: list[Reply] | None = None) -> None:
        super().__init__()
        self.script = Script(replies or [], text("Done."))
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)

    @property
    def replies(self) -> list[Reply]:
        return self.script.replies

    def __enter__(self) -> ResponsesStandIn:
        self.start()
        return self

    def respond(self, exchange: Exchange) -> None:
        if exchange.method == "GET":
            exchange.json(404, {"error": {"message": "not here", "type": "not_found"}})
            return
        self.requests.append(exchange.body)
        reply = self.script.take()
        if reply.kind == "error":
            exchange.json(reply.status, reply.body, reply.headers)
        elif reply.kind == "hang":
            exchange.hang(self.stopping, reply.headers)
        else:
            exchange.events(_events(exchange.body, reply, next(self._ids)), reply.headers)


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
