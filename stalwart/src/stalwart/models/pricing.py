"""Prices per model, in US dollars per million tokens, and the cost of a call.

The table ships a few models' list prices; a user adds or corrects one with
`register_price("anthropic:claude-sonnet-5-5", input_per_mtok="3", output_per_mtok="15")`
or passes a `prices:` mapping from the config to `load_model`. A model with no price
costs None, never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Usage

PriceInput = Decimal | int | float | str

_MILLION = Decimal(1_000_000)


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens: input, output, and input read from or written to the
    provider's prompt cache (each cache price the input price when not known)."""

    input_per_mtok: Decimal
    output_per_mtok: Decimal
    cache_read_per_mtok: Decimal | None = None
    cache_write_per_mtok: Decimal | None = None

    @classmethod
    def of(
        cls,
        input_per_mtok: PriceInput,
        output_per_mtok: PriceInput,
        cache_read_per_mtok: PriceInput | None = None,
        cache_write_per_mtok: PriceInput | None = None,
    ) -> Price:
        return cls(
            _dollars("input_per_mtok", input_per_mtok),
            _dollars("output_per_mtok", output_per_mtok),
            None
            if cache_read_per_mtok is None
            else _dollars("cache_read_per_mtok", cache_read_per_mtok),
            None
            if cache_write_per_mtok is None
            else _dollars("cache_write_per_mtok", cache_write_per_mtok),
        )

    def cost(self, usage: Usage) -> Decimal:
        """What the provider bills: uncached input, cached reads and writes, output."""
        read = self.cache_read_per_mtok
        write = self.cache_write_per_mtok
        uncached = usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens
        return (
            self.input_per_mtok * max(uncached, 0)
            + (read if read is not None else self.input_per_mtok) * usage.cache_read_tokens
            + (write if write is not None else self.input_per_mtok) * usage.cache_write_tokens
            + self.output_per_mtok * usage.output_tokens
        ) / _MILLION

    def with_cache_defaults(self, provider: str) -> Price:
        """This price with each unknown cache price its provider's published multiple of
        the input price (Anthropic: reads 0.1x, 5-minute writes 1.25x); a provider whose
        cached rate differs per model (OpenAI) keeps the input price, an upper bound."""
        read, write = CACHE_MULTIPLES.get(provider, (Decimal(1), Decimal(1)))
        return Price(
            self.input_per_mtok,
            self.output_per_mtok,
            self.cache_read_per_mtok
            if self.cache_read_per_mtok is not None
            else self.input_per_mtok * read,
            self.cache_write_per_mtok
            if self.cache_write_per_mtok is not None
            else self.input_per_mtok * write,
        )


# Cache prices as multiples of the input price, where a provider publishes one multiple
# for all its models: (read, write).
CACHE_MULTIPLES: dict[str, tuple[Decimal, Decimal]] = {
    "anthropic": (Decimal("0.1"), Decimal("1.25")),
}

PRICE_KEYS = ("input_per_mtok", "output_per_mtok", "cache_read_per_mtok", "cache_write_per_mtok")


# List prices as the providers published them; a deployment with other terms overrides.
# (input, output, cached input): Anthropic's cache prices follow from CACHE_MULTIPLES.
_LIST_PRICES: dict[str, tuple[str, str, str | None]] = {
    "anthropic:claude-opus-4-1": ("15", "75", None),
    "anthropic:claude-opus-4-5": ("5", "25", None),
    "anthropic:claude-sonnet-4-5": ("3", "15", None),
    "anthropic:claude-haiku-4-5": ("1", "5", None),
    "openai:gpt-4.1": ("2", "8", "0.50"),
    "openai:gpt-4.1-mini": ("0.40", "1.60", "0.10"),
    "openai:gpt-4o": ("2.50", "10", "1.25"),
    "openai:gpt-4o-mini": ("0.15", "0.60", "0.075"),
}


class PriceTable:
    """Prices by `provider:model` selector; a copy can be extended without touching this one."""

    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self._prices: dict[str, Price] = dict(prices or {})

    def register(
        self,
        selector: str,
        *,
        input_per_mtok: PriceInput,
        output_per_mtok: PriceInput,
        cache_read_per_mtok: PriceInput | None = None,
        cache_write_per_mtok: PriceInput | None = None,
    ) -> None:
        if ":" not in selector:
            raise ValueError(f"price for {selector!r}: expected a 'provider:model' selector")
        price = Price.of(input_per_mtok, output_per_mtok, cache_read_per_mtok, cache_write_per_mtok)
        self._prices[selector] = price.with_cache_defaults(selector.partition(":")[0])

    def get(self, selector: str) -> Price | None:
        return self._prices.get(selector)

    def cost(self, selector: str, usage: Usage) -> Decimal | None:
        price = self.get(selector)
        return price.cost(usage) if price is not None else None

    def updated(self, prices: Mapping[str, Mapping[str, Any] | Price]) -> PriceTable:
        """A copy with a config's `prices:` mapping laid over this table's prices.

        Each value is a Price or `{"input_per_mtok": ..., "output_per_mtok": ...}`, with
        `cache_read_per_mtok` and `cache_write_per_mtok` when known.
        """
        table = PriceTable(self._prices)
        for selector, price in prices.items():
            if isinstance(price, Price):
                table._prices[selector] = price
                continue
            if (
                not isinstance(price, Mapping)
                or not {"input_per_mtok", "output_per_mtok"} <= set(price)
                or not set(price) <= set(PRICE_KEYS)
            ):
                raise ValueError(
                    f"price for {selector!r}: expected input_per_mtok and output_per_mtok "
                    f"(and cache_read_per_mtok, cache_write_per_mtok if known), got {price!r}"
                )
            table.register(selector, **price)
        return table

    def copy(self) -> PriceTable:
        return PriceTable(self._prices)

    def __contains__(self, selector: object) -> bool:
        return selector in self._prices


def _dollars(name: str, value: PriceInput) -> Decimal:
    # A float goes through str, so 0.15 is 0.15 and not 0.1499999999999999944488848...
    try:
        amount = Decimal(str(value)) if isinstance(value, float) else Decimal(value)
    except (InvalidOperation, TypeError, ValueError):
        raise ValueError(f"{name}: expected a number of dollars, got {value!r}") from None
    if not amount.is_finite() or amount < 0:
        raise ValueError(f"{name}: expected a number of dollars >= 0, got {value!r}")
    return amount


DEFAULT_PRICES = PriceTable(
    {
        s: Price.of(i, o, cached).with_cache_defaults(s.partition(":")[0])
        for s, (i, o, cached) in _LIST_PRICES.items()
    }
)


def register_price(
    selector: str,
    *,
    input_per_mtok: PriceInput,
    output_per_mtok: PriceInput,
    cache_read_per_mtok: PriceInput | None = None,
    cache_write_per_mtok: PriceInput | None = None,
) -> None:
    """Add or correct a model's price in the table every `load_model` starts from."""
    DEFAULT_PRICES.register(
        selector,
        input_per_mtok=input_per_mtok,
        output_per_mtok=output_per_mtok,
        cache_read_per_mtok=cache_read_per_mtok,
        cache_write_per_mtok=cache_write_per_mtok,
    )
