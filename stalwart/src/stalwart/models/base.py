"""The model interface: provider-neutral messages, tool definitions, and one call.

A run loop keeps its history as a list of `Message`s (pydantic, so the record can store
them as JSON: see `MESSAGES`), asks `Model.complete(history, tools)`, appends
`response.as_message()`, runs the tool calls, and appends one `ToolResultMessage` per
call. Nothing here knows a provider; `anthropic.py` and `openai.py` translate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from functools import partial
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ..clock import Clock, SystemClock
from ..tools import ToolSpec
from .backoff import BackoffPolicy, call_with_backoff
from .options import ModelOptions
from .pricing import DEFAULT_PRICES, PriceTable


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(_Frozen):
    """One call a model asks for: its id (to answer it), the tool's name, the arguments."""

    id: str
    name: str
    arguments: dict[str, Any]


class UserMessage(_Frozen):
    """What a person said."""

    role: Literal["user"] = "user"
    text: str


class AssistantMessage(_Frozen):
    """What a model said: text, tool calls in the order it made them, or both."""

    role: Literal["assistant"] = "assistant"
    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    # Claude's thinking blocks (`thinking` with its signature, `redacted_thinking`) as the
    # API gave them: sent back unchanged in the next request, as the API requires.
    thinking: tuple[dict[str, Any], ...] = ()


class ToolResultMessage(_Frozen):
    """The answer to one tool call, named by the call's id."""

    role: Literal["tool"] = "tool"
    call_id: str
    content: str
    is_error: bool = False


Message = Annotated[UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")]

# Reads and writes a history as JSON, e.g. for the record:
# MESSAGES.dump_json(history) and MESSAGES.validate_json(text).
MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


class Usage(_Frozen):
    """Tokens one call used (or, added up, several).

    `input_tokens` counts every input token, cached or not; `cache_read_tokens` (read from
    the provider's prompt cache) and `cache_write_tokens` (written to it) are the parts of
    them billed at other prices (see `Price.cost`).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


class Stop(StrEnum):
    """Why a model stopped, in one vocabulary for every provider (each adapter maps its
    provider's words onto these; docs/models.md has the table)."""

    END = "end"  # it finished its answer
    TOOL_USE = "tool_use"  # it asks for tool calls
    TRUNCATED = "truncated"  # cut off at its token limit: the answer is not all there
    REFUSED = "refused"  # it declined to answer
    FILTERED = "filtered"  # the provider's content filter withheld the answer


def stop_of(reason: str | None, table: dict[str, Stop], has_calls: bool) -> Stop:
    """A provider's stop reason as a Stop; one the table lacks (or none) by what came."""
    found = table.get(reason) if reason is not None else None
    return found or (Stop.TOOL_USE if has_calls else Stop.END)


class ModelResponse(_Frozen):
    """One answer of a model.

    `cost_usd` is None when the model's price is not in the price table. `model` is the
    `provider:model` selector that was called; `stop_reason` is the provider's own word
    for why it stopped (e.g. 'end_turn', 'tool_use', 'stop', 'max_tokens'), when it says,
    and `stop` the same in stalwart's words, for every provider alike.
    """

    text: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    cost_usd: Decimal | None = None
    model: str
    stop_reason: str | None = None
    stop: Stop = Stop.END
    thinking: tuple[dict[str, Any], ...] = ()

    def as_message(self) -> AssistantMessage:
        """The answer as it goes into the history."""
        return AssistantMessage(text=self.text, tool_calls=self.tool_calls, thinking=self.thinking)


@dataclass(frozen=True)
class ModelProgress:
    """A streamed answer so far, as a progress callback is told it: the text the model has
    written up to now in ask number `ask` of `run` (the whole text each time, so a page
    just shows the latest; a retried ask starts again from "")."""

    session: str
    run: str
    ask: int
    text: str


@dataclass(frozen=True)
class ToolDefinition:
    """A tool as a model sees it: a name, what it does, and its arguments' JSON schema."""

    name: str
    description: str
    parameters: dict[str, Any]

    @classmethod
    def from_spec(cls, spec: ToolSpec) -> ToolDefinition:
        # The summary, not the whole docstring: the schema already describes each argument.
        return cls(name=spec.name, description=spec.summary, parameters=spec.json_schema())


def tool_definitions(tools: Sequence[ToolSpec | ToolDefinition]) -> list[ToolDefinition]:
    return [t if isinstance(t, ToolDefinition) else ToolDefinition.from_spec(t) for t in tools]


@dataclass(frozen=True)
class Request:
    """Everything one provider call needs, already provider-neutral."""

    messages: tuple[Message, ...]
    tools: tuple[ToolDefinition, ...]
    system: str | None
    max_tokens: int | None
    # False: the tools are sent (the history may hold calls) but the model is told to
    # answer in words (tool_choice none), e.g. on the last ask a run allows.
    allow_calls: bool = True
    temperature: float | None = None
    thinking_budget: int | None = None  # Claude's extended thinking, in tokens
    # Given: the answer is streamed and each text so far handed to it.
    on_text: Callable[[str], None] | None = None


@dataclass(frozen=True)
class Completion:
    """What a provider adapter read from the wire, before pricing."""

    text: str | None
    tool_calls: tuple[ToolCall, ...]
    usage: Usage
    stop_reason: str | None
    stop: Stop | None = None  # None: read from the calls (tool_use if any, else end)
    thinking: tuple[dict[str, Any], ...] = ()


class ProviderAdapter(Protocol):
    """One provider's translation to and from its wire format, through its client.

    `send` makes exactly one HTTP request. A failed exchange (an error status, or no
    response at all) is raised as a `ProviderFailure` with its status and headers, and
    `Model`'s backoff policy decides whether to wait and send again: the policy lives
    there, not in the adapter or the client. An answer that cannot be read is raised as
    `ModelReplyInvalid`, never retried.
    """

    def send(self, request: Request) -> Completion: ...

    def close(self) -> None: ...


class Model:
    """A `provider:model` that can be asked for the next message.

    Build one with `stalwart.models.load_model("anthropic:<model>")`; a run loop needs
    only `complete`.
    """

    def __init__(
        self,
        selector: str,
        adapter: ProviderAdapter,
        *,
        clock: Clock | None = None,
        backoff: BackoffPolicy | None = None,
        prices: PriceTable | None = None,
        max_tokens: int | None = None,
        options: ModelOptions | None = None,
    ) -> None:
        self.selector = selector
        self.provider, _, self.name = selector.partition(":")
        self._adapter = adapter
        self._clock = clock or SystemClock()
        self._backoff = backoff or BackoffPolicy()
        self._prices = prices if prices is not None else DEFAULT_PRICES
        self.options = options or ModelOptions(max_tokens=max_tokens)

    def __repr__(self) -> str:
        return f"Model({self.selector!r})"

    def close(self) -> None:
        """Close the client's connections; the model cannot be called after."""
        self._adapter.close()

    def __enter__(self) -> Model:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec | ToolDefinition] = (),
        *,
        system: str | None = None,
        max_tokens: int | None = None,
        allow_calls: bool = True,
        on_text: Callable[[str], None] | None = None,
    ) -> ModelResponse:
        """Send the history and the tools; return the model's next message.

        Rate limits, overload and lost connections are retried under the backoff policy
        (sleeping on the injected clock); past its cap, `ModelUnavailable`. A request the
        provider refuses raises `ModelRequestRejected` at once, and an answer that cannot
        be read `ModelReplyInvalid`. With `on_text`, and `stream` in the model's options,
        the answer is streamed and `on_text` handed its text so far as it comes.
        """
        options = self.options
        request = Request(
            messages=tuple(messages),
            tools=tuple(tool_definitions(tools)),
            system=system,
            max_tokens=max_tokens if max_tokens is not None else options.max_tokens,
            allow_calls=allow_calls,
            temperature=options.temperature,
            thinking_budget=options.thinking_budget,
            on_text=(on_text or _ignore) if options.stream else None,
        )
        completion = call_with_backoff(
            partial(self._adapter.send, request), self._backoff, self._clock, self.selector
        )
        return ModelResponse(
            text=completion.text,
            tool_calls=distinct_call_ids(completion.tool_calls, request.messages),
            usage=completion.usage,
            cost_usd=self._prices.cost(self.selector, completion.usage),
            model=self.selector,
            stop_reason=completion.stop_reason,
            stop=completion.stop or stop_of(None, {}, bool(completion.tool_calls)),
            thinking=completion.thinking,
        )


def _ignore(text: str) -> None:
    """A streamed answer nobody watches."""


def distinct_call_ids(
    calls: Sequence[ToolCall], history: Sequence[Message]
) -> tuple[ToolCall, ...]:
    """The calls with ids no other call of the answer or the history has.

    Some OpenAI-compatible servers repeat an id within one answer, or leave it empty; a
    result is matched to its call by id, so two calls under one id would both be told
    the first one's result. A repeated or empty id is renamed `<id>_<n>` (n its place in
    the answer, counted from 1, raised until free), and the renamed id is the one the
    record keeps and the next request sends, in the call and in its result alike.
    """
    taken = {c.id for m in history if isinstance(m, AssistantMessage) for c in m.tool_calls}
    distinct: list[ToolCall] = []
    for place, call in enumerate(calls, 1):
        new_id, n = call.id, place
        while not new_id or new_id in taken:
            new_id = f"{call.id or 'call'}_{n}"
            n += len(calls)
        taken.add(new_id)
        distinct.append(call if new_id == call.id else call.model_copy(update={"id": new_id}))
    return tuple(distinct)
