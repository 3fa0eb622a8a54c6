"""Uma carteira: a Portuguese desk (issue 29, point 4), its tools named and documented in
Portuguese, with declared Portuguese phrases ("enviar dinheiro", "bloquear o cartão")."""

from __future__ import annotations

from decimal import Decimal

from stalwart.tools import tool


@tool(phrases=["quanto tem na"])
def ver_saldo(conta: str) -> dict[str, object]:
    """Mostra o saldo de uma conta."""
    return {"conta": conta, "saldo": "100,00"}


@tool(
    writes=True,
    undo="estornar_transferencia",
    phrases=["enviar dinheiro", "mandar dinheiro", "fazer um pix"],
)
def transferir(origem: str, destino: str, valor: Decimal) -> dict[str, object]:
    """Transfere dinheiro de uma origem para um destino."""
    return {"origem": origem, "destino": destino, "valor": str(valor)}


@tool(writes=True, retry_safe=True, phrases=["devolver o dinheiro"])
def estornar_transferencia(origem: str, destino: str, valor: Decimal) -> dict[str, object]:
    """Estorna uma transferência de uma origem para um destino."""
    return {"origem": origem, "destino": destino, "valor": str(valor)}


@tool(writes=True, irreversible=True, phrases=["pagar o boleto"])
def pagar_conta(empresa: str, valor: Decimal) -> dict[str, object]:
    """Paga uma conta a uma empresa."""
    return {"empresa": empresa, "valor": str(valor)}


@tool(writes=True, retry_safe=True, phrases=["travar o cartão"])
def bloquear_cartao(cartao: str) -> dict[str, object]:
    """Bloqueia um cartão para que nada seja pago com ele."""
    return {"cartao": cartao, "bloqueado": True}
