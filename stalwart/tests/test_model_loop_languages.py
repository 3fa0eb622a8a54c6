"""Where a model's argument came from, for an agent that reads Portuguese (issue 29, point
4): the turn is read in the agent's languages (agent.yaml `languages:`), so the "40,00" of
a Portuguese turn is the forty a model's step asks for, and a rulebook that requires an
argument to come from the turn lets it through."""

from __future__ import annotations

from pathlib import Path

import pytest
from model_shop import scripted, write_shop
from model_wire import clean_provider_env  # noqa: F401
from test_model_loop import SELECTOR, STEADY

from stalwart import FakeClock
from stalwart.models import Model, PriceTable, ScriptedAdapter

pytestmark = pytest.mark.usefixtures("clean_provider_env")

TURN = "por favor, cobre R$ 40,00 do pedido 4411 no cartão"
CHARGE = ("c1", "charge_card", {"order": "4411", "amount": "40.00"})
BOTH = "    languages: [english, portuguese]\n"


def _ask(tmp_path: Path, languages: str) -> tuple[str | None, list[tuple[str, str]]]:
    shop = write_shop(
        tmp_path, rulebook="require charge_card.amount from turn\n", agent_keys=languages
    )
    adapter = ScriptedAdapter([scripted(calls=[CHARGE]), scripted("Não posso.")], selector=SELECTOR)
    prices = PriceTable()
    prices.register(SELECTOR, input_per_mtok="2", output_per_mtok="10")
    clock = FakeClock()
    model = Model(SELECTOR, adapter, clock=clock, prices=prices, backoff=STEADY)
    try:
        desk = shop.agent(clock=clock, model=model)
        assert not desk.explain(TURN).reading.read  # the selector does not read it: the model
        reply = desk.chat(TURN, user="ana")
        return reply.text, [(w.kind, w.tool or "") for w in reply.waiting]
    finally:
        shop.close()


def test_a_portuguese_amount_a_model_asks_for_is_the_turns(tmp_path: Path) -> None:
    # Before, the turn was read in English alone: "40,00" was no number, the amount came
    # "from the model alone", and the rulebook refused the charge.
    text, waiting = _ask(tmp_path, BOTH)
    assert waiting == [("confirm", "charge_card")], text


def test_an_agent_that_reads_english_alone_still_finds_no_such_amount(tmp_path: Path) -> None:
    text, waiting = _ask(tmp_path, "")
    assert waiting == [], text
    assert text == "Não posso."
