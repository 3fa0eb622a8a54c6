"""Prices per model: the table a user extends, and the cost of a call in Decimal."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from stalwart.models import DEFAULT_PRICES, Price, PriceTable, Usage, register_price

pytestmark = pytest.mark.unit


def test_cost_is_exact_decimal_dollars_per_million_tokens() -> None:
    table = PriceTable()
    table.register("openai:gpt-4o-mini", input_per_mtok=0.15, output_per_mtok="0.60")

    cost = table.cost("openai:gpt-4o-mini", Usage(input_tokens=1234, output_tokens=567))

    assert cost == Decimal("0.15") * 1234 / 1_000_000 + Decimal("0.60") * 567 / 1_000_000
    assert cost == Decimal("0.0005253")


def test_a_model_without_a_price_costs_none() -> None:
    assert PriceTable().cost("anthropic:claude-new", Usage(input_tokens=10)) is None


def test_a_configs_prices_mapping_lays_over_a_copy() -> None:
    base = PriceTable({"openai:gpt-4.1": Price.of(2, 8)})

    table = base.updated(
        {
            "openai:gpt-4.1": {"input_per_mtok": "1", "output_per_mtok": "4"},
            "anthropic:claude-sonnet-5-5": {"input_per_mtok": 3, "output_per_mtok": 15},
        }
    )

    # Each unknown cache price is filled in: OpenAI's at the input price (its cached rate
    # differs per model), Anthropic's at its published 0.1x (read) and 1.25x (write).
    assert table.get("openai:gpt-4.1") == Price(
        Decimal("1"), Decimal("4"), Decimal("1"), Decimal("1")
    )
    assert table.get("anthropic:claude-sonnet-5-5") == Price(
        Decimal("3"), Decimal("15"), Decimal("0.3"), Decimal("3.75")
    )
    assert base.get("openai:gpt-4.1") == Price(Decimal("2"), Decimal("8"))
    assert "anthropic:claude-sonnet-5-5" not in base


@pytest.mark.parametrize(
    ("prices", "says"),
    [
        ({"openai:x": {"input_per_mtok": 1}}, "expected input_per_mtok and output_per_mtok"),
        ({"openai:x": {"input_per_mtok": 1, "output_per_mtok": "cheap"}}, "output_per_mtok"),
        ({"openai:x": {"input_per_mtok": -1, "output_per_mtok": 1}}, ">= 0"),
        ({"openai:x": {"input_per_mtok": "Infinity", "output_per_mtok": 1}}, ">= 0"),
        ({"gpt-4.1": {"input_per_mtok": 1, "output_per_mtok": 1}}, "'provider:model'"),
    ],
)
def test_a_bad_price_is_refused_and_changes_nothing(prices: dict[str, Any], says: str) -> None:
    base = PriceTable()

    with pytest.raises(ValueError, match=says):
        base.updated(prices)

    assert "openai:x" not in base


def test_register_price_extends_the_table_every_load_starts_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(DEFAULT_PRICES, "_prices", dict(DEFAULT_PRICES._prices))

    register_price("anthropic:claude-sonnet-5-5", input_per_mtok="3", output_per_mtok="15")

    assert DEFAULT_PRICES.cost(
        "anthropic:claude-sonnet-5-5", Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    ) == Decimal("18")
