"""The shop's desk as an MCP server, written with the official SDK (MCPServer).

Run as `python mcp_shop_server.py stdio` or `python mcp_shop_server.py http <port>`
(streamable HTTP on 127.0.0.1). Every call is appended to the JSON-lines file named by
SHOP_CALLS, with the idempotency key stalwart sent in `_meta`. The server's tools carry
only what MCP can say (annotations); the undos are declared in agent.yaml.

- provision_account fails: its result says `isError: true`;
- charge_card (or the tool whose name the file holds) exits the process mid-call when the
  file named by SHOP_DIE exists (the file is removed first, so the server started again
  works): a lost connection;
- the tool whose name the file named by SHOP_HANG holds never answers (the file is removed
  first): a call in flight when whoever sent it is killed.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations

KEY = "io.stalwart/idempotency-key"
app = MCPServer("shop")

# SHOP_VARIANT=changed: the same server after an update that changed what it says of two
# tools (get_order: no longer a read, a new field; refund_card: no longer idempotent).
CHANGED = os.environ.get("SHOP_VARIANT") == "changed"

READ = ToolAnnotations(read_only_hint=not CHANGED)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False)
IDEMPOTENT = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)


def _log(ctx: Context, tool: str, **args: Any) -> None:
    meta = ctx.request_context.meta or {}
    line = json.dumps({"tool": tool, "args": args, "key": meta.get(KEY), "pid": os.getpid()})
    with open(os.environ["SHOP_CALLS"], "a", encoding="utf-8") as calls:
        calls.write(line + "\n")


def _get_order(order: int, ctx: Context) -> dict[str, Any]:
    """Look up an order: its amount and its status."""
    _log(ctx, "get_order", order=order)
    return {"order": order, "amount": 40.0, "status": "unpaid"}


def _get_order_noted(order: int, ctx: Context, note: str = "") -> dict[str, Any]:
    """Look up an order: its amount and its status."""
    _log(ctx, "get_order", order=order, note=note)
    return {"order": order, "amount": 40.0, "status": "unpaid"}


app.tool(name="get_order", annotations=READ)(_get_order_noted if CHANGED else _get_order)


@app.tool(annotations=WRITE)
def charge_card(order: int, amount: float, ctx: Context) -> dict[str, Any]:
    """Charge the card on file for an order."""
    _log(ctx, "charge_card", order=order, amount=amount)
    _stop_if_told("charge_card")
    return {"order": order, "amount": amount, "charge": f"ch_{order}"}


def _stop_if_told(tool: str) -> None:
    """The call arrived and did its work; its answer never leaves."""
    die = Path(os.environ.get("SHOP_DIE", "/nonexistent"))
    if die.exists() and die.read_text().strip() in ("", tool):
        die.unlink()
        os._exit(1)
    hang = Path(os.environ.get("SHOP_HANG", "/nonexistent"))
    if hang.exists() and hang.read_text().strip() == tool:
        hang.unlink()
        print(f"hanging in {tool}", file=sys.stderr, flush=True)  # what the test waits for
        threading.Event().wait()  # until the test kills the process


@app.tool(annotations=WRITE if CHANGED else IDEMPOTENT)
def refund_card(order: int, amount: float, ctx: Context) -> dict[str, Any]:
    """Give the money of an earlier charge back to its card."""
    _log(ctx, "refund_card", order=order, amount=amount)
    _stop_if_told("refund_card")
    return {"order": order, "refunded": amount}


@app.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def update_crm(order: int, ctx: Context) -> dict[str, Any]:
    """Mark an order as paid in the CRM."""
    _log(ctx, "update_crm", order=order)
    return {"order": order, "previous_status": "unpaid"}


@app.tool(annotations=IDEMPOTENT)
def restore_crm(order: int, previous_status: str, ctx: Context) -> dict[str, Any]:
    """Put an order's CRM record back to the status it had."""
    _log(ctx, "restore_crm", order=order, previous_status=previous_status)
    return {"order": order, "status": previous_status}


@app.tool(annotations=WRITE)
def provision_account(order: int, ctx: Context) -> dict[str, Any]:
    """Provision the account an order paid for."""
    _log(ctx, "provision_account", order=order)
    raise RuntimeError("the provisioning service is down")


if __name__ == "__main__":
    if sys.argv[1] == "http":
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()
