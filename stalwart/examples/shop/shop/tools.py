"""The shop's desk tools from chapter 34: a card, a CRM and a provisioning service.

The services are in-process stand-ins; `CALLS` lists every tool call in the order it ran.
"""

from __future__ import annotations

from stalwart import tool

CALLS: list[str] = []

ORDERS: dict[int, dict[str, object]] = {4411: {"amount": 40.00, "status": "unpaid"}}


@tool
def get_order(order: int) -> dict[str, object]:
    """Look up an order: its amount and its status."""
    CALLS.append("get_order")
    return {"order": order, **ORDERS.get(order, {"amount": 0.0, "status": "unknown"})}


@tool(writes=True, undo="refund_card")
def charge_card(order: int, amount: float) -> dict[str, object]:
    """Charge the card on file for an order."""
    CALLS.append("charge_card")
    return {"order": order, "amount": amount, "charge": f"ch_{order}"}


@tool(writes=True, retry_safe=True)
def refund_card(order: int, amount: float) -> dict[str, object]:
    """Give the money of an earlier charge back to its card."""
    CALLS.append("refund_card")
    return {"order": order, "refunded": amount}


@tool(writes=True, undo="restore_crm")
def update_crm(order: int) -> dict[str, object]:
    """Mark an order as paid in the CRM."""
    CALLS.append("update_crm")
    previous = ORDERS.get(order, {}).get("status", "unknown")
    return {"order": order, "previous_status": previous}


@tool(writes=True, retry_safe=True)
def restore_crm(order: int, previous_status: str) -> dict[str, object]:
    """Put an order's CRM record back to the status it had."""
    CALLS.append("restore_crm")
    return {"order": order, "status": previous_status}


# Nothing in this desk undoes a provisioning, so it says so: a person confirms it with the
# warning, and a failed run lists it as not undone (`stalwart verify` finds a plain write
# before another write as QG105).
@tool(writes=True, irreversible=True)
def provision_account(order: int) -> dict[str, object]:
    """Provision the account an order paid for."""
    CALLS.append("provision_account")
    raise RuntimeError("the provisioning service is down")


@tool(writes=True, irreversible=True)
def send_receipt(order: int) -> dict[str, object]:
    """Send the receipt for an order by e-mail."""
    CALLS.append("send_receipt")
    return {"order": order, "sent": True}
