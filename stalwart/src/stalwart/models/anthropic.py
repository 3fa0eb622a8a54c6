"""Anthropic's Messages API with tools, through the official `anthropic` client.

Only `registry.load_model` imports this module, after checking the extra is installed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import anthropic

from ..errors import ModelReplyInvalid
from .base import (
    AssistantMessage,
    Completion,
    Message,
    Request,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from .official import OfficialClientAdapter

# The Messages API requires max_tokens on every request.
DEFAULT_MAX_TOKENS = 4096


class AnthropicAdapter(OfficialClientAdapter):
    sdk = anthropic
    client_class = anthropic.Anthropic

    def send(self, request: Request) -> Completion:
        params: dict[str, Any] = {
            "model": self._model,
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": wire_messages(request.messages),
        }
        if request.system:
            params["system"] = request.system
        if request.tools:
            params["tools"] = wire_tools(request.tools)
        message = self._ask(lambda: self._client.messages.create(**params))
        return read_message(self._selector, message)

    def _status_detail(self, error: Any) -> str:
        return str(error.api_message or error.message)


def wire_tools(tools: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    return [
        {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
    ]


def wire_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Provider-neutral messages as Messages API turns.

    Tool results go back as `tool_result` blocks in a user turn, and the API wants all
    the results of one assistant turn (parallel calls) in the next user turn: so
    consecutive blocks of the same role are merged into one turn.
    """
    turns: list[dict[str, Any]] = []
    for message in messages:
        role, blocks = _blocks(message)
        if not blocks:
            continue  # an empty answer; the API refuses a turn with no content
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def _blocks(message: Message) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(message, UserMessage):
        return "user", [{"type": "text", "text": message.text}]
    if isinstance(message, ToolResultMessage):
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.call_id,
            "content": message.content,
        }
        if message.is_error:
            block["is_error"] = True
        return "user", [block]
    assert isinstance(message, AssistantMessage)
    blocks: list[dict[str, Any]] = []
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    blocks.extend(
        {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
        for c in message.tool_calls
    )
    return "assistant", blocks


def read_message(selector: str, message: object) -> Completion:
    """A Messages API answer as a Completion; text blocks joined, tool_use blocks in order."""
    if not isinstance(message, anthropic.types.Message):
        raise ModelReplyInvalid(selector, f"expected a message, got {type(message).__name__}")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in message.content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            if not isinstance(block.input, dict):
                raise ModelReplyInvalid(
                    selector,
                    f"tool call {block.id} ({block.name}): arguments are not a JSON object: "
                    f"{block.input!r}",
                )
            calls.append(ToolCall(id=block.id, name=block.name, arguments=block.input))
        # Other blocks (thinking, server tools) carry nothing a run acts on.
    usage = Usage(
        input_tokens=message.usage.input_tokens, output_tokens=message.usage.output_tokens
    )
    return Completion(
        text="".join(texts) if texts else None,
        tool_calls=tuple(calls),
        usage=usage,
        stop_reason=message.stop_reason,
    )
