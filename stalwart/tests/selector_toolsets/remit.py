"""A remittance desk whose docstrings tie no preposition to a parameter (issue 29): its
role words come from its declared phrases alone ("send {amount} from {payer} to
{payee}"), and its undo's phrase gives "from" and "to" the other way round."""

from __future__ import annotations

from decimal import Decimal

from stalwart.tools import tool


@tool
def read_ledger(party: str) -> dict[str, object]:
    """Read what a party has sent and received."""
    return {"party": party, "sent": "0.00"}


@tool(
    writes=True,
    undo="recall_remittance",
    phrases=["send {amount} from {payer} to {payee}", "remit out of {payer} into {payee}"],
)
def remit(payer: str, payee: str, amount: Decimal) -> dict[str, object]:
    """Remit an amount between two parties."""
    return {"payer": payer, "payee": payee, "amount": str(amount)}


@tool(writes=True, retry_safe=True, phrases=["recall {amount} from {payee} to {payer}"])
def recall_remittance(payer: str, payee: str, amount: Decimal) -> dict[str, object]:
    """Recall an amount remitted between two parties."""
    return {"payer": payer, "payee": payee, "recalled": str(amount)}


@tool(writes=True, retry_safe=True, phrases=["hold {payee}"])
def hold_payee(payee: str) -> dict[str, object]:
    """Hold every remittance a party would receive."""
    return {"payee": payee, "held": True}
