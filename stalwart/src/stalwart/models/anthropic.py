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
    Stop,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    Usage,
    UserMessage,
    stop_of,
)
from .official import OfficialClientAdapter, is_count, shown

# The Messages API requires max_tokens on every request.
DEFAULT_MAX_TOKENS = 4096

# The Messages API's stop reasons in stalwart's words. `pause_turn` (a server tool's long
# turn) is not here: stalwart sends no server tools, and an unknown reason is read by
# what came (tool calls or not).
STOPS: dict[str, Stop] = {
    "end_turn": Stop.END,
    "stop_sequence": Stop.END,
    "tool_use": Stop.TOOL_USE,
    "max_tokens": Stop.TRUNCATED,
    "model_context_window_exceeded": Stop.TRUNCATED,
    "refusal": Stop.REFUSED,
}


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
        return self._read(read_message, message)

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
    """A Messages API answer as a Completion; text blocks joined, tool_use blocks in order.

    The client does not validate a 200 body (it builds the message without checking), so
    a body that is not a message -- `{}`, a gateway's error body sent with status 200 --
    is caught here, field by field, as `ModelReplyInvalid`: never a TypeError later.
    """
    if not isinstance(message, anthropic.types.Message):
        raise ModelReplyInvalid(selector, f"expected a message, got {type(message).__name__}")
    content = getattr(message, "content", None)
    usage = getattr(message, "usage", None)
    if getattr(message, "type", None) != "message" or not isinstance(content, list):
        raise ModelReplyInvalid(selector, f"the answer is not a message: {shown(message)}")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text":
            if not isinstance(getattr(block, "text", None), str):
                raise ModelReplyInvalid(selector, f"a text block without text: {shown(block)}")
            texts.append(block.text)
        elif kind == "tool_use":
            calls.append(_tool_call(selector, block))
        elif not isinstance(kind, str):
            raise ModelReplyInvalid(selector, f"a content block without a type: {shown(block)}")
        # Other blocks (thinking, server tools) carry nothing a run acts on.
    return Completion(
        text="".join(texts) if texts else None,
        tool_calls=tuple(calls),
        usage=_usage(selector, usage),
        stop_reason=getattr(message, "stop_reason", None),
        stop=stop_of(getattr(message, "stop_reason", None), STOPS, bool(calls)),
    )


def _tool_call(selector: str, block: Any) -> ToolCall:
    call_id, name = getattr(block, "id", None), getattr(block, "name", None)
    if not isinstance(call_id, str) or not isinstance(name, str):
        raise ModelReplyInvalid(selector, f"a tool_use block without id or name: {shown(block)}")
    if not isinstance(getattr(block, "input", None), dict):
        raise ModelReplyInvalid(
            selector,
            f"tool call {call_id} ({name}): arguments are not a JSON object: "
            f"{getattr(block, 'input', None)!r}",
        )
    return ToolCall(id=call_id, name=name, arguments=block.input)


def _usage(selector: str, usage: Any) -> Usage:
    given, taken = getattr(usage, "input_tokens", None), getattr(usage, "output_tokens", None)
    if not (is_count(given) and is_count(taken)):
        raise ModelReplyInvalid(selector, f"the answer's usage cannot be read: {shown(usage)}")
    return Usage(input_tokens=given, output_tokens=taken)
