"""The model loop on the wire: each provider's official client against a local server.

A turn the selector cannot read goes to the model (on_unread: model, loaded from
agent.yaml with the key and base URL from the environment); its tool calls run as steps,
a write waits for its confirmation, a failure is undone, no model is asked again, and
the next turn's request carries the rewind's summary instead of the failed run.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from model_shop import (
    ASK_TURN,
    SETTLE_TURN,
    SUMMARY,
    Provider,
    Shop,
    provider_fixture,  # noqa: F401  (the fixture "provider")
    wire_shop_fixture,  # noqa: F401  (the fixture "shop")
    write_shop,
)
from model_wire import WireServer, clean_provider_env, load_reply, wire  # noqa: F401

from stalwart import Agent, FakeClock

pytestmark = pytest.mark.usefixtures("clean_provider_env")


def test_a_failed_run_is_undone_and_the_next_request_carries_only_its_summary(
    shop: Shop,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
) -> None:
    desk = shop.agent(clock=clock)
    assert desk.model is not None and desk.model.selector == provider.selector
    answer = provider.answer
    wire.enqueue_reply(answer(calls=[("call_1", "get_order", {"order": "4411"})]))
    wire.enqueue_reply(
        answer(
            "Charging the order.",
            [("call_2", "charge_card", {"order": "4411", "amount": "40.00"})],
            usage=(300, 40),
        )
    )
    wire.enqueue_reply(answer(calls=[("call_3", "provision_account", {"order": "4411"})]))
    wire.enqueue_reply(answer("Nothing was charged in the end.", usage=(500, 12)))

    reply = desk.chat(SETTLE_TURN, user="u")

    [confirm] = reply.waiting
    assert confirm.kind == "confirm" and confirm.tool == "charge_card"
    assert reply.text == (
        'Run charge_card(order="4411", amount="40.00")?\n'
        "Where the arguments came from: order from your turn, amount from step 1 (get_order)."
    )
    assert confirm.sources == {"order": "turn", "amount": "step 1 (get_order)"}
    assert shop.calls == ["get_order"]
    assert len(wire.requests) == 2
    first = wire.requests[0].body
    assert [tool.get("name") or tool["function"]["name"] for tool in first["tools"]] == [
        "get_order",
        "charge_card",
        "refund_card",
        "provision_account",
        "close_account",
    ]
    assert provider.tool_results(wire.requests[1].body) == [
        ("call_1", '{"amount":"40.00","order":"4411","status":"unpaid"}')
    ]

    reply = desk.confirm_current("u", "approve")
    assert reply.waiting[0].tool == "provision_account"
    assert provider.tool_results(wire.requests[2].body)[-1] == (
        "call_2",
        '{"amount":"40.00","charge":"ch-4411","order":"4411"}',
    )
    shop.fail("provision_account")

    reply = desk.confirm_current("u", "approve")

    assert reply.state == "rolled_back"
    assert reply.text == SUMMARY
    assert shop.calls == ["get_order", "charge_card", "provision_account", "refund_card"]
    assert len(wire.requests) == 3  # the model is not called again once the run failed

    reply = desk.chat(ASK_TURN, user="u")

    assert (reply.state, reply.text) == ("done", "Nothing was charged in the end.")
    assert len(wire.requests) == 4
    if provider.name == "openai":
        assert wire.requests[3].body["messages"][0]["role"] == "system"
    sent = provider.conversation(wire.requests[3].body)
    assert sent == provider.plain_conversation(
        ("user", SETTLE_TURN), ("assistant", SUMMARY), ("user", ASK_TURN)
    )
    wire_text = json.dumps(sent)
    for trace in ("get_order", "unpaid", "ch-4411", "call_1", "Charging the order."):
        assert trace not in wire_text

    usage = desk.usage("u")
    assert [(run.run, run.usage.calls) for run in usage.runs] == [("u#1", 3), ("u#2", 1)]
    assert (usage.total.input_tokens, usage.total.output_tokens) == (1000, 92)
    assert usage.total.cost_usd == Decimal("0.00438")  # 1000 * 3 / 1e6 + 92 * 15 / 1e6


def test_parallel_tool_calls_run_as_consecutive_steps_and_answer_in_one_request(
    shop: Shop,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
) -> None:
    desk = shop.agent(clock=clock)
    wire.enqueue_reply(
        provider.answer(
            calls=[
                ("call_a", "get_order", {"order": "4411"}),
                ("call_b", "get_order", {"order": "4412"}),
            ]
        )
    )
    wire.enqueue_reply(provider.answer("Both are unpaid."))

    reply = desk.chat("are 4411 and 4412 settled?", user="u")

    assert (reply.state, reply.text) == ("done", "Both are unpaid.")
    assert [(c.step, c.tool, c.args) for c in desk.record("u")] == [
        (1, "get_order", {"order": "4411"}),
        (2, "get_order", {"order": "4412"}),
    ]
    results = provider.tool_results(wire.requests[1].body)
    assert [call_id for call_id, _ in results] == ["call_a", "call_b"]


def test_a_rate_limit_is_waited_out_as_retry_after_says(
    shop: Shop,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
) -> None:
    desk = shop.agent(clock=clock)
    wire.enqueue(provider.rate_limited)
    wire.enqueue_reply(provider.answer("Order 4411 is unpaid."))

    reply = desk.chat(SETTLE_TURN, user="u")

    assert (reply.state, reply.text) == ("done", "Order 4411 is unpaid.")
    assert clock.slept == [provider.retry_after]
    assert len(wire.requests) == 2


def test_overload_past_the_cap_with_nothing_written_gets_one_clear_reply(
    shop: Shop,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
) -> None:
    desk = shop.agent(clock=clock)
    status = load_reply(provider.overloaded).status
    for _ in range(4):
        wire.enqueue(provider.overloaded)

    reply = desk.chat(SETTLE_TURN, user="u")

    assert reply.state == "rolled_back"
    assert reply.text == (
        f"This run stopped: the model {provider.selector} could not answer (still unavailable "
        f"after 4 tries, last: HTTP {status}). Nothing had been written, so nothing needed "
        "undoing."
    )
    assert clock.slept == [1.0, 2.0, 4.0]
    assert shop.calls == []


def test_a_model_that_fails_after_a_write_leaves_the_write_undone(
    shop: Shop,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
) -> None:
    desk = shop.agent(clock=clock)
    wire.enqueue_reply(
        provider.answer(calls=[("call_1", "charge_card", {"order": "4411", "amount": "40.00"})])
    )
    for _ in range(4):
        wire.enqueue(provider.rate_limited)

    reply = desk.chat("settle 4411 for 40.00 please", user="u")
    assert reply.waiting[0].sources == {"order": "turn", "amount": "turn"}
    reply = desk.confirm_current("u", "approve")

    assert reply.state == "rolled_back"
    assert reply.text == (
        f"This run stopped: the model {provider.selector} could not answer (still unavailable "
        "after 4 tries, last: HTTP 429). Undone, latest first: charge_card (by refund_card)."
    )
    assert shop.calls == ["charge_card", "refund_card"]
    assert len(wire.requests) == 5


def test_a_malformed_body_fails_the_turn_and_is_not_retried(
    shop: Shop,
    provider: Provider,
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
) -> None:
    desk = shop.agent(clock=clock)
    wire.enqueue(f"{provider.name}/malformed_body")

    reply = desk.chat(SETTLE_TURN, user="u")

    assert reply.text == (
        f"This run stopped: the model {provider.selector} could not answer (its answer could "
        "not be read). Nothing had been written, so nothing needed undoing."
    )
    assert len(wire.requests) == 1
    assert desk.usage("u").total.calls == 1


def test_the_model_is_loaded_with_the_agent_from_the_environment(
    tmp_path: Path, provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    shop = write_shop(tmp_path, model=provider.selector)
    from stalwart.errors import ModelConfigError

    with pytest.raises(ModelConfigError, match=f"no API key; set {provider.env}_API_KEY"):
        Agent.from_file(shop.yaml)
    monkeypatch.setenv(f"{provider.env}_API_KEY", "sk-test")
    with Agent.from_file(shop.yaml) as desk:
        assert desk.model is not None and desk.model.selector == provider.selector
