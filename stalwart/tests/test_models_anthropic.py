"""anthropic:<model> on the wire: the official client against a local Messages API server."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest
from model_wire import (  # noqa: F401
    STEADY,
    WireServer,
    clean_provider_env,
    closed_port_url,
    uncached,
    wire,
)

from stalwart.clock import FakeClock
from stalwart.errors import ModelReplyInvalid, ModelRequestRejected, ModelUnavailable
from stalwart.models import (
    AssistantMessage,
    Message,
    Model,
    PriceTable,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    load_model,
)
from stalwart.tools import ToolSpec, spec_of, tool

pytestmark = pytest.mark.usefixtures("clean_provider_env")

SELECTOR = "anthropic:claude-sonnet-5-5"
EPHEMERAL = {"type": "ephemeral"}


@tool
def get_order(order: str) -> dict[str, str]:
    """Look up an order by its number.

    Args:
        order: the order's number, as the customer wrote it
    """
    return {"order": order}


@tool(writes=True, undo="refund_card")
def charge_card(order: str, amount: str) -> dict[str, str]:
    """Charge the card on file for an order."""
    return {"order": order, "amount": amount}


def spec(function: object) -> ToolSpec:
    found = spec_of(function)
    assert found is not None
    return found


@pytest.fixture
def model(wire: WireServer, clock: FakeClock) -> Iterator[Model]:  # noqa: F811
    with load_model(
        SELECTOR, base_url=wire.url, api_key="sk-test-anthropic", clock=clock, backoff=STEADY
    ) as m:
        yield m


def test_a_tool_call_goes_out_with_the_tools_schemas_and_comes_back_as_a_tool_call(
    wire: WireServer,  # noqa: F811
    model: Model,
) -> None:
    wire.enqueue("anthropic/tool_call")

    response = model.complete(
        [UserMessage(text="where is order 4411?")],
        tools=[spec(get_order)],
        system="You are the shop's desk.",
    )

    assert response.text == "I'll look the order up."
    assert response.tool_calls == (
        ToolCall(id="toolu_01A", name="get_order", arguments={"order": "4411"}),
    )
    assert response.usage == Usage(input_tokens=412, output_tokens=57)
    assert response.model == SELECTOR
    assert response.stop_reason == "tool_use"
    [sent] = wire.requests
    assert (sent.method, sent.path) == ("POST", "/v1/messages")
    assert any("sk-test-anthropic" in value for value in sent.headers.values())
    assert sent.body == {
        "model": "claude-sonnet-5-5",
        "max_tokens": 4096,
        # Prompt caching: the system prompt, the last tool and the history's last block
        # are cache breakpoints, so the next ask reads them from the cache.
        "system": [
            {"type": "text", "text": "You are the shop's desk.", "cache_control": EPHEMERAL}
        ],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "where is order 4411?", "cache_control": EPHEMERAL}
                ],
            }
        ],
        "tools": [
            {
                "name": "get_order",
                "description": "Look up an order by its number.",
                "input_schema": {
                    "type": "object",
                    "properties": {
                        "order": {
                            "type": "string",
                            "description": "the order's number, as the customer wrote it",
                        }
                    },
                    "required": ["order"],
                    "additionalProperties": False,
                },
                "cache_control": EPHEMERAL,
            }
        ],
    }


def test_parallel_tool_calls_come_in_order_and_their_results_go_back_in_one_turn(
    wire: WireServer,  # noqa: F811
    model: Model,
) -> None:
    wire.enqueue("anthropic/parallel_tool_calls", "anthropic/text")
    history: list[Message] = [UserMessage(text="orders 4411 and 4412, and charge 4411 40.00")]

    first = model.complete(history, tools=[spec(get_order), spec(charge_card)])

    assert [(c.id, c.name, c.arguments) for c in first.tool_calls] == [
        ("toolu_01B", "get_order", {"order": "4411"}),
        ("toolu_01C", "get_order", {"order": "4412"}),
        ("toolu_01D", "charge_card", {"order": "4411", "amount": "40.00"}),
    ]
    assert first.text is None
    history += [
        first.as_message(),
        ToolResultMessage(call_id="toolu_01B", content='{"order": "4411"}'),
        ToolResultMessage(call_id="toolu_01C", content='{"order": "4412"}'),
        ToolResultMessage(call_id="toolu_01D", content="card declined", is_error=True),
    ]

    second = model.complete(history, tools=[spec(get_order), spec(charge_card)])

    assert second.text == "Order 4411 is paid."
    assert second.tool_calls == ()
    messages = uncached(wire.requests[1].body["messages"])
    assert [turn["role"] for turn in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        {"type": "tool_use", "id": "toolu_01B", "name": "get_order", "input": {"order": "4411"}},
        {"type": "tool_use", "id": "toolu_01C", "name": "get_order", "input": {"order": "4412"}},
        {
            "type": "tool_use",
            "id": "toolu_01D",
            "name": "charge_card",
            "input": {"order": "4411", "amount": "40.00"},
        },
    ]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_01B", "content": '{"order": "4411"}'},
        {"type": "tool_result", "tool_use_id": "toolu_01C", "content": '{"order": "4412"}'},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01D",
            "content": "card declined",
            "is_error": True,
        },
    ]


def test_a_text_answer_is_priced_from_the_table(wire: WireServer, clock: FakeClock) -> None:  # noqa: F811
    prices = PriceTable()
    prices.register(SELECTOR, input_per_mtok="3", output_per_mtok="15")
    wire.enqueue("anthropic/text", "anthropic/text")
    with (
        load_model(
            SELECTOR,
            base_url=wire.url,
            api_key="k",
            clock=clock,
            backoff=STEADY,
            price_table=prices,
        ) as priced,
        load_model(
            "anthropic:claude-unpriced",
            base_url=wire.url,
            api_key="k",
            clock=clock,
            backoff=STEADY,
            price_table=prices,
        ) as unpriced,
    ):
        # 1,000,000 tokens in at $3 and 200,000 out at $15 a million.
        assert priced.complete([UserMessage(text="paid?")]).cost_usd == Decimal("6")
        assert unpriced.complete([UserMessage(text="paid?")]).cost_usd is None
    assert wire.requests[1].body["model"] == "claude-unpriced"


def test_a_rate_limit_waits_as_long_as_retry_after_says(
    wire: WireServer,  # noqa: F811
    model: Model,
    clock: FakeClock,
) -> None:
    wire.enqueue("anthropic/rate_limited", "anthropic/text")

    response = model.complete([UserMessage(text="paid?")])

    assert response.text == "Order 4411 is paid."
    assert clock.slept == [7.0]
    assert len(wire.requests) == 2
    assert wire.requests[0].body == wire.requests[1].body


def test_retry_after_ms_is_preferred_to_retry_after(
    wire: WireServer,  # noqa: F811
    model: Model,
    clock: FakeClock,
) -> None:
    wire.enqueue("anthropic/rate_limited_ms", "anthropic/text")

    model.complete([UserMessage(text="paid?")])

    assert clock.slept == [2.5]


def test_overload_backs_off_doubling_when_no_retry_after_is_given(
    wire: WireServer,  # noqa: F811
    model: Model,
    clock: FakeClock,
) -> None:
    wire.enqueue("anthropic/overloaded", "anthropic/overloaded", "anthropic/text")

    assert model.complete([UserMessage(text="paid?")]).text == "Order 4411 is paid."
    assert clock.slept == [1.0, 2.0]


def test_past_the_cap_the_model_is_unavailable_with_attempts_and_last_status(
    wire: WireServer,  # noqa: F811
    model: Model,
    clock: FakeClock,
) -> None:
    wire.enqueue(*["anthropic/rate_limited"] * 4)

    with pytest.raises(ModelUnavailable) as caught:
        model.complete([UserMessage(text="paid?")])

    assert (caught.value.attempts, caught.value.last_status) == (4, 429)
    assert caught.value.code == "model_unavailable"
    assert SELECTOR in str(caught.value)
    assert clock.slept == [7.0, 7.0, 7.0]
    assert len(wire.requests) == 4


def test_a_retry_after_longer_than_the_policy_allows_gives_up_at_once(
    wire: WireServer,  # noqa: F811
    model: Model,
    clock: FakeClock,
) -> None:
    wire.enqueue("anthropic/rate_limited_long")

    with pytest.raises(ModelUnavailable, match="3600") as caught:
        model.complete([UserMessage(text="paid?")])

    assert (caught.value.attempts, caught.value.last_status) == (1, 429)
    assert clock.slept == []


@pytest.mark.parametrize(
    ("reply", "status", "says"),
    [
        ("anthropic/bad_request", 400, "messages.0.content"),
        ("anthropic/unauthorized", 401, "invalid x-api-key"),
    ],
)
def test_a_refused_request_fails_at_once(
    wire: WireServer,  # noqa: F811
    model: Model,
    clock: FakeClock,
    reply: str,
    status: int,
    says: str,
) -> None:
    wire.enqueue(reply, "anthropic/text")

    with pytest.raises(ModelRequestRejected, match=says) as caught:
        model.complete([UserMessage(text="paid?")])

    assert caught.value.status == status
    assert len(wire.requests) == 1
    assert clock.slept == []


def test_a_malformed_body_is_a_model_error_and_is_not_retried(
    wire: WireServer,  # noqa: F811
    model: Model,
) -> None:
    wire.enqueue("anthropic/malformed_body", "anthropic/text")

    with pytest.raises(ModelReplyInvalid, match="unreadable answer"):
        model.complete([UserMessage(text="paid?")])

    assert len(wire.requests) == 1


def test_tool_input_that_is_not_a_json_object_is_a_model_error(
    wire: WireServer,  # noqa: F811
    model: Model,
) -> None:
    wire.enqueue("anthropic/malformed_tool_input")

    with pytest.raises(ModelReplyInvalid, match="toolu_01E"):
        model.complete([UserMessage(text="paid?")], tools=[spec(get_order)])


def test_no_connection_is_retried_then_unavailable_with_no_status(clock: FakeClock) -> None:
    model = load_model(
        SELECTOR, base_url=closed_port_url(), api_key="k", clock=clock, backoff=STEADY
    )
    with model, pytest.raises(ModelUnavailable) as caught:
        model.complete([UserMessage(text="paid?")])

    assert (caught.value.attempts, caught.value.last_status) == (4, None)
    assert clock.slept == [1.0, 2.0, 4.0]


def test_key_and_base_url_come_from_the_clients_environment_variables(
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", wire.url)
    wire.enqueue("anthropic/text")

    with load_model(SELECTOR, clock=clock, backoff=STEADY) as model:
        assert model.complete([UserMessage(text="paid?")]).text == "Order 4411 is paid."

    assert any("sk-from-env" in value for value in wire.requests[0].headers.values())


def test_max_tokens_is_the_models_default_unless_a_call_says_otherwise(
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
) -> None:
    wire.enqueue("anthropic/text", "anthropic/text")

    with load_model(
        SELECTOR, base_url=wire.url, api_key="k", clock=clock, backoff=STEADY, max_tokens=256
    ) as m:
        m.complete([UserMessage(text="paid?")])
        m.complete([UserMessage(text="paid?")], max_tokens=32)

    assert [r.body["max_tokens"] for r in wire.requests] == [256, 32]
    assert "tools" not in wire.requests[0].body
    assert "system" not in wire.requests[0].body


def test_an_empty_answer_in_the_history_is_left_off_and_the_user_turns_merge(
    wire: WireServer,  # noqa: F811
    model: Model,
) -> None:
    wire.enqueue("anthropic/text")

    model.complete([UserMessage(text="a"), AssistantMessage(), UserMessage(text="b")])

    assert uncached(wire.requests[0].body["messages"]) == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    ]
