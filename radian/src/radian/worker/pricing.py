"""What a model's tokens cost, in US dollars per million, and a prompt turn's fee.

The shipped table holds list prices as published by the providers when this was written
(check them: they change); a user adds or corrects models with a TOML file
(`radian worker --prices prices.toml`):

    [models."claude-sonnet-4-5"]
    input_per_mtok = 3.0
    output_per_mtok = 15.0
    cache_read_per_mtok = 0.3       # optional; default: the input price
    cache_write_per_mtok = 3.75     # optional; default: the input price
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from radian.prices import Price


@dataclass(frozen=True)
class Tokens:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
        )


DEFAULT_PRICES: dict[str, Price] = {
    "claude-opus-4-1": Price(15.0, 75.0, 1.5, 18.75),
    "claude-sonnet-4-5": Price(3.0, 15.0, 0.3, 3.75),
    "claude-haiku-4-5": Price(1.0, 5.0, 0.1, 1.25),
    "gpt-5": Price(1.25, 10.0, 0.125),
    "gpt-5-mini": Price(0.25, 2.0, 0.025),
    "gpt-4.1": Price(2.0, 8.0, 0.5),
}


def load_prices(path: Path | None) -> dict[str, Price]:
    """The shipped table with a user's file laid over it."""
    prices = dict(DEFAULT_PRICES)
    if path is None:
        return prices
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    models = data.get("models", {})
    if not isinstance(models, Mapping):
        raise ValueError(f"{path}: [models] must be a table of models")
    for name, entry in models.items():
        if not isinstance(entry, Mapping):
            raise ValueError(f"{path}: models.{name} must be a table")
        prices[str(name)] = Price(
            input=float(entry["input_per_mtok"]),
            output=float(entry["output_per_mtok"]),
            cached_input=_optional(entry.get("cache_read_per_mtok")),
            cache_write=_optional(entry.get("cache_write_per_mtok")),
        )
    return prices


def fee_usd(price: Price, tokens: Tokens) -> float:
    cache_read = price.cached_input
    cache_write = price.cache_write
    micro = (
        tokens.input * price.input
        + tokens.output * price.output
        + tokens.cache_read * (price.input if cache_read is None else cache_read)
        + tokens.cache_write * (price.input if cache_write is None else cache_write)
    )
    return round(micro / 1_000_000, 10)


def _optional(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]
