"""The operator's token, checked by the library: the interface never compares it itself.

`check` is the one place the interface asks whether a token is the operator's; it calls
the library's check, `Agent.check_operator_token`: the token hashed with the salt and
scrypt parameters of the verifier agent.yaml's `operator_token:` names, compared in
constant time (see `stalwart.policy.operator_token`).
"""

from __future__ import annotations

from ..agent import Agent


def check(agent: Agent, token: str) -> None:
    """Raise `OperatorTokenError` unless `token` is the operator's; changes nothing."""
    agent.check_operator_token(token)
