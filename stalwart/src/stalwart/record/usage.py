"""What the model cost: tokens and dollars per run and per session, read from the record.

Every ask of a model is a call of kind "model" in the record (`model_loop.py`), its
answer kept with the tokens it used and, when the model's price is known, its cost. So
usage needs nothing but the record: `stalwart usage agent.yaml SESSION` reads it with
no model loaded and no key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from .. import texts
from ..errors import AnswerError
from . import Store
from .schema import MODEL_KIND, CallRow


@dataclass(frozen=True)
class Usage:
    """Tokens and cost of some asks of a model; `cost_usd` None when any price is unknown."""

    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal | None


@dataclass(frozen=True)
class RunUsage:
    run: str
    usage: Usage


@dataclass(frozen=True)
class SessionUsage:
    """Per run (the runs that asked a model, in order) and in total."""

    session: str
    runs: tuple[RunUsage, ...]
    total: Usage

    def lines(self) -> list[str]:
        """One line per run and a total, as `stalwart usage` prints them."""
        rows = [(run.run, run.usage) for run in self.runs] + [("total", self.total)]
        return [
            texts.usage_line(label, u.calls, u.input_tokens, u.output_tokens, u.cost_usd)
            for label, u in rows
        ]


def session_usage(store: Store, session: str, agent: str) -> SessionUsage:
    """The session's usage as the record keeps it; AnswerError if it is not this agent's."""
    record = store.load(session)
    if record is None or record.session.agent != agent:
        raise AnswerError(texts.no_session(session))
    return usage_of(session, record.calls)


def usage_of(session: str, calls: Iterable[CallRow]) -> SessionUsage:
    by_run: dict[str, list[CallRow]] = {}
    for call in calls:
        if call.kind == MODEL_KIND:
            by_run.setdefault(call.run_id, []).append(call)
    runs = tuple(RunUsage(run, _added(asks)) for run, asks in by_run.items())
    return SessionUsage(session, runs, _added([a for asks in by_run.values() for a in asks]))


def _added(asks: list[CallRow]) -> Usage:
    input_tokens = output_tokens = 0
    cost: Decimal | None = Decimal(0)
    for ask in asks:
        answer = ask.result if isinstance(ask.result, Mapping) else {}
        used = answer.get("usage") or {}
        input_tokens += int(used.get("input_tokens", 0))
        output_tokens += int(used.get("output_tokens", 0))
        if not answer:
            continue  # an ask that got no answer used no tokens, and costs nothing
        price = answer.get("cost_usd")
        cost = None if cost is None or price is None else cost + Decimal(price)
    return Usage(len(asks), input_tokens, output_tokens, cost)
