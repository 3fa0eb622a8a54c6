"""Uma mesa de remessas: a Portuguese desk (issue 29) whose docstrings tie no preposition
to a parameter; its role words come from its declared Portuguese phrases alone
("remeter {valor} de {pagador} para {recebedor}")."""

from __future__ import annotations

from decimal import Decimal

from stalwart.tools import tool


@tool(phrases=["quanto recebeu {pessoa}"])
def ver_extrato(pessoa: str) -> dict[str, object]:
    """Mostra o extrato de uma pessoa."""
    return {"pessoa": pessoa, "saldo": "0,00"}


@tool(
    writes=True,
    retry_safe=True,
    phrases=["remeter {valor} de {pagador} para {recebedor}", "mandar uma remessa"],
)
def enviar_remessa(pagador: str, recebedor: str, valor: Decimal) -> dict[str, object]:
    """Envia uma remessa entre duas pessoas."""
    return {"pagador": pagador, "recebedor": recebedor, "valor": str(valor)}
