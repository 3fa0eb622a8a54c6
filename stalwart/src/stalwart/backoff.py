"""One backoff: capped exponential waits with full jitter, for model calls and undos alike.

After the n-th failed try (n from 1) the wait is drawn between 0 and the ceiling
`min(cap, base * factor ** (n - 1))` ("full jitter", as the AWS architecture blog's
"Exponential Backoff And Jitter" describes: sleep = random_between(0, min(cap, base *
2 ** attempt))), so many workers that failed together do not all come back together.

The random source is injected (`jitter`): a test passes `no_jitter` (the ceiling itself)
or a seeded generator's `uniform` and sees the same waits every run. Waits happen on the
caller's clock; this module only says how long.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

# (low, high) -> a number between them: `random.uniform`'s shape.
Jitter = Callable[[float, float], float]


def no_jitter(low: float, high: float) -> float:
    """The ceiling itself: a schedule with no randomness (for tests and for people)."""
    return high


@dataclass(frozen=True)
class Backoff:
    """`retries` more tries after the first, each after a wait drawn in [0, ceiling]."""

    base: float = 1.0
    factor: float = 2.0
    cap: float = 30.0
    retries: int = 3
    jitter: Jitter = field(default=random.uniform, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not (self.base >= 0 and math.isfinite(self.base)):
            raise ValueError(f"base must be 0 or more; got {self.base!r}")
        if not (self.factor >= 1 and math.isfinite(self.factor)):
            raise ValueError(f"factor must be 1 or more; got {self.factor!r}")
        if not self.cap >= 0:
            raise ValueError(f"cap must be 0 or more; got {self.cap!r}")
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise ValueError(f"retries must be a whole number, 0 or more; got {self.retries!r}")

    @property
    def tries(self) -> int:
        """Every try: the first and its retries."""
        return 1 + self.retries

    def ceiling(self, try_number: int) -> float:
        """The longest wait after the `try_number`-th try failed (1 for the first)."""
        _check_try_number(try_number)
        if self.base == 0:
            return 0.0
        try:
            grown = self.base * self.factor ** (try_number - 1)
        except OverflowError:  # long past any cap
            grown = math.inf
        return min(self.cap, grown)

    def wait(self, try_number: int) -> float:
        """Seconds to wait after the `try_number`-th try failed: drawn in [0, ceiling]."""
        return self.jitter(0.0, self.ceiling(try_number))

    def gives_up_after(self, try_number: int) -> bool:
        """Whether the `try_number`-th failure is the last: no try remains."""
        _check_try_number(try_number)
        return try_number >= self.tries

    def waits(self) -> Iterator[float]:
        """Each wait between tries, in order (one fewer than the tries)."""
        return (self.wait(n) for n in range(1, self.tries))


# The undo's schedule: an undo that raises is tried three more times, waiting up to 1, 2
# and 4 seconds (full jitter). `Agent(undo_backoff=...)` and `stalwart serve` take another.
UNDO_RETRIES = 3
UNDO_BACKOFF = Backoff(base=1.0, factor=2.0, retries=UNDO_RETRIES)


def _check_try_number(try_number: int) -> None:
    if isinstance(try_number, bool) or not isinstance(try_number, int) or try_number < 1:
        raise ValueError(f"try_number counts from 1; got {try_number!r}")
