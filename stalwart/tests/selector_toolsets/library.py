"""A lending library: Decimal amounts, an optional integer, titles with several words."""

from __future__ import annotations

from decimal import Decimal

from stalwart.tools import tool


@tool(writes=True, undo="return_book")
def borrow_book(title: str, member: int) -> dict[str, object]:
    """Lend a book to a member."""
    return {"title": title, "member": member}


@tool(writes=True, retry_safe=True)
def return_book(title: str) -> dict[str, object]:
    """Take a lent book back."""
    return {"title": title}


@tool(writes=True, retry_safe=True)
def renew_loan(loan: int, weeks: int = 2) -> dict[str, object]:
    """Renew a loan for more weeks."""
    return {"loan": loan, "weeks": weeks}


@tool(writes=True, irreversible=True)
def pay_fine(member: int, amount: Decimal) -> dict[str, object]:
    """Record a fine a member paid."""
    return {"member": member, "amount": str(amount)}
