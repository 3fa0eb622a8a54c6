"""A little bank desk (issue 29): balances, transfers and their undo, bills, statements and
cards. Nobody tuned the selector for it: it is the desk of the issue's table."""

from __future__ import annotations

from decimal import Decimal

from stalwart.tools import tool


@tool
def get_balance(account: str) -> dict[str, object]:
    """Read the balance of an account."""
    return {"account": account, "balance": "100.00"}


@tool(writes=True, undo="return_funds")
def transfer(source: str, target: str, amount: Decimal) -> dict[str, object]:
    """Move money from the source account to the target account."""
    return {"source": source, "target": target, "amount": str(amount)}


@tool(writes=True, retry_safe=True)
def return_funds(source: str, target: str, amount: Decimal) -> dict[str, object]:
    """Give the money of an earlier transfer back to its source account."""
    return {"source": source, "target": target, "returned": str(amount)}


@tool(writes=True, irreversible=True)
def pay_bill(biller: str, amount: Decimal) -> dict[str, object]:
    """Pay a bill to a biller."""
    return {"biller": biller, "amount": str(amount)}


@tool(writes=True, irreversible=True)
def send_statement(account: str) -> dict[str, object]:
    """Send the statement of an account by post."""
    return {"account": account, "sent": True}


@tool(writes=True, retry_safe=True)
def freeze_card(card: str) -> dict[str, object]:
    """Freeze a card so that nothing can be paid with it."""
    return {"card": card, "frozen": True}
