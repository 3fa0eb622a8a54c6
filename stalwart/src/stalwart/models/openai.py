"""OpenAI's Chat Completions with tool calling, through the official `openai` client.

Only `registry.load_model` imports this module, after checking the extra is installed.
The same adapter serves any server that speaks Chat Completions, through base_url.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
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
            if not request.allow_calls:
                params["tool_choice"] = "none"
        if request.max_tokens is not None:
            params["max_completion_tokens"] = request.max_tokens
        if request.temperature is not None:
            params["temperature"] = request.temperature
        # Prompt caching is the provider's own here: a prefix it has seen is read from its
        # cache with no request for it, and billed at the cached rate (`cached_tokens`).
        on_text = request.on_text
        if on_text is None:
            completion = self._ask(lambda: self._client.chat.completions.create(**params))
        else:
            completion = self._ask(lambda: self._streamed(params, on_text))
        return self._read(read_completion, completion)

    def _streamed(self, params: dict[str, Any], on_text: Callable[[str], None]) -> Any:
        """One streamed request (server-sent chunks), its text handed on as it comes, the
        chunks put together into the completion a plain request would have had.

        By hand, not the client's `chat.completions.stream` helper: that one raises on a
        `length` or `content_filter` finish, which the model loop reads as stop reasons.
        """
        content = ""
        refusal: str | None = None
        calls: dict[int, dict[str, Any]] = {}
        choice: dict[str, Any] = {"index": 0, "finish_reason": None, "logprobs": None}
        body: dict[str, Any] = {"object": "chat.completion", "usage": None}
        stream = self._client.chat.completions.create(
            **params, stream=True, stream_options={"include_usage": True}
        )
        with stream:
            for chunk in stream:
                body.update(id=chunk.id, created=chunk.created, model=chunk.model)
                if chunk.usage is not None:
                    body["usage"] = chunk.usage.model_dump()
                for part in chunk.choices:
                    if part.index != 0:
                        continue
                    delta = part.delta
                    if part.finish_reason is not None:
                        choice["finish_reason"] = part.finish_reason
                    if delta.refusal:
                        refusal = (refusal or "") + delta.refusal
                    for call in delta.tool_calls or ():
                        _add_call_delta(calls.setdefault(call.index, {}), call)
                    if delta.content:
                        content += delta.content
                        on_text(content)
        message: dict[str, Any] = {"role": "assistant", "content": content or None}
        message["refusal"] = refusal
        if calls:
            message["tool_calls"] = [calls[i] for i in sorted(calls)]
        body["choices"] = [{**choice, "message": message}]
        return openai.types.chat.ChatCompletion.construct(**body)


def _add_call_delta(call: dict[str, Any], delta: Any) -> None:
    """One chunk of a streamed tool call: its id and name come once, its arguments in parts."""
    function = call.setdefault("function", {"name": "", "arguments": ""})
    call.setdefault("type", "function")
    if delta.id:
        call["id"] = delta.id
    if delta.function is not None:
        function["name"] += delta.function.name or ""
        function["arguments"] += delta.function.arguments or ""


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
    # The prompt's tokens read from the provider's cache are a part of prompt_tokens.
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    if not (is_count(given) and is_count(taken) and is_count(cached)):
        raise ModelReplyInvalid(selector, f"the answer's usage cannot be read: {shown(usage)}")
    return Usage(input_tokens=given, output_tokens=taken, cache_read_tokens=cached)


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
