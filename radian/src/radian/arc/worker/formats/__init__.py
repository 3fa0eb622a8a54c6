"""The worker formats: one adapter per way a worker reports its end.

Each adapter turns what the worker printed into one `WorkerResult` (outcome, model error,
session id, cost) and states its cost scope (`CostScope`): arc differences a session total on
a resumed attempt and takes a per-process figure as it stands (radian.arc.budget).
radian/docs/worker.md shows each adapter's tables and the CLI version it was checked against.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from radian.arc.worker.formats import claude_code, codex, radian_result
from radian.arc.worker.formats.base import (
    CostScope,
    CostSeen,
    ModelError,
    Output,
    WorkerResult,
    checked_costs,
)
from radian.arc.worker.formats.lines import json_objects
from radian.arc.worker.formats.prices import price_table
from radian.prices import Price

__all__ = [
    "CostScope",
    "CostSeen",
    "ModelError",
    "Output",
    "Price",
    "WorkerResult",
    "cost_seen",
    "parse_output",
    "session_seen",
]


class Adapter(Protocol):
    """A worker format: each module of this package is one."""

    def parse(self, output: Output) -> WorkerResult | None: ...

    def session_seen(self, objects: tuple[dict[str, Any], ...]) -> str | None: ...

    def cost_seen(self, objects: tuple[dict[str, Any], ...]) -> CostSeen | None: ...


# Tried in order: the first that recognizes the output reads it.
ADAPTERS: tuple[Adapter, ...] = (radian_result, claude_code, codex)


def parse_output(
    stdout: str,
    stderr: str = "",
    *,
    now: datetime | None = None,
    model: str | None = None,
    prices: Mapping[str, Price] | None = None,
) -> WorkerResult | None:
    """The worker's Result from what it printed; None when it printed none (terminated).

    `now` (aware) anchors a reset given as a clock time; `model` and `prices` price a worker
    that reports tokens (prices.PRICES plus `prices`)."""
    output = Output(
        stdout=stdout,
        stderr=stderr,
        objects=tuple(json_objects(stdout)),
        now=now if now is not None else datetime.now(UTC),
        model=model,
        prices=price_table(prices),
    )
    for adapter in ADAPTERS:
        result = adapter.parse(output)
        if result is not None:
            return checked_costs(result)
    return None


def session_seen(stdout: str) -> str | None:
    """The session id a worker announced before its Result (Claude Code's first system/init
    line, Codex's thread.started), so a stalled or killed attempt's session is resumed."""
    objects = tuple(json_objects(stdout))
    for adapter in ADAPTERS:
        found = adapter.session_seen(objects)
        if found:
            return found
    return None


def cost_seen(stdout: str) -> CostSeen | None:
    """What a worker that printed no Result said it had spent so far (radian's format's
    progress line), so an attempt arc stopped, or one that crashed, still counts it."""
    objects = tuple(json_objects(stdout))
    for adapter in ADAPTERS:
        found = adapter.cost_seen(objects)
        if found is not None:
            return found
    return None
