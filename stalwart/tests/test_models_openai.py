"""openai:<model> on the wire: the official client against a local Chat Completions server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal

import pytest
from model_wire import STEADY, WireServer, clean_provider_env, closed_port_url, wire  # noqa: F401

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

SELECTOR = "openai:gpt-4.1"


@tool
def get_order(order: str) -> dict[str, str]:
    """Look up an order by its number."""
    return {"order": order}


@tool(writes=True, undo="refund_card")
def charge_card(order: str, amount: str, note: str | None = None) -> dict[str, str]:
    """Charge the card on file for an order.

    Charges once per order and amount.
    """
    return {"order": order, "amount": amount}


def spec(function: object) -> ToolSpec:
    found = spec_of(function)
    assert found is not None
    return found


@pytest.fixture
def model(wire: WireServer, clock: FakeClock) -> Iterator[Model]:  # noqa: F811
    with load_model(
        SELECTOR, base_url=f"{wire.url}/v1", api_key="sk-test-openai", clock=clock, backoff=STEADY
    ) as m:
        yield m


def test_a_tool_call_goes_out_as_a_function_tool_and_comes_back_parsed(
    wire: WireServer,  # noqa: F811
    model: Model,
) -> None:
    wire.enqueue("openai/tool_call")

    response = model.complete(
        [UserMessage(text="where is order 4411?")],
        tools=[spec(get_order), spec(charge_card)],
        system="You are the shop's desk.",
    )

    assert response.text is None
    assert response.tool_calls == (
        ToolCall(id="call_A", name="get_order", arguments={"order": "4411"}),
    )
    assert response.usage == Usage(input_tokens=380, output_tokens=18)
    assert (response.model, response.stop_reason) == (SELECTOR, "tool_calls")
    [sent] = wire.requests
    assert (sent.method, sent.path) == ("POST", "/v1/chat/completions")
    assert sent.headers["authorization"] == "Bearer sk-test-openai"
    assert sent.body["model"] == "gpt-4.1"
    assert sent.body["messages"] == [
        {"role": "system", "content": "You are the shop's desk."},
        {"role": "user", "content": "where is order 4411?"},
    ]
    assert sent.body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_order",
                "description": "Look up an order by its number.",
                "parameters": spec(get_order).json_schema(),
            },
        },
        {
            "type": "function",
            "function": {
                "name": "charge_card",
                "description": "Charge the card on file for an order.",
                "parameters": spec(charge_card).json_schema(),
            },
        },
    ]
    assert "max_completion_tokens" not in sent.body


def test_parallel_tool_calls_come_in_order_and_each_result_goes_back_by_its_call_id(
    wire: WireServer,  # noqa: F811
    model: Model,
) -> None:
    wire.enqueue("openai/parallel_tool_calls", "openai/text")
    history: list[Message] = [UserMessage(text="orders 4411 and 4412, and charge 4411 40.00")]

    first = model.complete(history, tools=[spec(get_order), spec(charge_card)])

    assert [(c.id, c.name, c.arguments) for c in first.tool_calls] == [
        ("call_B", "get_order", {"order": "4411"}),
        ("call_C", "get_order", {"order": "4412"}),
        ("call_D", "charge_card", {"order": "4411", "amount": "40.00"}),
    ]
    history += [
        first.as_message(),
        ToolResultMessage(call_id="call_B", content='{"order": "4411"}'),
        ToolResultMessage(call_id="call_C", content='{"order": "4412"}'),
        ToolResultMessage(call_id="call_D", content="card declined", is_error=True),
    ]

    second = model.complete(history, tools=[spec(get_order), spec(charge_card)])

    assert second.text == "Order 4411 is paid."
    messages = wire.requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "tool"]
    assistant = messages[1]
    assert assistant["content"] is None
    assert [
        (c["id"], c["type"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in assistant["tool_calls"]
    ] == [
        ("call_B", "function", "get_order", {"order": "4411"}),
        ("call_C", "function", "get_order", {"order": "4412"}),
        ("call_D", "function", "charge_card", {"order": "4411", "amount": "40.00"}),
    ]
    assert messages[2:] == [
        {"role": "tool", "tool_call_id": "call_B", "content": '{"order": "4411"}'},
        {"role": "tool", "tool_call_id": "call_C", "content": '{"order": "4412"}'},
        {"role": "tool", "tool_call_id": "call_D", "content": "card declined"},
    ]


def test_a_summary_reply_goes_on_the_wire_as_an_assistant_message(
    wire: WireServer,  # noqa: F811
    model: Model,
) -> None:
    # What a rewind leaves in the history: the person's turn and one summary reply.
    wire.enqueue("openai/text")
    summary = "This run stopped: provision_account failed (RuntimeError)."

    model.complete(
        [
            UserMessage(text="charge order 4411 40.00"),
            AssistantMessage(text=summary),
            UserMessage(text="try again"),
        ]
    )

    assert wire.requests[0].body["messages"] == [
        {"role": "user", "content": "charge order 4411 40.00"},
        {"role": "assistant", "content": summary},
        {"role": "user", "content": "try again"},
    ]


def test_a_text_answer_is_priced_from_the_table(wire: WireServer, clock: FakeClock) -> None:  # noqa: F811
    prices = PriceTable()
    prices.register(SELECTOR, input_per_mtok="2", output_per_mtok="8")
    wire.enqueue("openai/text")

    with load_model(
        SELECTOR,
        base_url=f"{wire.url}/v1",
        api_key="k",
        clock=clock,
        backoff=STEADY,
        price_table=prices,
    ) as model:
        response = model.complete([UserMessage(text="paid?")], max_tokens=64)

    # 1,000,000 tokens in at $2 and 250,000 out at $8 a million.
    assert response.cost_usd == Decimal("4")
    assert response.usage == Usage(input_tokens=1_000_000, output_tokens=250_000)
    assert wire.requests[0].body["max_completion_tokens"] == 64


def test_a_rate_limit_waits_as_long_as_retry_after_says(
    wire: WireServer,  # noqa: F811
    model: Model,
    clock: FakeClock,
) -> None:
    wire.enqueue("openai/rate_limited", "openai/server_error", "openai/text")

    assert model.complete([UserMessage(text="paid?")]).text == "Order 4411 is paid."
    # 4 s as asked; then the 503 had no retry-after: the second step of the doubling.
    assert clock.slept == [4.0, 2.0]
    assert len(wire.requests) == 3


def test_past_the_cap_the_model_is_unavailable(
    wire: WireServer,  # noqa: F811
    model: Model,
    clock: FakeClock,
) -> None:
    wire.enqueue(*["openai/server_error"] * 4)

    with pytest.raises(ModelUnavailable) as caught:
        model.complete([UserMessage(text="paid?")])

    assert (caught.value.attempts, caught.value.last_status) == (4, 503)
    assert clock.slept == [1.0, 2.0, 4.0]


@pytest.mark.parametrize(
    ("reply", "status", "says"),
    [
        ("openai/bad_request", 400, "Invalid schema for function 'get_order'"),
        ("openai/unauthorized", 401, "Incorrect API key"),
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
    wire.enqueue(reply, "openai/text")

    with pytest.raises(ModelRequestRejected, match=says) as caught:
        model.complete([UserMessage(text="paid?")])

    assert caught.value.status == status
    assert len(wire.requests) == 1
    assert clock.slept == []


def test_arguments_that_are_not_json_are_a_model_error_naming_the_call(
    wire: WireServer,  # noqa: F811
    model: Model,
) -> None:
    wire.enqueue("openai/malformed_arguments")

    with pytest.raises(ModelReplyInvalid, match=r"call_E \(get_order\): arguments are not JSON"):
        model.complete([UserMessage(text="paid?")], tools=[spec(get_order)])


def test_a_malformed_body_is_a_model_error_and_is_not_retried(
    wire: WireServer,  # noqa: F811
    model: Model,
) -> None:
    wire.enqueue("openai/malformed_body", "openai/text")

    with pytest.raises(ModelReplyInvalid, match="unreadable answer"):
        model.complete([UserMessage(text="paid?")])

    assert len(wire.requests) == 1


def test_no_connection_is_retried_then_unavailable(clock: FakeClock) -> None:
    model = load_model(
        SELECTOR, base_url=f"{closed_port_url()}/v1", api_key="k", clock=clock, backoff=STEADY
    )
    with model, pytest.raises(ModelUnavailable) as caught:
        model.complete([UserMessage(text="paid?")])

    assert (caught.value.attempts, caught.value.last_status) == (4, None)


def test_key_and_base_url_come_from_the_clients_environment_variables(
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{wire.url}/v1")
    wire.enqueue("openai/text")

    with load_model(SELECTOR, clock=clock, backoff=STEADY) as model:
        assert model.complete([UserMessage(text="paid?")]).text == "Order 4411 is paid."

    assert wire.requests[0].headers["authorization"] == "Bearer sk-from-env"


def test_an_explicit_base_url_wins_over_the_environment(
    wire: WireServer,  # noqa: F811
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{closed_port_url()}/v1")
    wire.enqueue("openai/text")

    with load_model(
        SELECTOR, base_url=f"{wire.url}/v1", api_key="k", clock=clock, backoff=STEADY
    ) as model:
        assert model.complete([UserMessage(text="paid?")]).text == "Order 4411 is paid."


def test_a_refusal_is_the_answers_text(wire: WireServer, model: Model) -> None:  # noqa: F811
    wire.enqueue("openai/refusal")

    assert model.complete([UserMessage(text="help")]).text == "I can't help with that."


def test_an_empty_answer_in_the_history_is_left_off_the_wire(
    wire: WireServer,  # noqa: F811
    model: Model,
) -> None:
    wire.enqueue("openai/text")

    model.complete([UserMessage(text="a"), AssistantMessage(), UserMessage(text="b")])

    assert wire.requests[0].body["messages"] == [
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
    ]
