"""What the record says about a session's earlier calls, as the rulebook reads them.

The ledger builds these (`Ledger.history`); the policy reads them. The type is the
record's own, so the record imports nothing of the policy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PastCall:
    """What the record says about an earlier call in this session."""

    tool: str
    args: Mapping[str, Any]
    ran: bool  # it ran (outcome recorded as success)
    undone: bool  # it was undone later
