"""The selector's speed on the shop's desk: `python stalwart/benchmarks/selector_speed.py`.

Three-clause turns over the desk's seven tools (examples/shop), each with its own order
number and amount, read on one core: turns per second and microseconds per turn, the
best of several batches (a shared machine's slow moments make the others slower, not the
best one). Two figures:

- warm: the desk's usual traffic, turns of shapes read before (the shape memo in
  `selector/memo.py` takes the same tool and the same tokens, with the new values);
- cold: every clause read from scratch (the shape memo and the tokenizer's chunks read
  before, `selector/tokens.py`, emptied before each turn), the cost of a turn worded as
  never before.

The aim is 10,000 turns per second or more, warm. The cost is linear in the turn's length:
`tests/test_selector_linear.py` shows it without timing anything.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHOP = HERE.parent / "examples" / "shop"

from stalwart.config import load_agent  # noqa: E402
from stalwart.selector import GRAMMAR, read_turn  # noqa: E402
from stalwart.selector.tokens import forget_chunks  # noqa: E402
from stalwart.selector.vocabulary import vocabulary_memo  # noqa: E402

AIM_TURNS_PER_SEC = 10_000
BATCHES = 7


def turn(number: int) -> str:
    return (
        f"charge order {number} {number % 97}.50, then update the crm for order {number}, "
        f"then provision the account for order {number}"
    )


def best_rate(read_one: Callable[[int], None], turns: int) -> float:
    """Turns per second on this process's CPU clock, the best of `BATCHES` batches."""
    best = float("inf")
    number = 1000
    for _ in range(BATCHES):
        began = time.process_time()
        for _ in range(turns):
            read_one(number)
            number += 1
        best = min(best, (time.process_time() - began) / turns)
    return 1 / best if best > 0 else float("inf")


def measure(turns: int) -> tuple[float, float]:
    """(warm, cold) turns per second over the shop desk's tools."""
    tools = list(load_agent(SHOP / "agent.yaml").tools.values())
    memo = vocabulary_memo(tools, GRAMMAR)[1]
    reading = read_turn(turn(4411), tools)
    if len(reading.steps) != 3:
        raise SystemExit(f"the shop's turn was not read as three steps: {reading}")

    def warm(number: int) -> None:
        read_turn(turn(number), tools)

    def cold(number: int) -> None:
        memo.clear()
        forget_chunks()
        read_turn(turn(number), tools)

    return best_rate(warm, turns), best_rate(cold, turns)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=1000, help="turns per batch (1000)")
    options = parser.parse_args(argv)
    warm, cold = measure(options.turns)
    verdict = "ok" if warm >= AIM_TURNS_PER_SEC else f"UNDER {AIM_TURNS_PER_SEC:,}"
    print(f"selector, shop desk, three-clause turns, one core (best of {BATCHES} batches):")
    print(f"  warm: {warm:9,.0f} turns/s  {1e6 / warm:7.1f} us/turn   aim >= 10,000: {verdict}")
    print(f"  cold: {cold:9,.0f} turns/s  {1e6 / cold:7.1f} us/turn   (every clause read anew)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
