"""The selector measured, not hoped (issue 29, point 6): every turn of the labelled corpus
(`selector_corpus.yaml`, seven desks, two of them Portuguese) is read, and counted as

- read right: exactly the steps of its label;
- refused: no step (for a turn whose label has steps, one the selector does not read yet:
  refusing is never a misread);
- misread: a step its label does not give, or any step where its label says refused.

The counts are printed (`pytest -s`); any misread fails the test, and names the turn.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, field_validator
from selector_toolsets import bank, carteira, clinic, remessa, remit, shop_specs, specs, wallet

from stalwart import texts
from stalwart.selector import DEFAULT, Reading, read_turn
from stalwart.tools import ToolSpec

pytestmark = pytest.mark.unit

CORPUS = Path(__file__).with_name("selector_corpus.yaml")
DESKS: dict[str, list[ToolSpec]] = {
    "shop": shop_specs(),
    "bank": specs(bank),
    "clinic": specs(clinic),
    "wallet": specs(wallet),  # its tools declare phrases
    "carteira": specs(carteira),  # Portuguese, with Portuguese phrases
    "remit": specs(remit),  # its role words come from its phrases alone
    "remessa": specs(remessa),  # Portuguese, its role words from Portuguese phrases
}
# The languages each desk's agent reads (agent.yaml `languages:`): English alone unless said.
LANGUAGES: dict[str, tuple[str, ...]] = {
    "carteira": ("english", "portuguese"),
    "remessa": ("english", "portuguese"),
}


def read_on(entry: Labelled) -> Reading:
    """The entry's turn, read on its desk in its desk's languages."""
    return read_turn(entry.turn, DESKS[entry.desk], LANGUAGES.get(entry.desk, DEFAULT))


MOODS = ("negated", "conditional", "question", "hedged", "opposite", "reported", "choice")


class Labelled(BaseModel):
    """One turn of the corpus and its label."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    desk: str
    says: str  # "names" (the tools' parameter names) or "person" (as a person writes)
    turn: str
    steps: tuple[tuple[str, dict[str, Any]], ...] | None  # None: refused
    mood: str | None = None

    @field_validator("steps", mode="before")
    @classmethod
    def _steps(cls, value: Any) -> Any:
        if value == "refused":
            return None
        return [next(iter(step.items())) for step in value]


def load_corpus() -> list[Labelled]:
    raw = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    return [Labelled.model_validate(entry) for entry in raw]


def same_value(said: Any, meant: Any) -> bool:
    """Numbers by value (25 and 25.00 are one amount); anything else, type and all."""
    numbers = (int, float, Decimal)
    if isinstance(said, bool) or isinstance(meant, bool):
        return type(said) is type(meant) and said == meant
    if isinstance(said, numbers) and isinstance(meant, numbers):
        return Decimal(str(said)) == Decimal(str(meant))
    return type(said) is type(meant) and bool(said == meant)


def as_called(spec: ToolSpec, args: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments the call runs with: an optional one left out is its default."""
    return {
        p.name: args.get(p.name, p.default) for p in spec.params if p.name in args or not p.required
    }


def same_steps(
    reading: Reading, label: Sequence[tuple[str, Mapping[str, Any]]], tools: Sequence[ToolSpec]
) -> bool:
    if len(reading.steps) != len(label):
        return False
    specs_by_name = {spec.name: spec for spec in tools}
    for step, (tool, args) in zip(reading.steps, label, strict=True):
        if step.tool != tool:
            return False
        said, meant = (
            as_called(specs_by_name[tool], step.args),
            as_called(specs_by_name[tool], args),
        )
        if said.keys() != meant.keys():
            return False
        if not all(same_value(said[name], meant[name]) for name in meant):
            return False
    return True


def verdict(entry: Labelled, reading: Reading) -> str:
    if not reading.steps:
        return "refused"
    if entry.steps is not None and same_steps(reading, entry.steps, DESKS[entry.desk]):
        return "read right"
    return "misread"


CORPUS_TURNS = load_corpus()


def test_the_corpus_is_three_desks_of_at_least_300_turns_half_as_people_write() -> None:
    assert len(CORPUS_TURNS) >= 300
    assert {entry.desk for entry in CORPUS_TURNS} == set(DESKS)
    assert {entry.says for entry in CORPUS_TURNS} == {"names", "person"}
    assert sum(entry.says == "person" for entry in CORPUS_TURNS) * 2 >= len(CORPUS_TURNS)
    assert len({(entry.desk, entry.turn) for entry in CORPUS_TURNS}) == len(CORPUS_TURNS)
    for entry in CORPUS_TURNS:
        assert entry.mood is None or (entry.mood in MOODS and entry.steps is None), entry
        if entry.steps is not None:
            tools = {spec.name: spec for spec in DESKS[entry.desk]}
            for tool, args in entry.steps:
                assert set(args) <= {p.name for p in tools[tool].params}, entry


def test_the_corpus_is_read_with_no_misread() -> None:
    counts: Counter[str] = Counter()
    by_desk: dict[str, Counter[str]] = {desk: Counter() for desk in DESKS}
    by_says: dict[str, Counter[str]] = {"names": Counter(), "person": Counter()}
    misread: list[str] = []
    for entry in CORPUS_TURNS:
        reading = read_on(entry)
        found = verdict(entry, reading)
        counts[found] += 1
        by_desk[entry.desk][found] += 1
        by_says[entry.says][found] += 1
        if found == "misread":
            said = [(step.tool, step.args) for step in reading.steps]
            misread.append(f"{entry.desk}: {entry.turn!r} gave {said}, label {entry.steps}")
    print(f"\nselector corpus: {len(CORPUS_TURNS)} turns: {_counts(counts)}")
    for name, counted in [*by_desk.items(), *by_says.items()]:
        print(f"  {name:>8}: {_counts(counted)}")
    assert not misread, "misread:\n" + "\n".join(misread)


def _counts(found: Counter[str]) -> str:
    return ", ".join(f"{found[name]} {name}" for name in ("read right", "refused", "misread"))


@pytest.mark.parametrize(
    "entry",
    [entry for entry in CORPUS_TURNS if entry.mood is not None],
    ids=lambda entry: f"{entry.desk}:{entry.turn[:40]}",
)
def test_a_negated_conditional_asked_or_hedged_turn_says_so(entry: Labelled) -> None:
    assert entry.mood is not None
    reading = read_on(entry)
    assert reading.steps == ()
    assert reading.reason is not None and reading.unread_clause is not None
    said = texts.MOOD_REASONS[entry.mood]
    assert reading.reason.startswith(said) and ': "' in reading.reason, reading.reason
