"""The gate: verification stages, integration, conflicts with the target branch, reverify.

`GateVerifier` is the scheduling loop's Verifier (radian.arc.loop); `reverify_by_hand` is
`radian arc reverify <task>`. See radian/docs/gate.md.
"""

from radian.arc.gate.reverify import reverify_by_hand
from radian.arc.gate.runner import GateVerifier

__all__ = ["GateVerifier", "reverify_by_hand"]
