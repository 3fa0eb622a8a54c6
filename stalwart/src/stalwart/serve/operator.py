"""The operator's token, checked by the library: the interface never compares it itself.

`check` is the one place the interface asks whether a token is the operator's; it calls
the library's check (today the agent's `operator_token_env` comparison, in constant
time). When the library checks a stored verifier instead, only this line changes.
"""

from __future__ import annotations

from ..agent import Agent


def check(agent: Agent, token: str) -> None:
    """Raise `OperatorTokenError` unless `token` is the operator's; changes nothing."""
    library_check = getattr(agent, "check_operator_token", None)  # the verifier's, once landed
    if library_check is not None:
        library_check(token)
        return
    agent._check_operator_token(token)
