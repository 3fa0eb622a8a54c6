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
    Stop,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    Usage,
    UserMessage,
    stop_of,
)
from .official import OfficialClientAdapter, is_count, shown

# Chat Completions' finish reasons in stalwart's words. A message's `refusal` (in place of
# its content) is read as Stop.REFUSED whatever the finish reason says.
STOPS: dict[str, Stop] = {
    "stop": Stop.END,
    "tool_calls": Stop.TOOL_USE,
    "function_call": Stop.TOOL_USE,
    "length": Stop.TRUNCATED,
    "content_filter": Stop.FILTERED,
}


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
        return self._read(read_completion, completion)


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
    """The first choice as a Completion; tool calls in order, their arguments parsed.

    The client does not validate a 200 body, so one that is not a completion --
    `{"choices":[{"message":{}}]}`, a gateway's error body -- is caught here as
    `ModelReplyInvalid`. Every Chat Completions choice says why it finished; one that
    does not is not an answer, even when it carries no words.
    """
    if not isinstance(completion, openai.types.chat.ChatCompletion):
        raise ModelReplyInvalid(selector, f"expected a chat completion: {shown(completion)}")
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise ModelReplyInvalid(selector, f"a completion with no choice: {shown(completion)}")
    choice = choices[0]
    message = getattr(choice, "message", None)
    finish = getattr(choice, "finish_reason", None)
    if message is None or not isinstance(finish, str):
        raise ModelReplyInvalid(selector, f"a choice that is not an answer: {shown(choice)}")
    content = getattr(message, "content", None)
    refusal = getattr(message, "refusal", None)
    tool_calls = getattr(message, "tool_calls", None)
    if (
        getattr(message, "role", None) != "assistant"
        or not isinstance(content, str | None)
        or not isinstance(refusal, str | None)
        or not isinstance(tool_calls, list | None)
    ):
        raise ModelReplyInvalid(selector, f"a message that cannot be read: {shown(message)}")
    cut_off = STOPS.get(finish) is Stop.TRUNCATED
    calls = tuple(_tool_call(selector, call, cut_off) for call in tool_calls or ())
    return Completion(
        # A refusal is the model's answer to the person, in place of content.
        text=content or refusal or None,
        tool_calls=calls,
        usage=_usage(selector, getattr(completion, "usage", None)),
        stop_reason=finish,
        stop=Stop.REFUSED if refusal and not content else stop_of(finish, STOPS, bool(calls)),
    )


def _usage(selector: str, usage: Any) -> Usage:
    if usage is None:
        return Usage()
    given, taken = getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)
    if not (is_count(given) and is_count(taken)):
        raise ModelReplyInvalid(selector, f"the answer's usage cannot be read: {shown(usage)}")
    return Usage(input_tokens=given, output_tokens=taken)


def _tool_call(selector: str, call: Any, cut_off: bool = False) -> ToolCall:
    """A function call, its arguments parsed. Cut off at the token limit, its arguments
    may be half a JSON text: they are kept as {} (a cut-off call is never run)."""
    if getattr(call, "type", None) != "function":
        raise ModelReplyInvalid(selector, f"unsupported tool call: {shown(call)}")
    function = getattr(call, "function", None)
    name, text = getattr(function, "name", None), getattr(function, "arguments", None)
    if not isinstance(call.id, str) or not isinstance(name, str) or not isinstance(text, str):
        raise ModelReplyInvalid(selector, f"a tool call that cannot be read: {shown(call)}")
    try:
        arguments = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as error:
        if cut_off:
            return ToolCall(id=call.id, name=name, arguments={})
        raise ModelReplyInvalid(
            selector, f"tool call {call.id} ({name}): arguments are not JSON ({error}): {text!r}"
        ) from error
    if not isinstance(arguments, dict):
        raise ModelReplyInvalid(
            selector, f"tool call {call.id} ({name}): arguments are not a JSON object: {text!r}"
        )
    return ToolCall(id=call.id, name=name, arguments=arguments)
