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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from standins.http import Exchange, StandInServer
from standins.script import Script


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


class AnthropicStandIn(StandInServer):
    """Serve scripted replies; `requests` keeps every request body the CLI sent."""

    def __init__(
        self,
        replies: list[Reply] | None = None,
        *,
        agent: Callable[[str], list[Reply]] | None = None,
    ) -> None:
        """`agent`, when given, plays an agent that reads its prompt: at the first request
        with tools, it is given the text of the user's messages (the brief, as the CLI sent
        it) and returns the replies that follow."""
        super().__init__()
        self.script = Script(replies or [], text("Done."))
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._agent = agent

    @property
    def replies(self) -> list[Reply]:
        return self.script.replies

    def __enter__(self) -> AnthropicStandIn:
        self.start()
        return self

    def add(self, *replies: Reply) -> None:
        self.script.add(*replies)

    def agent_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r.get("tools")]

    def respond(self, exchange: Exchange) -> None:
        request_id = {"request-id": f"req_{next(self._ids)}"}
        if exchange.method == "GET":
            not_found = {"type": "not_found_error", "message": "not here"}
            exchange.json(404, {"type": "error", "error": not_found}, request_id)
            return
        if "count_tokens" in exchange.path:
            exchange.json(200, {"input_tokens": 1000}, request_id)
            return
        body: dict[str, Any] = exchange.body
        self.requests.append(body)
        if body.get("tools") and self._agent is not None:
            agent, self._agent = self._agent, None
            self.script.add(*agent(user_text(body)))
        # Titles and summaries carry no tools: they get a short text and leave the script.
        reply = self.script.take() if body.get("tools") else text("A title")
        headers = request_id | reply.headers
        if reply.kind == "error":
            error_body = {"type": reply.error_type, "message": reply.text}
            exchange.json(reply.status, {"type": "error", "error": error_body}, headers)
        elif reply.kind == "hang":
            exchange.hang(self.stopping, headers)
        else:
            exchange.events(_events(body, reply, next(self._ids)), headers)


def user_text(body: dict[str, Any]) -> str:
    """The text of a request's user messages, joined (a message's content is a string or
    a list of blocks)."""
    parts: list[str] = []
    for message in body.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(block.get("text", "") for block in content if isinstance(block, dict))
    return "\n".join(parts)


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
