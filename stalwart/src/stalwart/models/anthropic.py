"""Anthropic's Messages API with tools, through the official `anthropic` client.

Only `registry.load_model` imports this module, after checking the extra is installed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
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
from .options import ANTHROPIC_DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS

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


# Thinking blocks as the next request must carry them back: their fields, by type.
THINKING_BLOCKS: dict[str, tuple[str, ...]] = {
    "thinking": ("type", "thinking", "signature"),
    "redacted_thinking": ("type", "data"),
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
            params["system"] = [{"type": "text", "text": request.system}]
        if request.tools:
            params["tools"] = wire_tools(request.tools)
            if not request.allow_calls:
                params["tool_choice"] = {"type": "none"}
        # No temperature: the Messages API takes none (check_options refuses one at load).
        if request.thinking_budget is not None:
            params["thinking"] = {"type": "enabled", "budget_tokens": request.thinking_budget}
        mark_cache_breakpoints(params)
        on_text = request.on_text
        if on_text is None:
            message = self._ask(lambda: self._client.messages.create(**params))
        else:
            message = self._ask(lambda: self._streamed(params, on_text))
        return self._read(read_message, message)

    def _streamed(self, params: dict[str, Any], on_text: Callable[[str], None]) -> Any:
        """One streamed request (server-sent events), its text handed on as it comes; the
        message the client assembles from the events is read like any answer."""
        so_far = ""
        with self._client.messages.stream(**params) as stream:
            for text in stream.text_stream:
                so_far += text
                on_text(so_far)
            return stream.get_final_message()

    def _status_detail(self, error: Any) -> str:
        return str(error.api_message or error.message)


# Prompt caching: the tools, the system prompt and the history are sent again on every ask
# of a run, so each is marked as a cache breakpoint (the API allows four); the next ask
# reads that prefix from the cache at a tenth of the input price. Below the model's
# minimum cacheable length the API just does not cache, and charges as usual.
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}


def mark_cache_breakpoints(params: dict[str, Any]) -> None:
    """Mark the last tool, the system prompt and the last block of the history as cached."""
    if params.get("tools"):
        params["tools"][-1]["cache_control"] = EPHEMERAL
    if params.get("system"):
        params["system"][-1]["cache_control"] = EPHEMERAL
    if params["messages"] and params["messages"][-1]["content"]:
        params["messages"][-1]["content"][-1]["cache_control"] = EPHEMERAL


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
    # Thinking blocks first and unchanged: the API checks their signatures.
    blocks: list[dict[str, Any]] = [dict(block) for block in message.thinking]
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
    thinking: list[dict[str, Any]] = []
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text":
            if not isinstance(getattr(block, "text", None), str):
                raise ModelReplyInvalid(selector, f"a text block without text: {shown(block)}")
            texts.append(block.text)
        elif kind == "tool_use":
            calls.append(_tool_call(selector, block))
        elif kind in THINKING_BLOCKS:
            thinking.append({field: getattr(block, field) for field in THINKING_BLOCKS[kind]})
        elif not isinstance(kind, str):
            raise ModelReplyInvalid(selector, f"a content block without a type: {shown(block)}")
        # Other blocks (server tools) carry nothing a run acts on.
    return Completion(
        text="".join(texts) if texts else None,
        tool_calls=tuple(calls),
        usage=_usage(selector, usage),
        stop_reason=getattr(message, "stop_reason", None),
        stop=stop_of(getattr(message, "stop_reason", None), STOPS, bool(calls)),
        thinking=tuple(thinking),
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
    """The answer's tokens. The Messages API counts the input read from the cache and the
    input written to it apart from `input_tokens`; here all three are input."""
    given, taken = getattr(usage, "input_tokens", None), getattr(usage, "output_tokens", None)
    read = getattr(usage, "cache_read_input_tokens", None) or 0
    written = getattr(usage, "cache_creation_input_tokens", None) or 0
    if not (is_count(given) and is_count(taken) and is_count(read) and is_count(written)):
        raise ModelReplyInvalid(selector, f"the answer's usage cannot be read: {shown(usage)}")
    return Usage(
        input_tokens=given + read + written,
        output_tokens=taken,
        cache_read_tokens=read,
        cache_write_tokens=written,
    )
