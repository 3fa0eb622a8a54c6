"""The routes of an agent and the QG checks made on each (see the package's docstring)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from .. import texts
from ..config import AgentConfig, ProjectConfig, confirms
from ..policy.check import Check, UndoPlan
from ..policy.rulebook import ArgumentCap, PastCall, Rulebook, TotalCap
from ..record.schema import CallRow, CallStatus
from ..states import others_would_be_undone
from ..tools import IDEMPOTENCY_KEY_PARAM, ToolSpec, closest_tool
from ..tools.mcp_seen import changed
from .findings import DEFAULT_MAX_STEPS, Code, Finding, Report, Route
from .lints import result_fields


def verify_project(project: ProjectConfig, *, max_steps: int = DEFAULT_MAX_STEPS) -> Report:
    """Every agent's findings, agent by agent in file order."""
    reports = [verify_agent(agent, max_steps=max_steps) for agent in project.agents.values()]
    return Report(
        findings=tuple(f for report in reports for f in report.findings),
        max_steps=max_steps,
        unreached=tuple(u for report in reports for u in report.unreached),
    )


def verify_agent(agent: AgentConfig, *, max_steps: int = DEFAULT_MAX_STEPS) -> Report:
    """The agent's findings: each code's, tool by tool as listed, on its shortest route."""
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 2:
        raise ValueError(f"max_steps must be a whole number, 2 or more; got {max_steps!r}")
    found: dict[tuple[Code, str], Finding] = {}
    reached: set[str] = set()
    checks = _Checks(agent)
    for route in routes(agent, max_steps):
        reached.add(route[-1])
        for finding in checks.on(route):
            found.setdefault((finding.code, finding.tool), finding)
    order = {name: index for index, name in enumerate(agent.tools)}
    codes = list(Code)
    findings = sorted(
        found.values(), key=lambda f: (codes.index(f.code), order.get(f.tool, len(order)))
    )
    unreached = tuple((agent.name, name) for name in agent.tools if name not in reached)
    return Report(findings=tuple(findings), max_steps=max_steps, unreached=unreached)


def routes(agent: AgentConfig, max_steps: int = DEFAULT_MAX_STEPS) -> Iterator[Route]:
    """Every route of the agent up to `max_steps` steps, shortest first (see `stalwart.verify`)."""
    rules = _route_rules(agent.rulebook)
    level: list[Route] = [()]
    for _ in range(max_steps):
        following: list[Route] = []
        for route in level:
            history = [PastCall(t, _abstract_args(agent.tools[t]), True, False) for t in route]
            for name, spec in agent.tools.items():
                args = _abstract_args(spec)
                if rules.refusal(name, args, history, {a: texts.SOURCE_TURN for a in args}):
                    continue
                following.append((*route, name))
        yield from following
        level = following


# --- the checks on one route ------------------------------------------------------------


class _Checks:
    def __init__(self, agent: AgentConfig) -> None:
        self.agent = agent
        self.tools = agent.tools
        catalogue = agent.project.catalogue
        self.undo_tools = {s.undo.tool for s in catalogue.values() if s.undo is not None}
        self.catalogue = catalogue
        self.check = Check(agent.tools, _route_rules(agent.rulebook))
        self.model_runs = (False, True) if agent.on_unread == "model" else (False,)

    def on(self, route: Route) -> Iterator[Finding]:
        specs = [self.tools[name] for name in route]
        last = specs[-1]
        yield from self._not_confirmed(route, last)
        yield from self._mcp_changed(route, last)
        if len(route) < 2:
            return
        for index, spec in enumerate(specs[:-1]):
            if spec.writes and last.writes and last.name != spec.name:
                yield from self._not_undoable(route, spec, last)
            if spec.irreversible and last.writes and last.undo is not None:
                yield from self._unwarned(route, specs, index, last)
        yield from self._rollback(route, specs)

    def _finding(self, code: Code, tool: str, route: Route, **facts: str) -> Finding:
        text, fix = texts.verify_finding(code.value, agent=self.agent.name, tool=tool, **facts)
        return Finding(code, self.agent.name, tool, route, text, fix)

    def _out_of_reach(self, route: Route, spec: ToolSpec, undo: str) -> Finding:
        """QG108: the agent cannot call the undo. When no tool of the catalogue has its name
        (a misspelt undo), the fix says so and names the closest tool, if one is close."""
        in_catalogue = undo in self.catalogue
        finding = self._finding(
            Code.UNDO_OUT_OF_REACH, spec.name, route, undo=undo,
            where=texts.verify_undo_missing(in_catalogue),
        )  # fmt: skip
        if in_catalogue:
            return finding
        closest = closest_tool(undo, (name for name in self.catalogue if name != spec.name))
        fix = texts.verify_undo_unknown_fix(
            undo, spec.name, self.agent.name, closest, closest_in_agent=closest in self.tools
        )
        return replace(finding, fix=fix)

    def _not_confirmed(self, route: Route, spec: ToolSpec) -> Iterator[Finding]:
        if spec.writes and not confirms(spec):
            yield self._finding(Code.WRITE_NOT_CONFIRMED, spec.name, route)

    def _mcp_changed(self, route: Route, spec: ToolSpec) -> Iterator[Finding]:
        differs = changed(spec)
        if differs:
            seen = str(spec.extra["mcp"].get("seen", ""))
            yield self._finding(
                Code.MCP_TOOL_CHANGED, spec.name, route, changes="; ".join(differs), file=seen
            )

    def _not_undoable(self, route: Route, write: ToolSpec, later: ToolSpec) -> Iterator[Finding]:
        if write.undo is None and not write.irreversible and write.name not in self.undo_tools:
            yield self._finding(Code.WRITE_NOT_UNDOABLE, write.name, route, later=later.name)

    def _unwarned(
        self, route: Route, specs: list[ToolSpec], index: int, undone: ToolSpec
    ) -> Iterator[Finding]:
        step = specs[index]
        if not confirms(step):
            yield self._finding(
                Code.IRREVERSIBLE_UNWARNED, step.name, route, later=undone.name,
                why=texts.VERIFY_NOT_CONFIRMED,
            )  # fmt: skip
            return
        ran = [s for s in specs[:index] if s.writes]
        for model_run in self.model_runs:
            if not others_would_be_undone(ran, specs[index + 1 :], model_run=model_run):
                yield self._finding(
                    Code.IRREVERSIBLE_UNWARNED, step.name, route, later=undone.name,
                    why=texts.VERIFY_NOT_WARNED,
                )  # fmt: skip
                return

    def _rollback(self, route: Route, specs: list[ToolSpec]) -> Iterator[Finding]:
        """The last step fails: undo the writes before it, last first, as the runtime does."""
        failing = route[-1]
        rows = [_row(index, spec, self.catalogue) for index, spec in enumerate(specs[:-1])]
        history = [PastCall(row.tool, row.args, True, False) for row in rows]
        history.append(PastCall(failing, _abstract_args(specs[-1]), False, False))
        for position in reversed(range(len(rows))):
            row, spec = rows[position], specs[position]
            if not spec.writes or spec.undo is None:
                continue
            if spec.undo.tool not in self.tools:
                yield self._out_of_reach(route, spec, spec.undo.tool)
                continue
            plan = self.check.plan_undo(row)
            if isinstance(plan, str):
                yield self._finding(
                    Code.UNDO_UNBOUND, spec.name, route, undo=spec.undo.tool, why=plan
                )
                continue
            verdict = self.check.undo(row, plan, history)
            if not verdict.allowed:
                yield self._finding(
                    Code.UNDO_REFUSED, spec.name, route, undo=plan.tool, failing=failing,
                    why=verdict.text,
                )  # fmt: skip
                continue
            history = _undone(history, position, plan)


def _route_rules(rulebook: Rulebook) -> Rulebook:
    """The rulebook less its caps on values, which the abstract arguments cannot meet."""
    kept = tuple(r for r in rulebook.rules if not isinstance(r, ArgumentCap | TotalCap))
    return Rulebook(source=rulebook.source, rules=kept)


def _abstract_args(spec: ToolSpec) -> dict[str, Any]:
    """One value per argument name, the same in every tool that takes it."""
    return {p.name: f"<{p.name}>" for p in spec.params if p.name != IDEMPOTENCY_KEY_PARAM}


def _row(index: int, spec: ToolSpec, catalogue: Mapping[str, ToolSpec]) -> CallRow:
    """A step of the route as the record would hold it once it ran."""
    args = _abstract_args(spec)
    result: dict[str, Any] = {}
    undo = catalogue.get(spec.undo.tool) if spec.undo is not None else None
    fields = result_fields(spec)
    if fields is not None:
        result = {name: f"<{name}>" for name in sorted(fields)}
    elif undo is not None:  # what it returns is not known: assume it has what the undo needs
        result = {p.name: f"<{p.name}>" for p in undo.params if p.name not in args}
    return CallRow(
        call_id=f"verify#1:{index + 1}", run_id="verify#1", session="verify", agent="",
        seq=index + 1, step=index + 1, kind="write" if spec.writes else "read",
        tool=spec.name, args=args, key=None, status=CallStatus.RAN.value, allowed=None,
        result=result, error=None, undoes=None, undone_by=None, bindings=None,
        created=0.0, finished=0.0,
    )  # fmt: skip


def _undone(history: Sequence[PastCall], position: int, plan: UndoPlan) -> list[PastCall]:
    """The history once the write at `position` is undone by `plan`."""
    changed = [
        PastCall(p.tool, p.args, p.ran, True) if index == position else p
        for index, p in enumerate(history)
    ]
    return [*changed, PastCall(plan.tool, plan.args, True, False)]
