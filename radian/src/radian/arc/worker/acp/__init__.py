"""ACP workers: arc as the client of an agent that speaks the Agent Client Protocol over stdio
(the radian worker, Zed's Claude Code adapter, any other ACP agent).

An ACP attempt runs under the same wrapper as a command worker: the wrapper's program is
this package's client (`python -m radian.arc.worker.acp ... -- <exec_args>`), which talks
ACP to the agent and prints a Result in radian's format. radian/docs/acp.md has the config,
the permission policy, the stop-reason table and the cost.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

CLIENT_MODULE = "radian.arc.worker.acp"


def client_exec_args(
    agent_args: Sequence[str], *, edits: str = "allow", commands: str = "allow"
) -> list[str]:
    """The wrapper's exec_args for an ACP worker: the client, then the agent's own exec_args
    (placeholders in them are expanded by the wrapper as for a command worker)."""
    return [
        sys.executable,
        "-m",
        CLIENT_MODULE,
        "--session-id",
        "{session_id}",
        "--edits",
        edits,
        "--commands",
        commands,
        "--",
        *agent_args,
    ]
