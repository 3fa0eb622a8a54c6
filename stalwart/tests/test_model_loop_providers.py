"""The model loop as real providers behave: bodies that are not answers, stop reasons, the
cap, duplicate call ids, caching and its cost, timeouts, and what agent.yaml sets.

Each test drives the official client (`anthropic`, `openai`) against the provider's local
stand-in on 127.0.0.1 (`model_wire.WireServer`): real sockets, no key, no internet.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from model_shop import (
    ASK_TURN,
    PROVIDERS,
    SETTLE_TURN,
    Provider,
    Shop,
    json_reply,
    wire_shop,
)
from model_wire import WireServer, clean_provider_env, wire  # noqa: F401

from stalwart import FakeClock

pytestmark = pytest.mark.usefixtures("clean_provider_env")

NOTHING_WRITTEN = "Nothing had been written, so nothing needed undoing."


@pytest.fixture(params=PROVIDERS, ids=lambda p: p.name)
def provider(request: pytest.FixtureRequest) -> Provider:
    chosen: Provider = request.param
    return chosen


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def shop(
    tmp_path: Path,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Shop]:
    opened = wire_shop(tmp_path, provider, wire.url, monkeypatch)
    yield opened
    opened.close()


def stopped(provider: Provider, detail: str, rest: str = NOTHING_WRITTEN) -> str:
    return f"This run stopped: the model {provider.selector} could not answer ({detail}). {rest}"


# --- 1. a 200 body that is not a message ---

NOT_ANSWERS: dict[str, list[Any]] = {
    "anthropic": [
        {},
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        {"type": "message", "role": "assistant", "content": None, "usage": None},
    ],
    "openai": [
        {"choices": [{"message": {}}]},
        {"error": {"message": "upstream request failed", "type": "server_error"}},
        {"choices": []},
    ],
}


@pytest.mark.parametrize("index", range(3))
def test_a_200_body_that_is_not_an_answer_is_unreadable_recorded_and_ends_the_run(
    shop: Shop,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
    index: int,
) -> None:
    desk = shop.agent(clock=clock)
    wire.enqueue_reply(json_reply(NOT_ANSWERS[provider.name][index]))

    reply = desk.chat(SETTLE_TURN, user="u")

    assert reply.state == "rolled_back"
    assert reply.text == stopped(provider, "its answer could not be read")
    assert len(wire.requests) == 1  # not retried: the same body would come back
    [ask] = desk.usage("u").runs
    assert ask.usage.calls == 1
    assert reply.waiting == []

    # The next turn is a new run: the old turn is not asked again, and its failure is
    # one summary in what the model reads.
    wire.enqueue_reply(provider.answer("Order 4411 is unpaid."))
    reply = desk.chat(ASK_TURN, user="u")

    assert (reply.state, reply.text) == ("done", "Order 4411 is unpaid.")
    sent = [m for m in wire.requests[1].body["messages"] if m["role"] != "system"]
    assert sent == provider.plain_conversation(
        ("user", SETTLE_TURN),
        ("assistant", stopped(provider, "its answer could not be read")),
        ("user", ASK_TURN),
    )
