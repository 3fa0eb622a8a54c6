"""OpenAI's Chat Completions with tool calling, through the official `openai` client.

Only `registry.load_model` imports this module, after checking the extra is installed.
The same adapter serves any server that speaks Chat Completions, through base_url.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import openai

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


class OpenAIAdapter(OfficialClientAdapter):
    sdk = openai
    client_class = openai.OpenAI

    def send(self, request: Request) -> Completion:
        params: dict[str, Any] = {
            "model": self._model,
            "messages": wire_messages(request.messages, request.system),
        }
        if request.tools:
            params["tools"] = wire_tools(request.tools)
        if request.max_tokens is not None:
            params["max_completion_tokens"] = request.max_tokens
        completion = self._ask(lambda: self._client.chat.completions.create(**params))
        return read_completion(self._selector, completion)


def wire_tools(tools: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


def wire_messages(messages: Sequence[Message], system: str | None) -> list[dict[str, Any]]:
    """Provider-neutral messages as Chat Completions messages, the system prompt first."""
    wire: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if isinstance(message, UserMessage):
            wire.append({"role": "user", "content": message.text})
        elif isinstance(message, ToolResultMessage):
            # Chat Completions has no error flag on a tool result; the content says it.
            wire.append(
                {"role": "tool", "tool_call_id": message.call_id, "content": message.content}
            )
        else:
            assert isinstance(message, AssistantMessage)
            if not message.text and not message.tool_calls:
                continue  # an empty answer; the API refuses an assistant message with neither
            turn: dict[str, Any] = {"role": "assistant", "content": message.text}
            if message.tool_calls:
                turn["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                    }
                    for c in message.tool_calls
                ]
            wire.append(turn)
    return wire


def read_completion(selector: str, completion: object) -> Completion:
    """The first choice as a Completion; tool calls in order, their arguments parsed."""
    if not isinstance(completion, openai.types.chat.ChatCompletion) or not completion.choices:
        raise ModelReplyInvalid(
            selector, f"expected a chat completion with a choice: {completion!r}"
        )
    choice = completion.choices[0]
    calls = tuple(_tool_call(selector, call) for call in choice.message.tool_calls or ())
    usage = (
        Usage(
            input_tokens=completion.usage.prompt_tokens,
            output_tokens=completion.usage.completion_tokens,
        )
        if completion.usage is not None
        else Usage()
    )
    return Completion(
        # A refusal is the model's answer to the person, in place of content.
        text=choice.message.content or choice.message.refusal or None,
        tool_calls=calls,
        usage=usage,
        stop_reason=choice.finish_reason,
    )


def _tool_call(selector: str, call: Any) -> ToolCall:
    if call.type != "function":
        raise ModelReplyInvalid(selector, f"tool call {call.id}: unsupported type {call.type!r}")
    name, text = call.function.name, call.function.arguments
    try:
        arguments = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as error:
        raise ModelReplyInvalid(
            selector, f"tool call {call.id} ({name}): arguments are not JSON ({error}): {text!r}"
        ) from error
    if not isinstance(arguments, dict):
        raise ModelReplyInvalid(
            selector, f"tool call {call.id} ({name}): arguments are not a JSON object: {text!r}"
        )
    return ToolCall(id=call.id, name=name, arguments=arguments)
