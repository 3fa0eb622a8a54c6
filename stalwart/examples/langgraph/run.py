"""Chapter 34's failed order, as a LangChain v1 agent (LangGraph) guarded by stalwart.

The shop's desk (../shop: its agent.yaml, tools and rulebook) grown into a `create_agent`
graph: the model, scripted with LangChain's own fake chat model (no network, no key),
charges the card, updates the CRM and provisions the account, one call per answer; the
provisioning service is down. A person approves each write (each question a LangGraph
interrupt, each answer stalwart's); stalwart keys and records each call before it is
sent, and the failed run is undone last write first, by stalwart, with no further model
request. The record and the graph's checkpoints (SQLite, durability "sync") are this
folder's own.

Run it from this folder: `python run.py` (or `make demo` from the repository's root).
"""

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.checkpoint.sqlite import SqliteSaver

import stalwart
from stalwart.adapters.langgraph import GuardedResult, StalwartDriver, StalwartMiddleware
from stalwart.record import open_store

HERE = Path(__file__).resolve().parent

# The shop's desk: its agent.yaml's tool facts (each write's undo), its rulebook, and a
# record in this folder. Loading it imports the shop's tools (`python: shop.tools`).
desk = stalwart.Agent.from_file(
    HERE.parent / "shop" / "agent.yaml", store=open_store(str(HERE / "agent.record.sqlite"))
)

from shop.tools import CALLS, charge_card, provision_account, update_crm  # noqa: E402


class ScriptedModel(GenericFakeChatModel):
    """LangChain's fake chat model, given tools as any chat model is (it reads none)."""

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self


def call(number: int, tool: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage("", tool_calls=[{"id": f"call_{number}", "name": tool, "args": args}])


# The model, scripted: the order's calls, one per answer, then its last word.
model = ScriptedModel(
    messages=iter(
        [
            call(1, "charge_card", {"order": 4411, "amount": 40.00}),
            call(2, "update_crm", {"order": 4411}),
            call(3, "provision_account", {"order": 4411}),
            AIMessage("The order is charged, in the CRM and provisioned."),
        ]
    )
)

checkpoints = sqlite3.connect(HERE / "agent.checkpoints.sqlite", check_same_thread=False)
graph = create_agent(
    model,
    [charge_card, update_crm, provision_account],
    middleware=[StalwartMiddleware(desk)],  # last: innermost
    checkpointer=SqliteSaver(checkpoints),
)


def order(driver: StalwartDriver, turn: str, user: str) -> GuardedResult:
    result = driver.run_sync(turn, user=user)
    while result.waiting and result.waiting[0].kind == "confirm":
        # The person approves each write as it comes; the answer names the question it answers.
        result = driver.confirm_sync(user, "approve", question=result.waiting[0])
    return result


with StalwartDriver(graph) as driver:
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
checkpoints.close()
desk.close()
