"""The model loop as real providers behave: bodies that are not answers, stop reasons, the
cap, duplicate call ids, caching and its cost, timeouts, and what agent.yaml sets.

Each test drives the official client (`anthropic`, `openai`) against the provider's local
stand-in on 127.0.0.1 (`model_wire.WireServer`): real sockets, no key, no internet.
"""

from __future__ import annotations

import json
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
    anthropic_answer,
    json_reply,
    openai_answer,
    wire_shop,
)
from model_wire import Reply, WireServer, clean_provider_env, wire  # noqa: F401

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


# --- 3. duplicate tool-call ids in one answer ---


def test_calls_that_share_an_id_are_told_their_own_results_under_distinct_ids(
    shop: Shop,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
) -> None:
    desk = shop.agent(clock=clock)
    wire.enqueue_reply(
        provider.answer(
            calls=[
                ("call_1", "get_order", {"order": "4411"}),
                ("call_1", "get_order", {"order": "4412"}),
                ("", "get_order", {"order": "4413"}),
            ]
        )
    )
    wire.enqueue_reply(provider.answer(calls=[("call_1", "get_order", {"order": "4414"})]))
    wire.enqueue_reply(provider.answer("All four are unpaid."))

    reply = desk.chat("are 4411, 4412, 4413 and 4414 settled?", user="u")

    assert (reply.state, reply.text) == ("done", "All four are unpaid.")
    assert [c.args["order"] for c in desk.record("u")] == ["4411", "4412", "4413", "4414"]
    last = wire.requests[2].body
    results = provider.tool_results(last)
    assert [call_id for call_id, _ in results] == ["call_1", "call_1_2", "call_3", "call_1_1"]
    assert [json.loads(content)["order"] for _, content in results] == [
        "4411",
        "4412",
        "4413",
        "4414",
    ]
    # Each result answers the call of the same id, as the assistant turns sent it.
    assert provider.call_ids(last) == ["call_1", "call_1_2", "call_3", "call_1_1"]


# --- 4. stop reasons ---

REFUSAL = "I can't help with that."


def refusal(provider: Provider) -> Reply:
    if provider.name == "openai":
        return openai_answer(refusal=REFUSAL)
    return anthropic_answer(REFUSAL, stop="refusal")


def test_a_refusal_is_said_as_a_refusal_and_fails_the_run(
    shop: Shop,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
) -> None:
    desk = shop.agent(clock=clock)
    wire.enqueue_reply(refusal(provider))

    reply = desk.chat(SETTLE_TURN, user="u")

    assert reply.state == "rolled_back"
    assert reply.text == (
        f'This run stopped: the model {provider.selector} refused this turn (it said "{REFUSAL}"). '
        + NOTHING_WRITTEN
    )


def test_a_refusal_after_a_write_undoes_it_and_asks_nothing_more(
    shop: Shop,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
) -> None:
    desk = shop.agent(clock=clock)
    wire.enqueue_reply(
        provider.answer(calls=[("call_1", "charge_card", {"order": "4411", "amount": "40.00"})])
    )
    wire.enqueue_reply(refusal(provider))

    desk.chat("settle 4411 for 40.00 please", user="u")
    reply = desk.confirm("u", "approve")

    assert reply.state == "rolled_back"
    assert reply.text == (
        f'This run stopped: the model {provider.selector} refused this turn (it said "{REFUSAL}"). '
        "Undone, latest first: charge_card (by refund_card)."
    )
    assert shop.calls == ["charge_card", "refund_card"]
    assert len(wire.requests) == 2


def test_an_answer_cut_off_at_max_tokens_is_never_shown_as_complete(
    shop: Shop,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
) -> None:
    desk = shop.agent(clock=clock)
    cut = "length" if provider.name == "openai" else "max_tokens"
    wire.enqueue_reply(provider.answer("Your order is", stop=cut))

    reply = desk.chat(ASK_TURN, user="u")

    assert (reply.state, reply.text) == (
        "done",
        "The model's answer was cut off at its max_tokens limit; what it said is not all: "
        "Your order is…",
    )
    assert desk.memory("u")[-1].content == reply.text


def test_a_tool_call_cut_off_at_max_tokens_never_runs_and_is_not_asked_again(
    shop: Shop,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
) -> None:
    desk = shop.agent(clock=clock)
    if provider.name == "openai":
        body = json.loads(
            openai_answer(calls=[("call_1", "charge_card", {"order": "4411"})], stop="length").body
        )
        body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = (
            '{"order": "4411", "amount": "4'
        )
        wire.enqueue_reply(json_reply(body))
    else:
        wire.enqueue_reply(
            anthropic_answer(
                calls=[("toolu_1", "charge_card", {"order": "4411", "amount": "4"})],
                stop="max_tokens",
            )
        )

    reply = desk.chat("settle 4411 for 40.00 please", user="u")

    assert reply.state == "rolled_back"
    assert reply.text == stopped(
        provider,
        "its answer was cut off at its max_tokens limit while asking for charge_card, "
        "so none of its calls ran",
    )
    assert reply.waiting == [] and shop.calls == []
    assert len(wire.requests) == 1


def test_an_answer_the_content_filter_withheld_fails_the_run(
    shop: Shop,
    wire: WireServer,  # noqa: F811
    provider: Provider,
    clock: FakeClock,
) -> None:
    if provider.name != "openai":
        pytest.skip("content_filter is OpenAI's; Anthropic says refusal (tested above)")
    desk = shop.agent(clock=clock)
    wire.enqueue_reply(openai_answer("Your ord", stop="content_filter"))

    reply = desk.chat(ASK_TURN, user="u")

    assert reply.state == "rolled_back"
    assert reply.text == stopped(provider, "the provider's content filter withheld its answer")
