"""The scripted model: the real Model (backoff, prices) over answers from a script."""

from __future__ import annotations

from decimal import Decimal

import pytest
from model_wire import STEADY

from stalwart.clock import FakeClock
from stalwart.errors import ModelUnavailable
from stalwart.models import (
    AssistantMessage,
    Completion,
    Model,
    PriceTable,
    ProviderFailure,
    ScriptedAdapter,
    ScriptExhausted,
    ToolCall,
    Usage,
    UserMessage,
)
from stalwart.tools import spec_of, tool

pytestmark = pytest.mark.unit


@tool
def get_order(order: str) -> dict[str, str]:
    """Look up an order."""
    return {"order": order}


def test_answers_come_in_script_order_and_every_request_is_recorded() -> None:
    call = ToolCall(id="c1", name="get_order", arguments={"order": "4411"})
    script = ScriptedAdapter(
        [AssistantMessage(tool_calls=(call,)), AssistantMessage(text="Paid.")], "scripted:desk"
    )
    spec = spec_of(get_order)
    assert spec is not None

    with Model("scripted:desk", script, clock=FakeClock()) as model:
        first = model.complete([UserMessage(text="4411?")], tools=[spec], system="Desk.")
        second = model.complete([UserMessage(text="4411?"), first.as_message()])

    assert first.tool_calls == (call,)
    assert second.text == "Paid."
    assert [r.system for r in script.requests] == ["Desk.", None]
    assert [t.name for t in script.requests[0].tools] == ["get_order"]
    assert script.requests[1].messages[1] == AssistantMessage(tool_calls=(call,))
    assert (script.remaining, script.closed) == (0, True)


def test_failures_in_the_script_go_through_the_backoff_policy() -> None:
    clock = FakeClock()
    script = ScriptedAdapter([ProviderFailure(529, "Overloaded")] * 4)
    model = Model("scripted:model", script, clock=clock, backoff=STEADY)

    with pytest.raises(ModelUnavailable) as caught:
        model.complete([UserMessage(text="hi")])

    assert (caught.value.attempts, caught.value.last_status) == (4, 529)
    assert clock.slept == [1.0, 2.0, 4.0]


def test_a_completion_step_carries_usage_and_is_priced() -> None:
    prices = PriceTable()
    prices.register("scripted:model", input_per_mtok=1, output_per_mtok=2)
    step = Completion(text="ok", tool_calls=(), usage=Usage(input_tokens=500_000), stop_reason="x")
    model = Model("scripted:model", ScriptedAdapter([step]), prices=prices)

    assert model.complete([UserMessage(text="hi")]).cost_usd == Decimal("0.5")


def test_a_call_past_the_script_is_a_clear_error() -> None:
    model = Model("scripted:model", ScriptedAdapter([]))

    with pytest.raises(ScriptExhausted, match="called 1 times"):
        model.complete([UserMessage(text="hi")])
