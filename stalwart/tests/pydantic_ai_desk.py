"""A desk for the Pydantic AI adapter's acceptance tests: its tools, its project, its agent.

The tools module is written into each test's folder (`write_desk`), so each test, and each
process a test starts, imports its own copy. Every send appends "<tool> <key> <try>" to
`keys.log` beside it (from any process); `block-<tool>` makes a send touch
`started-<tool>` and wait until its process is killed; a tool named in `FAIL` raises.
`charge_card` charges through the charging service (tests/http_faults.py) whose address
is in `service.url`, with its idempotency key in the request.

The Pydantic AI agent is the real one, its model Pydantic AI's OpenAI model on the local
wire stand-in (tests/model_wire.py), the client's retries off. `loopback_only` makes any
connection off 127.0.0.1 fail, in this process or a worker's.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conftest import Project, write_project
from model_wire import Reply
from openai import AsyncOpenAI
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

import stalwart
from stalwart.adapters.pydantic_ai import StalwartGuard

DESK_TOOLS = '''
import json
import time
import urllib.request
from pathlib import Path

from stalwart import current_call, tool

HERE = Path(__file__).parent
CALLS = []  # (tool, args, key, try number) of every send, in order
FAIL = set()


def _sent(name, **args):
    call = current_call()
    CALLS.append((name, args, call.key, call.try_number))
    with open(HERE / "keys.log", "a") as log:
        log.write(f"{name} {call.key} {call.try_number}\\n")
    if (HERE / f"block-{name}").exists():
        (HERE / f"started-{name}").touch()
        while True:  # the test kills this process here
            time.sleep(0.01)
    if name in FAIL:
        raise RuntimeError(f"{name} is down")


@tool
def get_order(order: int) -> dict:
    """Look an order up."""
    _sent("get_order", order=order)
    return {"order": order, "amount": 40.0}


@tool(writes=True, undo="reopen_order")
def close_order(order: int) -> dict:
    """Close an order."""
    _sent("close_order", order=order)
    return {"order": order, "closed": True}


@tool(writes=True)
def reopen_order(order: int) -> dict:
    """Open a closed order again."""
    _sent("reopen_order", order=order)
    return {"order": order, "closed": False}


@tool(writes=True, undo="release_stock")
def hold_stock(order: int) -> dict:
    """Hold the stock of an order."""
    _sent("hold_stock", order=order)
    return {"order": order, "hold": f"h-{order}"}


@tool(writes=True)
def release_stock(order: int, hold: str) -> dict:
    """Release a hold on stock."""
    _sent("release_stock", order=order, hold=hold)
    return {"order": order, "released": hold}


@tool(writes=True, undo="refund_card")
def charge_card(order: int, amount: float, idempotency_key: str = "") -> dict:
    """Charge the card on file for an order."""
    _sent("charge_card", order=order, amount=amount)
    body = json.dumps({"order": order, "amount": amount, "key": idempotency_key}).encode()
    url = (HERE / "service.url").read_text()
    with urllib.request.urlopen(urllib.request.Request(url, data=body), timeout=10) as answer:
        return {"order": order, "amount": amount, "charge": json.load(answer)["charge"]}


@tool(writes=True, retry_safe=True)
def refund_card(order: int, amount: float) -> dict:
    """Give the money of a charge back."""
    _sent("refund_card", order=order, amount=amount)
    return {"order": order, "refunded": amount}


@tool(writes=True, irreversible=True)
def notify(order: int) -> dict:
    """Tell the customer about an order."""
    _sent("notify", order=order)
    return {"order": order, "told": True}
'''

DESK_TOOL_NAMES = [
    "get_order",
    "close_order",
    "reopen_order",
    "hold_stock",
    "release_stock",
    "charge_card",
    "refund_card",
    "notify",
]

# The tools the model is given (the undos are stalwart's to call).
MODEL_TOOLS = ("get_order", "close_order", "hold_stock", "charge_card", "notify")


def write_desk(folder: Path, *, record: str = "record.sqlite", facts: str = "") -> Project:
    return write_project(
        folder, tools_source=DESK_TOOLS, tool_names=DESK_TOOL_NAMES, record=record, facts=facts
    )


def pydantic_agent(
    desk: stalwart.Agent, module: Any, wire_url: str, tools: Sequence[str] = MODEL_TOOLS
) -> tuple[Agent[None, str], AsyncOpenAI]:
    """The Pydantic AI agent, guarded by `desk`, on the wire's OpenAI stand-in."""
    client = AsyncOpenAI(base_url=wire_url + "/v1", api_key="k", max_retries=0)
    model = OpenAIChatModel("m", provider=OpenAIProvider(openai_client=client))
    agent = Agent(
        model,
        tools=[getattr(module, name) for name in tools],
        capabilities=[StalwartGuard(desk)],
    )
    return agent, client


def _completion(message: dict[str, Any], finish: str) -> Reply:
    body = {
        "id": "chatcmpl-desk",
        "object": "chat.completion",
        "created": 1800000000,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return Reply(200, json.dumps(body).encode(), {"content-type": "application/json"})


def tool_calls(*calls: tuple[str, str, dict[str, Any]]) -> Reply:
    """The model's answer: these tool calls, (id, tool, arguments), in one response."""
    return _completion(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for call_id, name, args in calls
            ],
        },
        "tool_calls",
    )


def text(words: str) -> Reply:
    """The model's last word."""
    return _completion({"role": "assistant", "content": words}, "stop")


def keys_log(folder: Path) -> list[tuple[str, str, int]]:
    """Every send, from any process: (tool, key, try number)."""
    path = folder / "keys.log"
    if not path.exists():
        return []
    return [
        (name, key, int(tries))
        for name, key, tries in (line.split() for line in path.read_text().splitlines())
    ]


# --- no connection leaves 127.0.0.1 ---

LOOPBACK = ("127.0.0.1", "::1", "localhost")
_CONNECT = socket.socket.connect
_CONNECT_EX = socket.socket.connect_ex


def _checked(sock: socket.socket, address: Any) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOOPBACK:
        raise OSError(f"a test may connect to 127.0.0.1 only, not {address!r}")


def _connect(sock: socket.socket, address: Any) -> None:
    _checked(sock, address)
    _CONNECT(sock, address)


def _connect_ex(sock: socket.socket, address: Any) -> int:
    _checked(sock, address)
    return _CONNECT_EX(sock, address)


def loopback_only() -> None:
    """From now on, in this process, a connection off 127.0.0.1 raises OSError."""
    socket.socket.connect = _connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign,assignment]


def any_address() -> None:
    socket.socket.connect = _CONNECT  # type: ignore[method-assign]
    socket.socket.connect_ex = _CONNECT_EX  # type: ignore[method-assign]
