"""A shop whose desk hands what the selector cannot read to a model, for the model-loop tests.

`write_shop(folder, ...)` writes a real agent.yaml (with `on_unread: model`), a real tools
module and a rulebook; the answers a model gives are built here in each provider's wire
format (`anthropic_answer`, `openai_answer`) for `model_wire.WireServer`, or as
`AssistantMessage`s for a `ScriptedAdapter`.
"""

from __future__ import annotations

import json
import sys
import types
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from model_wire import Reply, WireServer, uncached

from stalwart import Agent
from stalwart.backoff import UNDO_BACKOFF, Backoff, no_jitter
from stalwart.models import AssistantMessage, BackoffPolicy, ToolCall

SHOP_TOOLS = '''
"""The shop's tools: every call is listed in CALLS; a tool named in FAIL raises."""

from stalwart import tool

CALLS: list[tuple[str, dict]] = []
FAIL: set[str] = set()


def _call(name, **args):
    CALLS.append((name, args))
    if name in FAIL:
        raise RuntimeError(f"{name} is down")


@tool
def get_order(order: str) -> dict:
    """Look up an order by its number: what it costs and whether it is paid."""
    _call("get_order", order=order)
    return {"order": order, "amount": "40.00", "status": "unpaid"}


@tool(writes=True, undo="refund_card")
def charge_card(order: str, amount: str) -> dict:
    """Charge the card on file for an order."""
    _call("charge_card", order=order, amount=amount)
    return {"order": order, "amount": amount, "charge": f"ch-{order}"}


@tool(writes=True)
def refund_card(order: str, amount: str) -> dict:
    """Refund a charge on the card."""
    _call("refund_card", order=order, amount=amount)
    return {"order": order, "refunded": amount}


@tool(writes=True, undo="close_account")
def provision_account(order: str) -> dict:
    """Provision the account an order paid for."""
    _call("provision_account", order=order)
    return {"order": order, "account": f"acct-{order}"}


@tool(writes=True)
def close_account(order: str) -> dict:
    """Close an account that was provisioned."""
    _call("close_account", order=order)
    return {"order": order, "closed": True}
'''

SHOP_TOOL_NAMES = ["get_order", "charge_card", "refund_card", "provision_account", "close_account"]

# Turns the selector cannot read over these tools, so they go to the model.
SETTLE_TURN = "please settle what I owe on 4411"
ASK_TURN = "what happened to my order?"

SUMMARY = (
    "This run stopped: provision_account failed (RuntimeError). "
    "Undone, latest first: charge_card (by refund_card)."
)


@dataclass
class Shop:
    folder: Path
    agents: list[Agent] = field(default_factory=list)

    @property
    def yaml(self) -> Path:
        return self.folder / "agent.yaml"

    def agent(self, **options: Any) -> Agent:
        # the waits a test sees are the schedule's ceilings, not random draws
        options.setdefault("model_backoff", BackoffPolicy(Backoff(jitter=no_jitter)))
        options.setdefault("undo_backoff", replace(UNDO_BACKOFF, jitter=no_jitter))
        opened = Agent.from_file(self.yaml, **options)
        self.agents.append(opened)
        return opened

    @property
    def module(self) -> types.ModuleType:
        return sys.modules[self.agents[0].config.project.modules[0]]

    @property
    def calls(self) -> list[str]:
        return [name for name, _ in self.module.CALLS]

    def fail(self, tool: str) -> None:
        self.module.FAIL.add(tool)

    def close(self) -> None:
        for opened in self.agents:
            opened.close()


def write_shop(
    folder: Path,
    *,
    model: str = "anthropic:claude-sonnet-5-5",
    on_unread: str = "model",
    rulebook: str = "",
    prices: str = "",
    agent_keys: str = "",
) -> Shop:
    """Write the shop; its tools module has a name no other test uses."""
    module = f"shop_{uuid.uuid4().hex[:12]}"
    (folder / f"{module}.py").write_text(SHOP_TOOLS)
    (folder / "policy.co").write_text(rulebook)
    (folder / "agent.yaml").write_text(
        "agents:\n"
        "  desk:\n"
        f'    model: "{model}"\n'
        f"    tools: [{', '.join(SHOP_TOOL_NAMES)}]\n"
        f"    on_unread: {on_unread}\n"
        f"{agent_keys}"
        "tools:\n"
        f"  - python: {module}\n"
        "rulebook: ./policy.co\n"
        "record: record.sqlite\n"
        f"{prices}"
    )
    return Shop(folder)


Call = tuple[str, str, dict[str, Any]]  # (id, tool, arguments)


def scripted(text: str | None = None, calls: Sequence[Call] = ()) -> AssistantMessage:
    """One answer for a ScriptedAdapter."""
    return AssistantMessage(
        text=text,
        tool_calls=tuple(ToolCall(id=i, name=n, arguments=a) for i, n, a in calls),
    )


def anthropic_answer(
    text: str | None = None,
    calls: Sequence[Call] = (),
    usage: tuple[int, int] = (100, 20),
    *,
    stop: str | None = None,
    cache: tuple[int, int] = (0, 0),
    thinking: Sequence[dict[str, Any]] = (),
) -> Reply:
    """A Messages API answer: thinking, text and tool_use blocks; `stop` its stop_reason,
    `cache` the input tokens (read from, written to) the prompt cache."""
    content: list[dict[str, Any]] = list(thinking)
    content += [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls]
    body = {
        "id": f"msg_{uuid.uuid4().hex[:8]}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": content,
        "stop_reason": stop or ("tool_use" if calls else "end_turn"),
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage[0],
            "output_tokens": usage[1],
            "cache_read_input_tokens": cache[0],
            "cache_creation_input_tokens": cache[1],
        },
    }
    return json_reply(body)


def openai_answer(
    text: str | None = None,
    calls: Sequence[Call] = (),
    usage: tuple[int, int] = (100, 20),
    *,
    stop: str | None = None,
    refusal: str | None = None,
    cached: int = 0,
) -> Reply:
    """A Chat Completions answer: content and function tool calls; `stop` its
    finish_reason, `refusal` the message's refusal in place of content."""
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": refusal}
    if calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, n, a in calls
        ]
    body = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:8]}",
        "object": "chat.completion",
        "created": 1_800_000_000,
        "model": "gpt-4.1",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": stop or ("tool_calls" if calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": sum(usage),
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }
    return json_reply(body)


def json_reply(body: dict[str, Any]) -> Reply:
    return Reply(200, json.dumps(body).encode("utf-8"), {"content-type": "application/json"})


@dataclass(frozen=True)
class Provider:
    name: str
    selector: str
    env: str  # the prefix of its key and base URL variables
    url_suffix: str
    answer: Callable[..., Reply]
    stream: Callable[..., Reply]
    rate_limited: str  # a recorded 429 with retry-after
    retry_after: float
    overloaded: str  # a recorded overload or server error, retried

    def tool_results(self, body: dict[str, Any]) -> list[tuple[str, str]]:
        """(call id, content) of every tool result a request carries, in order."""
        found: list[tuple[str, str]] = []
        for message in body["messages"]:
            if self.name == "openai":
                if message["role"] == "tool":
                    found.append((message["tool_call_id"], message["content"]))
            elif isinstance(message["content"], list):
                found += [
                    (block["tool_use_id"], block["content"])
                    for block in message["content"]
                    if block["type"] == "tool_result"
                ]
        return found

    def call_ids(self, body: dict[str, Any]) -> list[str]:
        """The id of every tool call the request's assistant turns carry, in order."""
        found: list[str] = []
        for message in body["messages"]:
            if message["role"] != "assistant":
                continue
            if self.name == "openai":
                found += [call["id"] for call in message.get("tool_calls") or []]
            elif isinstance(message["content"], list):
                found += [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        return found

    def conversation(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The request's messages, less OpenAI's system message and Anthropic's cache marks."""
        return [m for m in uncached(body["messages"]) if m["role"] != "system"]

    def plain_conversation(self, *said: tuple[str, str]) -> list[dict[str, Any]]:
        """The messages a request carries for a conversation of plain text only."""
        if self.name == "openai":
            return [{"role": role, "content": text} for role, text in said]
        return [{"role": role, "content": [{"type": "text", "text": text}]} for role, text in said]


def wire_shop(
    folder: Path,
    provider: Provider,
    url: str,
    monkeypatch: pytest.MonkeyPatch,
    *,
    agent_keys: str = "",
) -> Shop:
    """The shop on a provider's stand-in at `url`: key and base URL from the environment,
    priced at $3 / $15 per million input / output tokens; `agent_keys` are more lines of
    the desk's agent.yaml entry (indented four spaces)."""
    monkeypatch.setenv(f"{provider.env}_API_KEY", "sk-test")
    monkeypatch.setenv(f"{provider.env}_BASE_URL", url + provider.url_suffix)
    # OpenAI's cached rate differs per model, so it is given; Anthropic's cache prices
    # follow from its input price (reads 0.1x, writes 1.25x).
    cached = ", cache_read_per_mtok: 0.75" if provider.name == "openai" else ""
    prices = (
        f'prices:\n  "{provider.selector}": {{input_per_mtok: 3, output_per_mtok: 15{cached}}}\n'
    )
    return write_shop(folder, model=provider.selector, prices=prices, agent_keys=agent_keys)


# --- streamed answers, as server-sent events ---


def sse_reply(events: Sequence[tuple[str | None, Any]]) -> Reply:
    """A streamed answer: each (event name or None, data) as a server-sent event."""
    lines: list[str] = []
    for name, data in events:
        if name is not None:
            lines.append(f"event: {name}")
        lines.append(f"data: {data if isinstance(data, str) else json.dumps(data)}")
        lines.append("")
    body = ("\n".join(lines) + "\n").encode("utf-8")
    return Reply(200, body, {"content-type": "text/event-stream"})


def anthropic_stream(
    pieces: Sequence[str] = (), calls: Sequence[Call] = (), usage: tuple[int, int] = (100, 20)
) -> Reply:
    """A Messages API answer streamed: the text in `pieces`, then each tool call."""
    message: dict[str, Any] = {
        "id": f"msg_{uuid.uuid4().hex[:8]}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": 1},
    }
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": message})
    ]
    index = 0
    if pieces:
        events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}}))  # fmt: skip
        for piece in pieces:
            delta = {"type": "content_block_delta", "index": 0,
                     "delta": {"type": "text_delta", "text": piece}}  # fmt: skip
            events.append(("content_block_delta", delta))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
        index = 1
    for offset, (call_id, name, arguments) in enumerate(calls):
        at = index + offset
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(arguments)}
        events += [
            ("content_block_start",
             {"type": "content_block_start", "index": at, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": at, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": at}),
        ]  # fmt: skip
    stop = {"stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None}
    events += [
        ("message_delta",
         {"type": "message_delta", "delta": stop, "usage": {"output_tokens": usage[1]}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return sse_reply(events)


def openai_stream(
    pieces: Sequence[str] = (), calls: Sequence[Call] = (), usage: tuple[int, int] = (100, 20)
) -> Reply:
    """A Chat Completions answer streamed: the text in `pieces`, then each tool call."""
    head = {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1_800_000_000,
            "model": "gpt-4.1"}  # fmt: skip

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant", "content": ""}))]
    events += [(None, chunk({"content": piece})) for piece in pieces]
    for index, (call_id, name, arguments) in enumerate(calls):
        text = json.dumps(arguments)
        start = {"index": index, "id": call_id, "type": "function",
                 "function": {"name": name, "arguments": text[:5]}}  # fmt: skip
        rest = {"index": index, "function": {"arguments": text[5:]}}
        events += [(None, chunk({"tool_calls": [start]})), (None, chunk({"tool_calls": [rest]}))]
    events.append((None, chunk({}, "tool_calls" if calls else "stop")))
    tokens = {"prompt_tokens": usage[0], "completion_tokens": usage[1],
              "total_tokens": sum(usage)}  # fmt: skip
    events += [(None, {**head, "choices": [], "usage": tokens}), (None, "[DONE]")]
    return sse_reply(events)


PROVIDERS = [
    Provider(
        "anthropic",
        "anthropic:claude-sonnet-5-5",
        "ANTHROPIC",
        "",
        anthropic_answer,
        anthropic_stream,
        "anthropic/rate_limited",
        7.0,
        "anthropic/overloaded",
    ),
    Provider(
        "openai",
        "openai:gpt-4.1",
        "OPENAI",
        "/v1",
        openai_answer,
        openai_stream,
        "openai/rate_limited",
        4.0,
        "openai/server_error",
    ),
]


# --- the fixtures of the tests on a provider's stand-in (test_model_loop_wire.py and
# test_model_loop_providers.py import them, with model_wire's `wire`) ---


@pytest.fixture(name="provider", params=PROVIDERS, ids=lambda p: p.name)
def provider_fixture(request: pytest.FixtureRequest) -> Provider:
    """Each provider in turn."""
    chosen: Provider = request.param
    return chosen


@pytest.fixture(name="shop")
def wire_shop_fixture(
    tmp_path: Path, provider: Provider, wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Shop]:
    """The shop on `provider`'s stand-in, closed after the test."""
    opened = wire_shop(tmp_path, provider, wire.url, monkeypatch)
    yield opened
    opened.close()
