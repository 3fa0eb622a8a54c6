"""Provider-neutral messages: what a run keeps in its history and stores in the record."""

from __future__ import annotations

from decimal import Decimal

import pydantic
import pytest

from stalwart.models import (
    MESSAGES,
    AssistantMessage,
    Message,
    ModelResponse,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from stalwart.tools import spec_of, tool

pytestmark = pytest.mark.unit


def test_a_history_goes_to_json_and_back_unchanged() -> None:
    history: list[Message] = [
        UserMessage(text="charge order 4411 40.00"),
        AssistantMessage(
            text="Charging.",
            tool_calls=(
                ToolCall(id="c1", name="charge_card", arguments={"order": "4411", "n": [1, 2]}),
                ToolCall(id="c2", name="get_order", arguments={}),
            ),
        ),
        ToolResultMessage(call_id="c1", content='{"ok": true}'),
        ToolResultMessage(call_id="c2", content="no such order", is_error=True),
    ]

    text = MESSAGES.dump_json(history)

    assert MESSAGES.validate_json(text) == history


def test_a_stored_message_of_unknown_role_is_refused() -> None:
    with pytest.raises(pydantic.ValidationError):
        MESSAGES.validate_python([{"role": "system", "text": "hi"}])


def test_messages_are_frozen() -> None:
    message = UserMessage(text="hi")

    with pytest.raises(pydantic.ValidationError):
        message.text = "changed"


def test_a_response_goes_into_the_history_as_the_assistants_message() -> None:
    call = ToolCall(id="c1", name="get_order", arguments={"order": "4411"})
    response = ModelResponse(
        text=None,
        tool_calls=(call,),
        usage=Usage(input_tokens=3, output_tokens=4),
        cost_usd=Decimal("0.01"),
        model="anthropic:m",
    )

    assert response.as_message() == AssistantMessage(text=None, tool_calls=(call,))


def test_usage_adds_up() -> None:
    total = Usage(input_tokens=3, output_tokens=4) + Usage(input_tokens=10, output_tokens=1)

    assert total == Usage(input_tokens=13, output_tokens=5)


def test_a_tool_definition_is_the_specs_name_summary_and_schema() -> None:
    @tool
    def get_order(order: str, verbose: bool = False) -> dict[str, str]:
        """Look up an order
        by its number.

        Returns the order's lines and state.
        """
        return {}

    spec = spec_of(get_order)
    assert spec is not None

    definition = ToolDefinition.from_spec(spec)

    assert definition.name == "get_order"
    assert definition.description == "Look up an order by its number."
    assert definition.parameters == spec.json_schema()
    assert definition.parameters["required"] == ["order"]
