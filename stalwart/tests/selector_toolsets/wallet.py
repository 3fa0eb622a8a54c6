"""A wallet desk whose tools declare phrases (issue 29): the words a person says for them
that their names and docstrings do not ("send money", "block my card"), and an undo whose
name has an undoing word, reached by a phrase without it."""

from __future__ import annotations

from decimal import Decimal

from stalwart.tools import tool


@tool(phrases=["how much is left in"])
def show_balance(wallet: str) -> dict[str, object]:
    """Show what a wallet holds."""
    return {"wallet": wallet, "balance": "100.00"}


@tool(writes=True, undo="reverse_payment", phrases=["send money", "wire", "pay out"])
def make_payment(source: str, target: str, amount: Decimal) -> dict[str, object]:
    """Make a payment from the source wallet to the target wallet."""
    return {"source": source, "target": target, "amount": str(amount)}


@tool(writes=True, retry_safe=True, phrases=["claw back", "get my money back"])
def reverse_payment(source: str, target: str, amount: Decimal) -> dict[str, object]:
    """Reverse a payment from the source wallet to the target wallet."""
    return {"source": source, "target": target, "amount": str(amount)}


@tool(writes=True, retry_safe=True, phrases=["block card", "lock card"])
def suspend_card(card: str) -> dict[str, object]:
    """Suspend a card until it is found."""
    return {"card": card, "suspended": True}


@tool(writes=True, irreversible=True, phrases=["top up"])
def add_funds(wallet: str, amount: Decimal) -> dict[str, object]:
    """Add funds to a wallet from the bank."""
    return {"wallet": wallet, "amount": str(amount)}
