"""What `stalwart verify` reports: each finding's code, the finding, the report."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .. import texts

DEFAULT_MAX_STEPS = 4

Route = tuple[str, ...]


class Code(StrEnum):
    IRREVERSIBLE_UNWARNED = "QG013"
    WRITE_NOT_CONFIRMED = "QG014"
    MCP_TOOL_CHANGED = "QG015"
    WRITE_NOT_UNDOABLE = "QG105"
    UNDO_REFUSED = "QG106"
    UNDO_UNBOUND = "QG107"
    UNDO_OUT_OF_REACH = "QG108"
    TURN_READS_DIFFERENTLY = "QG201"


@dataclass(frozen=True)
class Finding:
    """One reason not to launch: its code, the agent, the tool, a witness route, and the
    text and the fix a person reads."""

    code: Code
    agent: str
    tool: str
    route: Route
    text: str
    fix: str

    def __str__(self) -> str:
        return texts.verify_line(self.code.value, self.agent, self.route, self.text, self.fix)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code.value,
            "agent": self.agent,
            "tool": self.tool,
            "route": list(self.route),
            "text": self.text,
            "fix": self.fix,
        }


@dataclass(frozen=True)
class Report:
    """What verify found over a file's agents; `passed` when nothing."""

    findings: tuple[Finding, ...]
    max_steps: int
    unreached: tuple[tuple[str, str], ...] = ()  # (agent, tool) no route reached
    turns: int = 0  # sample turns compared

    @property
    def passed(self) -> bool:
        return not self.findings

    def with_turns(self, findings: Sequence[Finding], turns: int) -> Report:
        """This report and the findings of `turns` sample turns."""
        return Report((*self.findings, *findings), self.max_steps, self.unreached, turns)

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "max_steps": self.max_steps,
            "findings": [finding.to_json() for finding in self.findings],
            "unreached": [{"agent": a, "tool": t} for a, t in self.unreached],
            "turns": self.turns,
        }
