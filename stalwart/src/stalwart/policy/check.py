"""What every step passes before it is sent: the rulebook, and for an undo its bindings.

The check only decides; the run driver records the verdict's text in the same commit
that marks the call in flight, so what the check allowed is durable before the send.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from .. import texts
from ..record.schema import TOOK_EFFECT, CallRow, CallStatus
from ..tools import IDEMPOTENCY_KEY_PARAM, ToolSpec, UndoSpec
from ..tools.paths import Step, parse_path, resolve
from .rulebook import PastCall


class Rules(Protocol):
    def refusal(
        self,
        tool: str,
        args: Mapping[str, Any],
        history: Sequence[PastCall],
        sources: Mapping[str, str] | None = None,
    ) -> str | None:
        """None if the call is allowed, else the reason (a clause, see texts.REFUSAL_TEXTS)."""
        ...


@dataclass(frozen=True)
class Verdict:
    """The check's answer: allowed or not, and the text the record keeps.

    `reason`, on a refusal, is the clause the run's reply builds on ("the check refused
    charge_card, because <reason>"); `text` is the sentence on its own.
    """

    allowed: bool
    text: str
    reason: str = ""

    @classmethod
    def refused(cls, tool: str, reason: str) -> Verdict:
        return cls(False, texts.refusal_sentence(tool, reason), reason)


@dataclass(frozen=True)
class UndoPlan:
    """The undo of one write: its tool, its arguments, and where each came from."""

    tool: str
    args: dict[str, Any]
    sources: dict[str, str]


class Check:
    """The checks of one agent: its catalogue of tools and its rulebook."""

    def __init__(self, tools: Mapping[str, ToolSpec], rules: Rules) -> None:
        self.tools = tools
        self.rules = rules
        # The one verdict allowing a call of each tool (it names the tool alone), made once:
        # every step is checked when it is asked about and again before it is sent.
        self._allowed: dict[str, Verdict] = {}

    def call(
        self,
        tool: str,
        args: Mapping[str, Any],
        history: Sequence[PastCall],
        sources: Mapping[str, str] | None = None,
    ) -> Verdict:
        """The rulebook's verdict on a step; `sources` says where each argument came from
        ("turn", "step <n> (<tool>)" or "model"; see `provenance.py`)."""
        spec = self.tools.get(tool)
        if spec is None:
            return Verdict.refused(tool, texts.NOT_IN_CATALOGUE)
        for param in spec.params:
            if param.required and param.name != IDEMPOTENCY_KEY_PARAM and param.name not in args:
                return Verdict.refused(tool, texts.missing_argument_reason(param.name))
        for name, value in args.items():
            declared = spec.param(name)
            if declared is None or name == IDEMPOTENCY_KEY_PARAM:
                return Verdict.refused(tool, texts.unknown_argument_reason(name))
            refused = declared.type.refusal(name, value)
            if refused is not None:
                return Verdict.refused(tool, refused.reason)
        reason = self.rules.refusal(tool, args, history, sources)
        if reason is not None:
            return Verdict.refused(tool, reason)
        allowed = self._allowed.get(tool)
        if allowed is None:
            allowed = self._allowed[tool] = Verdict(True, texts.allowed_call(tool))
        return allowed

    def plan_undo(self, write: CallRow, declared: UndoSpec | None = None) -> UndoPlan | str:
        """Bind the undo of a write to that write; a str says why it cannot be bound.

        `declared` is the undo as the write declared it when it ran (kept on its record);
        without it, the write's tool's declaration now.
        """
        spec = self.tools.get(write.tool)
        undo = declared or (spec.undo if spec is not None else None)
        if undo is None:
            raise ValueError(f"{write.tool} declares no undo")
        undo_spec = self.tools.get(undo.tool)
        if undo_spec is None:
            return texts.undo_not_in_catalogue(undo.tool)
        sources = _sources(undo, undo_spec, write)
        if isinstance(sources, str):
            return sources
        args: dict[str, Any] = {}
        for name, source in sources.items():
            found, value = _resolve(source, write)
            if not found:
                return _unbound(undo.tool, name, source, write)
            args[name] = value
        return UndoPlan(tool=undo.tool, args=args, sources=sources)

    def undo(self, write: CallRow, plan: UndoPlan, history: Sequence[PastCall]) -> Verdict:
        """Check an undo as the agent whose write it undoes: provenance, then the rulebook."""
        if write.status not in TOOK_EFFECT:
            return Verdict(False, texts.undo_of_step_not_run(plan.tool))
        if write.undone_by is not None:
            return Verdict(False, texts.undo_already_done(plan.tool))
        for name, value in plan.args.items():
            source = plan.sources.get(name)
            if source is None:
                return Verdict(False, texts.undo_argument_not_bound(plan.tool, name))
            found, bound = _resolve(source, write)
            if not found or bound != value:
                return Verdict(False, texts.undo_bound_elsewhere(plan.tool, name, source))
        # Every argument of an undo is bound to the step it undoes.
        from_step = {name: texts.source_step(write.step, write.tool) for name in plan.args}
        reason = self.rules.refusal(plan.tool, plan.args, history, from_step)
        if reason is not None:
            return Verdict(False, texts.undo_refused(plan.tool, reason), reason)
        return Verdict(True, texts.allowed_undo(plan.tool, write.tool, write.step, plan.sources))


def _sources(undo: UndoSpec, undo_spec: ToolSpec, write: CallRow) -> dict[str, str] | str:
    """Where each argument of the undo comes from: explicit bindings, else by name."""
    explicit = dict(undo.args or {})
    found = write.result
    result = found if type(found) is dict or isinstance(found, Mapping) else {}
    sources: dict[str, str] = {}
    for param in undo_spec.params:
        if param.name == IDEMPOTENCY_KEY_PARAM:
            continue
        if param.name in explicit:
            sources[param.name] = explicit.pop(param.name)
        elif param.name in write.args:
            sources[param.name] = f"$args.{param.name}"
        elif param.name in result:
            sources[param.name] = f"$result.{param.name}"
        elif param.required:
            return _unbound(undo.tool, param.name, f"$result.{param.name}", write)
    for name in explicit:  # bound in agent.yaml, but the undo takes no such argument
        return texts.undo_unbound(undo.tool, name)
    return sources


def _unbound(undo: str, argument: str, source: str, write: CallRow) -> str:
    """Why an argument cannot be bound; a write of unknown outcome has no result to bind."""
    if write.status == CallStatus.HAPPENED and source.startswith("$result."):
        return texts.undo_result_unseen(undo, argument)
    return texts.undo_unbound(undo, argument)


def _resolve(source: str, write: CallRow) -> tuple[bool, Any]:
    """The value a binding names in the write's record: (found, value)."""
    where, steps = _parsed(source)
    if steps is None:
        return False, None
    return resolve(write.args if where == "args" else write.result, steps)


@lru_cache(maxsize=1024)
def _parsed(source: str) -> tuple[str, tuple[Step, ...] | None]:
    """A binding read once ('$result.charge.id' as ('result', ('charge', 'id'))): each
    undo's bindings are resolved when it is planned and again when it is checked. A
    binding that is none raises (`ToolDefinitionError`), every time: nothing is kept."""
    where, path = UndoSpec.parse_source(source)
    return where, parse_path(path)
