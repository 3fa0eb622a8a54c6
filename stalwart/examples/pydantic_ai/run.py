"""Chapter 34's failed order, as a Pydantic AI agent guarded by stalwart.

The shop's desk (../shop: its agent.yaml, tools and rulebook) grown into a Pydantic AI
agent: the model, scripted with Pydantic AI's own FunctionModel (no network, no key),
charges the card, updates the CRM and provisions the account, one call per answer; the
provisioning service is down. A person approves each write; stalwart keys and records
each call before it is sent, and the failed run is undone last write first, by stalwart,
with no further model request. The record is this folder's own.

Run it from this folder: `python run.py` (or `make demo` from the repository's root).
"""

from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

import stalwart
from stalwart.adapters.pydantic_ai import GuardedResult, StalwartDriver, StalwartGuard
from stalwart.record import open_store

HERE = Path(__file__).resolve().parent

# The shop's desk: its agent.yaml's tool facts (each write's undo), its rulebook, and a
# record in this folder. Loading it imports the shop's tools (`python: shop.tools`).
desk = stalwart.Agent.from_file(
    HERE.parent / "shop" / "agent.yaml", store=open_store(str(HERE / "agent.record.sqlite"))
)

from shop.tools import CALLS, charge_card, provision_account, update_crm  # noqa: E402

ORDER: list[tuple[str, dict[str, Any]]] = [
    ("charge_card", {"order": 4411, "amount": 40.00}),
    ("update_crm", {"order": 4411}),
    ("provision_account", {"order": 4411}),
]


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The model, scripted: the order's next call not answered yet, then its last word."""
    answered = {
        part.tool_name
        for message in messages
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    }
    for tool, args in ORDER:
        if tool not in answered:
            return ModelResponse(parts=[ToolCallPart(tool, args)])
    return ModelResponse(parts=[TextPart("The order is charged, in the CRM and provisioned.")])


agent = Agent(
    FunctionModel(model),
    tools=[charge_card, update_crm, provision_account],
    capabilities=[StalwartGuard(desk)],
)


def order(driver: StalwartDriver[str], turn: str, user: str) -> GuardedResult[str]:
    result = driver.run_sync(turn, user=user)
    while result.waiting and result.waiting[0].kind == "confirm":
        # The person approves each write as it comes; the answer names the question it answers.
        result = driver.confirm_sync(user, "approve", question=result.waiting[0])
    return result


with StalwartDriver(agent) as driver:
    reply = order(
        driver,
        "charge order 4411 40.00, then update the crm for order 4411, "
        "then provision the account for order 4411",
        "u-17",
    )
print(reply.text)
print("The tools ran in this order:")
for number, name in enumerate(CALLS, 1):
    print(f"{number}. {name}")
desk.close()
