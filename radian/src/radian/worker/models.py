"""The model, behind one small interface: a provider-neutral conversation in, one turn out.

`Conversation` entries are plain JSON (they are stored in the session file):
    {"role": "user", "text": ...}
    {"role": "assistant", "text": ..., "tool_calls": [{"id", "name", "arguments"}]}
    {"role": "tool", "results": [{"id", "content", "is_error"}]}
Each provider turns them into its own wire format, through its official async client, whose
own retries are off: a failed request is the attempt's model error, and arc's retry rules
decide what happens next.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast

from radian.worker import texts
from radian.worker.pricing import Tokens

Entry = dict[str, Any]
# How the model ended its turn: the ACP stop reasons it maps to, and "tool_use" (go on).
Stop = Literal["end_turn", "tool_use", "max_tokens", "refusal"]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ModelTurn:
    text: str
    tool_calls: list[ToolCall]
    stop: Stop
    tokens: Tokens = field(default_factory=Tokens)


@dataclass(frozen=True)
class ToolDefinition:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments


class ModelFailure(Exception):
    """The request failed (HTTP error, lost connection, a body that is not a turn)."""


class Provider(Protocol):
    name: str
    model: str

    async def turn(
        self,
        system: str,
        conversation: Sequence[Entry],
        tools: Sequence[ToolDefinition],
        max_tokens: int,
    ) -> ModelTurn: ...


def load_provider(selector: str) -> Provider:
    """`anthropic:<model>` or `openai:<model>`; keys and base URLs from the clients' usual
    environment variables (ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL, OPENAI_API_KEY /
    OPENAI_BASE_URL)."""
    provider, _, model = selector.partition(":")
    if provider not in PROVIDERS or not model:
        raise ValueError(texts.BAD_MODEL.format(text=selector))
    package = provider
    try:
        importlib.import_module(package)
    except ImportError:
        raise ValueError(
            texts.MISSING_EXTRA.format(provider=provider, package=package, extra=package)
        ) from None
    return PROVIDERS[provider](model)


class AnthropicProvider:
    name = "anthropic"

    def __init__(self, model: str) -> None:
        import anthropic

        self.model = model
        self._client = anthropic.AsyncAnthropic(max_retries=0)
        self._errors: tuple[type[BaseException], ...] = (anthropic.APIError,)

    async def turn(
        self,
        system: str,
        conversation: Sequence[Entry],
        tools: Sequence[ToolDefinition],
        max_tokens: int,
    ) -> ModelTurn:
        try:
            message = await self._client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                system=system,
                messages=cast(Any, _merge_roles([_anthropic_message(e) for e in conversation])),
                tools=[
                    {"name": t.name, "description": t.description, "input_schema": t.parameters}
                    for t in tools
                ],
            )
        except self._errors as error:
            raise ModelFailure(texts.MODEL_ERROR.format(provider=self.name, error=error)) from None
        try:
            text = "".join(block.text for block in message.content if block.type == "text")
            calls = [
                ToolCall(block.id, block.name, dict(block.input))
                for block in message.content
                if block.type == "tool_use"
            ]
            usage = message.usage
            tokens = Tokens(
                input=usage.input_tokens,
                output=usage.output_tokens,
                cache_read=usage.cache_read_input_tokens or 0,
                cache_write=usage.cache_creation_input_tokens or 0,
            )
        except (AttributeError, TypeError, ValueError) as error:
            raise ModelFailure(texts.MODEL_ERROR.format(provider=self.name, error=error)) from None
        stop = ANTHROPIC_STOPS.get(str(message.stop_reason), "end_turn")
        if stop == "tool_use" and not calls:
            stop = "end_turn"
        return ModelTurn(text, calls, stop, tokens)


# Anthropic's stop_reason to ours; anything else (end_turn, stop_sequence, pause_turn) ends
# the turn.
ANTHROPIC_STOPS: dict[str, Stop] = {
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
}


def _anthropic_message(entry: Entry) -> dict[str, Any]:
    if entry["role"] == "user":
        return {"role": "user", "content": [{"type": "text", "text": entry["text"]}]}
    if entry["role"] == "assistant":
        content: list[dict[str, Any]] = []
        if entry.get("text"):
            content.append({"type": "text", "text": entry["text"]})
        for call in entry.get("tool_calls", []):
            content.append(
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": call["name"],
                    "input": call["arguments"],
                }
            )
        return {"role": "assistant", "content": content}
    return {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": result["id"],
                "content": result["content"],
                "is_error": result["is_error"],
            }
            for result in entry["results"]
        ],
    }


def _merge_roles(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Adjacent messages of one role as one (a turn that failed leaves a user message that
    the next turn's brief follows): Messages alternates user and assistant."""
    merged: list[dict[str, Any]] = []
    for message in messages:
        if merged and merged[-1]["role"] == message["role"]:
            merged[-1] = {
                "role": message["role"],
                "content": merged[-1]["content"] + message["content"],
            }
        else:
            merged.append(message)
    return merged


class OpenAIProvider:
    name = "openai"

    def __init__(self, model: str) -> None:
        import openai

        self.model = model
        self._client = openai.AsyncOpenAI(max_retries=0)
        self._errors: tuple[type[BaseException], ...] = (openai.APIError,)

    async def turn(
        self,
        system: str,
        conversation: Sequence[Entry],
        tools: Sequence[ToolDefinition],
        max_tokens: int,
    ) -> ModelTurn:
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
        for entry in conversation:
            messages.extend(_openai_messages(entry))
        try:
            completion = await self._client.chat.completions.create(
                model=self.model,
                max_completion_tokens=max_tokens,
                messages=messages,  # type: ignore[arg-type]
                tools=[
                    {
                        "type": "function",
                        "function": {
                            "name": t.name,
                            "description": t.description,
                            "parameters": t.parameters,
                        },
                    }
                    for t in tools
                ],
            )
        except self._errors as error:
            raise ModelFailure(texts.MODEL_ERROR.format(provider=self.name, error=error)) from None
        try:
            choice = completion.choices[0]
            message = choice.message
            calls = [
                ToolCall(call.id, call.function.name, json.loads(call.function.arguments or "{}"))
                for call in message.tool_calls or []
                if call.type == "function"
            ]
            usage = completion.usage
            cached = 0
            if usage is not None and usage.prompt_tokens_details is not None:
                cached = usage.prompt_tokens_details.cached_tokens or 0
            tokens = Tokens(
                input=(usage.prompt_tokens - cached) if usage is not None else 0,
                output=usage.completion_tokens if usage is not None else 0,
                cache_read=cached,
            )
        except (AttributeError, IndexError, TypeError, ValueError) as error:
            raise ModelFailure(texts.MODEL_ERROR.format(provider=self.name, error=error)) from None
        finish = choice.finish_reason
        stop: Stop
        if finish == "length":
            stop = "max_tokens"
        elif finish == "content_filter" or getattr(message, "refusal", None):
            stop = "refusal"
        elif calls:
            stop = "tool_use"
        else:
            stop = "end_turn"
        return ModelTurn(message.content or "", calls, stop, tokens)


def _openai_messages(entry: Entry) -> list[dict[str, Any]]:
    if entry["role"] == "user":
        return [{"role": "user", "content": entry["text"]}]
    if entry["role"] == "assistant":
        message: dict[str, Any] = {"role": "assistant", "content": entry.get("text") or None}
        if entry.get("tool_calls"):
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
                }
                for call in entry["tool_calls"]
            ]
        return [message]
    return [
        {"role": "tool", "tool_call_id": result["id"], "content": result["content"]}
        for result in entry["results"]
    ]


PROVIDERS: dict[str, type[AnthropicProvider] | type[OpenAIProvider]] = {
    "anthropic": AnthropicProvider,
    "openai": OpenAIProvider,
}
