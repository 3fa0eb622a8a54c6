"""The model loop as real providers behave: bodies that are not answers, stop reasons, the
cap, duplicate call ids, caching and its cost, timeouts, and what agent.yaml sets.

Each test drives the official client (`anthropic`, `openai`) against the provider's local
stand-in on 127.0.0.1 (`model_wire.WireServer`): real sockets, no key, no internet.
"""

from __future__ import annotations

import json
from decimal import Decimal
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
    provider_fixture,  # noqa: F401  (the fixture "provider")
    wire_shop,
    wire_shop_fixture,  # noqa: F401  (the fixture "shop")
)
from model_wire import Reply, WireServer, clean_provider_env, uncached, wire  # noqa: F401

from stalwart import FakeClock, texts
from stalwart.errors import ConfigError
from stalwart.models import ModelProgress

pytestmark = pytest.mark.usefixtures("clean_provider_env")

NOTHING_WRITTEN = "Nothing had been written, so nothing needed undoing."


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
    assert provider.conversation(wire.requests[1].body) == provider.plain_conversation(
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
    reply = desk.confirm_current("u", "approve")

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


# --- 2. the cap never sends a write it would then undo ---


def test_the_last_ask_the_cap_allows_is_told_to_answer_in_words(
    shop: Shop,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
) -> None:
    desk = shop.agent(clock=clock, max_model_calls=2)
    wire.enqueue_reply(provider.answer(calls=[("call_1", "get_order", {"order": "4411"})]))
    wire.enqueue_reply(provider.answer("Order 4411 is unpaid: 40.00."))

    reply = desk.chat(SETTLE_TURN, user="u")

    assert (reply.state, reply.text) == ("done", "Order 4411 is unpaid: 40.00.")
    choices = [request.body.get("tool_choice") for request in wire.requests]
    assert choices == [None, "none" if provider.name == "openai" else {"type": "none"}]
    assert "tools" in wire.requests[1].body  # the history holds a call: its tool is there


def test_a_write_asked_for_on_the_last_allowed_ask_is_never_sent(
    shop: Shop,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
) -> None:
    desk = shop.agent(clock=clock, max_model_calls=2)
    wire.enqueue_reply(provider.answer(calls=[("call_1", "get_order", {"order": "4411"})]))
    # A server that does not honour tool_choice none asks for the charge anyway.
    wire.enqueue_reply(
        provider.answer(calls=[("call_2", "charge_card", {"order": "4411", "amount": "40.00"})])
    )

    reply = desk.chat(SETTLE_TURN, user="u")

    assert reply.state == "rolled_back" and reply.waiting == []  # never offered
    assert reply.text == (
        f"This run stopped: the model {provider.selector} made 2 calls without finishing; its "
        "last answer asked for charge_card, which did not run, as no ask was left to finish "
        f"the run. {NOTHING_WRITTEN}"
    )
    assert shop.calls == ["get_order"]  # no charge, so no refund
    assert len(wire.requests) == 2


# --- 5. cost counts what the provider bills ---


def test_cached_input_is_counted_and_priced_as_the_provider_bills_it(
    shop: Shop,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
) -> None:
    desk = shop.agent(clock=clock)
    if provider.name == "openai":
        # prompt_tokens counts the cached ones: 50 at $3, 7000 at the cached $0.75.
        wire.enqueue_reply(openai_answer("Unpaid.", usage=(7050, 20), cached=7000))
        expected_input, expected_cost = 7050, Decimal("0.0057")
    else:
        # input_tokens leaves the cache out: 50 at $3, 7000 read at $0.30, 1000 written at
        # $3.75 (0.1x and 1.25x the input price).
        wire.enqueue_reply(anthropic_answer("Unpaid.", usage=(50, 20), cache=(7000, 1000)))
        expected_input, expected_cost = 8050, Decimal("0.0063")

    desk.chat(ASK_TURN, user="u")

    total = desk.usage("u").total
    assert (total.input_tokens, total.output_tokens) == (expected_input, 20)
    assert total.cost_usd == expected_cost


def test_anthropic_requests_mark_the_tools_system_and_history_for_the_prompt_cache(
    tmp_path: Path,
    wire: WireServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    clock: FakeClock,
) -> None:
    anthropic = PROVIDERS[0]
    shop = wire_shop(tmp_path, anthropic, wire.url, monkeypatch)
    desk = shop.agent(clock=clock)
    wire.enqueue_reply(anthropic.answer(calls=[("toolu_1", "get_order", {"order": "4411"})]))
    wire.enqueue_reply(anthropic.answer("Unpaid."))

    desk.chat(ASK_TURN, user="u")

    for request in wire.requests:
        body = request.body
        assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        assert [b.get("cache_control") for b in body["system"]] == [{"type": "ephemeral"}]
        marked = [b for m in body["messages"] for b in m["content"] if "cache_control" in b]
        assert marked == [body["messages"][-1]["content"][-1]]
    shop.close()


# --- 6. timeouts ---


def test_a_timeout_is_tried_once_more_then_fails_the_ask_with_its_own_reason(
    tmp_path: Path,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    clock: FakeClock,
) -> None:
    shop = wire_shop(tmp_path, provider, wire.url, monkeypatch, agent_keys="    timeout: 0.2\n")
    desk = shop.agent(clock=clock)
    for _ in range(3):
        wire.enqueue_reply(Reply(200, b"{}", {"content-type": "application/json"}, held=True))

    reply = desk.chat(SETTLE_TURN, user="u")

    assert reply.state == "rolled_back"
    assert reply.text == stopped(provider, "no answer within 0.2 s, on 2 tries")
    assert len(wire.requests) == 2  # not four, as a lost connection would be
    assert clock.slept == [1.0]
    shop.close()


def test_one_timeout_then_an_answer_goes_on(
    tmp_path: Path,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    clock: FakeClock,
) -> None:
    shop = wire_shop(tmp_path, provider, wire.url, monkeypatch, agent_keys="    timeout: 0.2\n")
    desk = shop.agent(clock=clock)
    wire.enqueue_reply(Reply(200, b"{}", {"content-type": "application/json"}, held=True))
    wire.enqueue_reply(provider.answer("Order 4411 is unpaid."))

    reply = desk.chat(SETTLE_TURN, user="u")

    assert (reply.state, reply.text) == ("done", "Order 4411 is unpaid.")
    assert len(wire.requests) == 2
    shop.close()


# --- 7. what agent.yaml sets ---


def test_instructions_max_tokens_and_temperature_from_agent_yaml_go_on_the_wire(
    tmp_path: Path,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    clock: FakeClock,
) -> None:
    (tmp_path / "desk.md").write_text("Answer in one sentence.\nSign as the desk.\n")
    keys = "    instructions: {file: ./desk.md}\n    max_tokens: 512\n"
    if provider.name == "openai":
        keys += "    temperature: 0.2\n"  # the Messages API takes none
    shop = wire_shop(tmp_path, provider, wire.url, monkeypatch, agent_keys=keys)
    desk = shop.agent(clock=clock)
    wire.enqueue_reply(provider.answer("Unpaid. -- the desk"))

    desk.chat(ASK_TURN, user="u")

    body = wire.requests[0].body
    rules = texts.MODEL_SYSTEM.format(agent="desk")
    expected = f"{rules}\n\nAnswer in one sentence.\nSign as the desk."
    if provider.name == "openai":
        assert body["messages"][0] == {"role": "system", "content": expected}
        assert body["max_completion_tokens"] == 512
    else:
        assert [b["text"] for b in body["system"]] == [expected]
        assert body["max_tokens"] == 512
    assert body.get("temperature") == (0.2 if provider.name == "openai" else None)
    shop.close()


@pytest.mark.parametrize(
    ("keys", "key_path", "expected"),
    [
        ("    temperature: 0.5\n", "agents.desk.temperature", "takes no temperature"),
        ("    thinking: {budget_tokens: 512}\n", "agents.desk.thinking", ">= 1024"),
        (
            "    max_tokens: 2048\n    thinking: {budget_tokens: 4096}\n",
            "agents.desk.thinking",
            "below max_tokens (2048)",
        ),
        ("    timeout: 0\n", "agents.desk.timeout", "seconds > 0"),
        (
            "    instructions: {file: ./nowhere.md}\n",
            "agents.desk.instructions.file",
            "cannot read",
        ),
    ],
)
def test_model_options_a_provider_would_refuse_fail_when_the_agent_loads(
    tmp_path: Path,
    wire: WireServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    keys: str,
    key_path: str,
    expected: str,
) -> None:
    shop = wire_shop(tmp_path, PROVIDERS[0], wire.url, monkeypatch, agent_keys=keys)
    with pytest.raises(ConfigError) as caught:
        shop.agent()
    assert caught.value.key_path == key_path
    assert expected in caught.value.expected


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ("    thinking: {budget_tokens: 2048}\n", "extended thinking is Claude's"),
        ("    temperature: 2.5\n", "from 0 to 2 for openai"),
    ],
)
def test_openai_options_it_would_refuse_fail_when_the_agent_loads(
    tmp_path: Path,
    wire: WireServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    keys: str,
    expected: str,
) -> None:
    shop = wire_shop(tmp_path, PROVIDERS[1], wire.url, monkeypatch, agent_keys=keys)
    with pytest.raises(ConfigError, match=expected):
        shop.agent()


THINKING = {"type": "thinking", "thinking": "The turn names 4411.", "signature": "sig-Ab3"}
REDACTED = {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"}


def test_claudes_thinking_blocks_go_back_unchanged_with_the_calls_they_came_with(
    tmp_path: Path,
    wire: WireServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    clock: FakeClock,
) -> None:
    anthropic = PROVIDERS[0]
    keys = "    thinking: {budget_tokens: 2048}\n"
    shop = wire_shop(tmp_path, anthropic, wire.url, monkeypatch, agent_keys=keys)
    desk = shop.agent(clock=clock)
    wire.enqueue_reply(
        anthropic_answer(
            calls=[("toolu_1", "get_order", {"order": "4411"})], thinking=[THINKING, REDACTED]
        )
    )
    wire.enqueue_reply(anthropic_answer("Unpaid."))

    reply = desk.chat(ASK_TURN, user="u")

    assert (reply.state, reply.text) == ("done", "Unpaid.")
    first, second = (request.body for request in wire.requests)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in first
    [answered] = [m for m in uncached(second["messages"]) if m["role"] == "assistant"]
    assert answered["content"] == [
        THINKING,
        REDACTED,
        {"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": {"order": "4411"}},
    ]
    shop.close()


def test_streamed_answers_show_progress_and_run_like_any_answer(
    tmp_path: Path,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    clock: FakeClock,
) -> None:
    shop = wire_shop(tmp_path, provider, wire.url, monkeypatch, agent_keys="    stream: true\n")
    seen: list[ModelProgress] = []
    desk = shop.agent(clock=clock, on_progress=seen.append)
    wire.enqueue_reply(
        provider.stream(["Looking ", "it up."], [("call_1", "get_order", {"order": "4411"})])
    )
    wire.enqueue_reply(provider.stream(["Order 4411 ", "is unpaid."], usage=(300, 9)))

    reply = desk.chat(ASK_TURN, user="u")

    assert (reply.state, reply.text) == ("done", "Order 4411 is unpaid.")
    assert shop.calls == ["get_order"]
    assert all(request.body["stream"] is True for request in wire.requests)
    assert [(p.run, p.ask, p.text) for p in seen] == [
        ("u#1", 1, "Looking "),
        ("u#1", 1, "Looking it up."),
        ("u#1", 2, "Order 4411 "),
        ("u#1", 2, "Order 4411 is unpaid."),
    ]
    assert provider.tool_results(wire.requests[1].body) == [
        ("call_1", '{"amount":"40.00","order":"4411","status":"unpaid"}')
    ]
    assert desk.usage("u").total.input_tokens == 400
    shop.close()
