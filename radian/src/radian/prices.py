"""A model's price, in US dollars per million tokens: the one type both token-priced workers
use (radian's own worker, radian.worker.pricing; a Codex worker under arc,
radian.arc.worker.formats.prices), whatever their price files call the fields."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cached_input: float | None = None  # a cache read; None: as much as input
    cache_write: float | None = None  # None: as much as input
