"""Chapter 34's failed order, as an OpenAI Agents SDK agent guarded by stalwart.

The shop's desk (../shop: its agent.yaml, tools and rulebook) grown into an Agents SDK
agent, its tools built by stalwart's factory. Its model is the SDK's Chat Completions model
pointed at a local stand-in of the API on 127.0.0.1 (no network, no key, tracing off),
which charges the card, updates the CRM and provisions the account, one call per answer;
the provisioning service is down. A person approves each write; stalwart keys and records
each call before it is sent, and the failed run is undone last write first, by stalwart,
with no further model request. The record is this folder's own.

Run it from this folder: `python run.py` (or `make demo` from the repository's root).
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from agents import Agent, OpenAIChatCompletionsModel, set_tracing_disabled
from openai import AsyncOpenAI

import stalwart
from stalwart.adapters.openai_agents import GuardedResult, StalwartDriver, StalwartTools
from stalwart.record import open_store

HERE = Path(__file__).resolve().parent
set_tracing_disabled(True)  # nothing is exported

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


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The model, scripted: the order's next call not answered yet, then its last word."""
    answered = {m["tool_call_id"] for m in request["messages"] if m["role"] == "tool"}
    message: dict[str, Any] = {"role": "assistant", "content": "The order is charged."}
    for number, (tool, args) in enumerate(ORDER, 1):
        if f"call_{number}" not in answered:
            call = {"name": tool, "arguments": json.dumps(args)}
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"call_{number}", "type": "function", "function": call}],
            }
            break
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    return {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [choice],
        "usage": usage,
    }


class ChatCompletions(BaseHTTPRequestHandler):
    """A local stand-in of the Chat Completions API (POST /v1/chat/completions)."""

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        body = json.dumps(answer(request)).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), ChatCompletions)
threading.Thread(target=server.serve_forever, daemon=True).start()
client = AsyncOpenAI(
    base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="k", max_retries=0
)
tools = StalwartTools(desk)
agent = Agent(
    name="desk",
    model=OpenAIChatCompletionsModel(model="m", openai_client=client),
    tools=tools.tools(charge_card, update_crm, provision_account),
)


def order(driver: StalwartDriver, turn: str, user: str) -> GuardedResult:
    result = driver.run_sync(turn, user=user)
    while result.waiting and result.waiting[0].kind == "confirm":
        # The person approves each write as it comes; the answer names the question it answers.
        result = driver.confirm_sync(user, "approve", question=result.waiting[0])
    return result


with StalwartDriver(agent, tools) as driver:
    reply = order(
        driver,
        "charge order 4411 40.00, then update the crm for order 4411, "
        "then provision the account for order 4411",
        "u-17",
    )
    driver._sync(client.close())
print(reply.text)
print("The tools ran in this order:")
for number, name in enumerate(CALLS, 1):
    print(f"{number}. {name}")
server.shutdown()
server.server_close()
desk.close()
