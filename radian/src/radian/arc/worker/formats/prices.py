"""Token prices for workers that report tokens, not money (Codex): USD per million tokens.

`[worker.prices."<model>"]` in .radian/arc.toml adds a model or replaces one of these:
    [worker.prices."gpt-5-codex"]
    input = 1.25
    cached_input = 0.125
    output = 10.0
"""

from __future__ import annotations

from collections.abc import Mapping

from radian.prices import Price

PRICES: dict[str, Price] = {
    "gpt-5": Price(input=1.25, cached_input=0.125, output=10.0),
    "gpt-5-codex": Price(input=1.25, cached_input=0.125, output=10.0),
    "gpt-5-mini": Price(input=0.25, cached_input=0.025, output=2.0),
    "gpt-5.1-codex": Price(input=1.25, cached_input=0.125, output=10.0),
    "gpt-5.1-codex-max": Price(input=1.25, cached_input=0.125, output=10.0),
    "o4-mini": Price(input=1.1, cached_input=0.275, output=4.4),
}


def price_table(extra: Mapping[str, Price] | None = None) -> dict[str, Price]:
    return {**PRICES, **(extra or {})}


def cost_usd(
    price: Price, *, input_tokens: int, cached_input_tokens: int, output_tokens: int
) -> float:
    """input_tokens includes the cached ones, as the Responses API counts them."""
    cached = min(cached_input_tokens, input_tokens)
    cached_rate = price.input if price.cached_input is None else price.cached_input
    fresh = input_tokens - cached
    total = fresh * price.input + cached * cached_rate + output_tokens * price.output
    return round(total / 1_000_000, 10)
