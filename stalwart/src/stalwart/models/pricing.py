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
    """US dollars per million input tokens and per million output tokens."""

    input_per_mtok: Decimal
    output_per_mtok: Decimal

    @classmethod
    def of(cls, input_per_mtok: PriceInput, output_per_mtok: PriceInput) -> Price:
        return cls(
            _dollars("input_per_mtok", input_per_mtok), _dollars("output_per_mtok", output_per_mtok)
        )

    def cost(self, usage: Usage) -> Decimal:
        return (
            self.input_per_mtok * usage.input_tokens + self.output_per_mtok * usage.output_tokens
        ) / _MILLION


# List prices as the providers published them; a deployment with other terms overrides.
_LIST_PRICES: dict[str, tuple[str, str]] = {
    "anthropic:claude-opus-4-1": ("15", "75"),
    "anthropic:claude-opus-4-5": ("5", "25"),
    "anthropic:claude-sonnet-4-5": ("3", "15"),
    "anthropic:claude-haiku-4-5": ("1", "5"),
    "openai:gpt-4.1": ("2", "8"),
    "openai:gpt-4.1-mini": ("0.40", "1.60"),
    "openai:gpt-4o": ("2.50", "10"),
    "openai:gpt-4o-mini": ("0.15", "0.60"),
}


class PriceTable:
    """Prices by `provider:model` selector; a copy can be extended without touching this one."""

    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self._prices: dict[str, Price] = dict(prices or {})

    def register(
        self, selector: str, *, input_per_mtok: PriceInput, output_per_mtok: PriceInput
    ) -> None:
        if ":" not in selector:
            raise ValueError(f"price for {selector!r}: expected a 'provider:model' selector")
        self._prices[selector] = Price.of(input_per_mtok, output_per_mtok)

    def get(self, selector: str) -> Price | None:
        return self._prices.get(selector)

    def cost(self, selector: str, usage: Usage) -> Decimal | None:
        price = self.get(selector)
        return price.cost(usage) if price is not None else None

    def updated(self, prices: Mapping[str, Mapping[str, Any] | Price]) -> PriceTable:
        """A copy with a config's `prices:` mapping laid over this table's prices.

        Each value is a Price or `{"input_per_mtok": ..., "output_per_mtok": ...}`.
        """
        table = PriceTable(self._prices)
        for selector, price in prices.items():
            if isinstance(price, Price):
                table._prices[selector] = price
                continue
            if not isinstance(price, Mapping) or set(price) != {
                "input_per_mtok",
                "output_per_mtok",
            }:
                raise ValueError(
                    f"price for {selector!r}: expected input_per_mtok and output_per_mtok, "
                    f"got {price!r}"
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


DEFAULT_PRICES = PriceTable({s: Price.of(i, o) for s, (i, o) in _LIST_PRICES.items()})


def register_price(
    selector: str, *, input_per_mtok: PriceInput, output_per_mtok: PriceInput
) -> None:
    """Add or correct a model's price in the table every `load_model` starts from."""
    DEFAULT_PRICES.register(
        selector, input_per_mtok=input_per_mtok, output_per_mtok=output_per_mtok
    )
