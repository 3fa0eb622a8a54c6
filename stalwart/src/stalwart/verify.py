"""`stalwart verify`: routes, and the QG checks made before launch.

Unlike the lints, verify fails: any finding is a reason not to launch. Each finding
names its code, the agent, a witness route and how to fix it.

Routes
    A route is a sequence of an agent's tool calls one run can make. The selector reads
    a turn into any sequence of the agent's tools, and a model may call them in any
    order, so a route is any sequence of the agent's tools, a tool as often as it likes,
    that the rulebook lets through step by step: an order rule (`X only after Y`) holds
    only once Y ran earlier on the route, a count cap (`cap X calls <= n per session`)
    counts the route's calls, and `require` rules see every value come from the turn.
    Arguments are abstract: one value per argument name, so a `with same order` rule
    holds whenever both tools take an `order`; caps on values are not applied (they
    decide which values pass, not which tools). A route starts a new session: calls
    of earlier runs are not counted.

    Routes are explored shortest first, up to `DEFAULT_MAX_STEPS` (4) steps. Each check
    needs at most two tools of interest (a write and a later step) plus the steps that
    order rules put before them; four steps leave room for two such prerequisites and
    keep the search small (tools ** 4 routes). `max_steps` raises it. A tool no route
    within the bound reaches is listed as unreached (not a finding).

    The witness of a finding is its shortest route. Where a check is about a failed
    run, the route's last step is the one that fails (it raises, is refused, or is
    cancelled), and the steps before it ran.

The checks (each a code; `VERIFY_TEXTS` in texts.py holds their texts and fixes)
    QG013  an irreversible step before a write a failed run would undo, whose
           confirmation does not say so: it asks for no confirmation (`confirm: never`),
           or its confirmation lacks "Nothing undoes this step, and the steps after it
           cannot undo it." (asked exactly as a run asks it: `others_would_be_undone`).
    QG014  a write that runs without a person confirming it (`confirm: never`).
    QG015  an MCP tool whose server lists other annotations or schemas than when it was
           first seen (`tools/mcp_seen.py`).
    QG105  a write with neither an undo nor `irreversible`, before another write (of
           another tool: else every plain write would be one, called twice): if that
           write fails, the run cannot undo the first, and nothing says so. An undo tool
           is judged as an undo, not as a write (as the lints do).
    QG106  an undo the rulebook would refuse on the route where it is needed: the
           rollback checks it as the runtime does (`Check.undo`) and would leave the
           write done.
    QG107  an undo argument bound to nothing: a `$result.<field>` the write's return
           (its declared type, else its docstring or `return` statements) lacks, or an
           `$args.<name>` the write does not take.
    QG108  a write on a route where its undo cannot be called: the undo is not among
           the agent's tools (or not in the catalogue at all).
    QG201  a sample turn (`--turns`) that reads differently from what the file expects.

Sample turns
    `--turns turns.yaml` lists turns and how each must read, so a team that edits a
    docstring or adds a tool learns before launch which turns now read differently::

        agent: desk                      # optional when the file has one agent
        turns:
          - turn: "charge order 4411 40.00, then update the crm for order 4411"
            steps:
              - {tool: charge_card, args: {order: 4411, amount: 40.00}}
              - {tool: update_crm, args: {order: 4411}}
          - turn: "cobrar o pedido 4411"
            unread: "it is not written in English, ..."   # the reason, exactly

    A QG201 finding's `tool` is the turn's place in the file (`turns[0]`); its route is
    empty.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from . import texts
from ._engine.calls import typed_args
from ._engine.runs import others_would_be_undone
from .config import AgentConfig, ProjectConfig, confirms
from .errors import ConfigError
from .policy.check import Check, UndoPlan
from .policy.rulebook import ArgumentCap, PastCall, Rulebook, TotalCap
from .record.schema import CallRow, CallStatus
from .selector import Reading, read_turn
from .tools import IDEMPOTENCY_KEY_PARAM, ToolSpec
from .tools.lints import result_fields
from .tools.mcp_seen import changed

DEFAULT_MAX_STEPS = 4

Route = tuple[str, ...]
Reader = Callable[[str, Sequence[ToolSpec]], Reading]


class Code(StrEnum):
    IRREVERSIBLE_UNWARNED = "QG013"
    WRITE_NOT_CONFIRMED = "QG014"
    MCP_TOOL_CHANGED = "QG015"
    WRITE_NOT_UNDOABLE = "QG105"
    UNDO_REFUSED = "QG106"
    UNDO_UNBOUND = "QG107"
    UNDO_OUT_OF_REACH = "QG108"
    TURN_READS_DIFFERENTLY = "QG201"


@dataclass(frozen=True)
class Finding:
    """One reason not to launch: its code, the agent, the tool, a witness route, and the
    text and the fix a person reads."""

    code: Code
    agent: str
    tool: str
    route: Route
    text: str
    fix: str

    def __str__(self) -> str:
        return texts.verify_line(self.code.value, self.agent, self.route, self.text, self.fix)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code.value,
            "agent": self.agent,
            "tool": self.tool,
            "route": list(self.route),
            "text": self.text,
            "fix": self.fix,
        }


@dataclass(frozen=True)
class Report:
    """What verify found over a file's agents; `passed` when nothing."""

    findings: tuple[Finding, ...]
    max_steps: int
    unreached: tuple[tuple[str, str], ...] = ()  # (agent, tool) no route reached
    turns: int = 0  # sample turns compared

    @property
    def passed(self) -> bool:
        return not self.findings

    def with_turns(self, findings: Sequence[Finding], turns: int) -> Report:
        """This report and the findings of `turns` sample turns."""
        return Report((*self.findings, *findings), self.max_steps, self.unreached, turns)

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "max_steps": self.max_steps,
            "findings": [finding.to_json() for finding in self.findings],
            "unreached": [{"agent": a, "tool": t} for a, t in self.unreached],
            "turns": self.turns,
        }


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
    """Every route of the agent up to `max_steps` steps, shortest first (see the module)."""
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
                yield self._finding(
                    Code.UNDO_OUT_OF_REACH, spec.name, route, undo=spec.undo.tool,
                    where=texts.verify_undo_missing(spec.undo.tool in self.catalogue),
                )  # fmt: skip
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


# --- sample turns that must keep reading the same ------------------------------------------


@dataclass(frozen=True)
class ExpectedStep:
    tool: str
    args: Mapping[str, Any]


@dataclass(frozen=True)
class SampleTurn:
    """One turn of a turns file and how it must read: its steps, or unread with a reason."""

    turn: str
    steps: tuple[ExpectedStep, ...] = ()
    unread: str | None = None  # the reason it is not read, when it must not be
    key_path: str = ""  # where the file says it, for a finding


class _RawStep(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    tool: str
    args: dict[str, Any] = {}


class _RawTurn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    turn: str
    steps: list[_RawStep] | None = None
    unread: str | None = None


class _RawTurns(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    agent: str | None = None
    turns: list[_RawTurn]


@dataclass(frozen=True)
class TurnsFile:
    agent: str | None
    turns: tuple[SampleTurn, ...]


def load_turns(path: str | Path) -> TurnsFile:
    """Read a turns file (see docs/verify.md); ConfigError naming the key if it is wrong."""
    source = str(path)
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(source, "", f"cannot read the file: {error.strerror}") from error
    except yaml.YAMLError as error:
        raise ConfigError(source, "", f"invalid YAML: {error}") from error
    try:
        raw = _RawTurns.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ConfigError(source, where, f"{first['msg']}, got {first.get('input')!r}") from None
    turns: list[SampleTurn] = []
    for index, item in enumerate(raw.turns):
        key_path = f"turns[{index}]"
        if (item.steps is None) == (item.unread is None):
            raise ConfigError(source, key_path, texts.TURNS_STEPS_OR_UNREAD)
        steps = tuple(ExpectedStep(s.tool, dict(s.args)) for s in item.steps or ())
        turns.append(SampleTurn(item.turn, steps, item.unread, key_path))
    return TurnsFile(raw.agent, tuple(turns))


def check_turns(project: ProjectConfig, path: str | Path) -> tuple[list[Finding], int]:
    """The findings of a turns file over the agent it names (or the file's only agent),
    and how many turns it holds."""
    sample = load_turns(path)
    name = sample.agent
    if name is None and len(project.agents) > 1:
        raise ConfigError(str(path), "agent", texts.turns_agent_missing(list(project.agents)))
    if name is not None and name not in project.agents:
        raise ConfigError(str(path), "agent", texts.turns_agent_unknown(name, list(project.agents)))
    agent = project.agents[name] if name is not None else next(iter(project.agents.values()))
    return verify_turns(agent, sample.turns), len(sample.turns)


def verify_turns(
    agent: AgentConfig, turns: Sequence[SampleTurn], reader: Reader | None = None
) -> list[Finding]:
    """Read each sample turn with the selector and compare it with what the file expects.

    Steps compare by tool and arguments; the expected arguments are first typed by the
    tool's hints, as a run types them (so `amount: 40` is the float 40.0 of a float
    parameter). An unread turn compares by its reason.
    """
    read = reader or read_turn
    tools = list(agent.tools.values())
    findings: list[Finding] = []
    for sample in turns:
        reading = read(sample.turn, tools)
        got = _shown_reading(agent, reading.reason, [(s.tool, s.args) for s in reading.steps])
        expected = _shown_reading(agent, sample.unread, [(s.tool, s.args) for s in sample.steps])
        if got != expected:
            text, fix = texts.verify_finding(
                Code.TURN_READS_DIFFERENTLY.value, turn=sample.turn, got=got, expected=expected
            )
            findings.append(
                Finding(Code.TURN_READS_DIFFERENTLY, agent.name, sample.key_path, (), text, fix)
            )
    return findings


def _shown_reading(
    agent: AgentConfig, unread: str | None, steps: Sequence[tuple[str, Mapping[str, Any]]]
) -> str:
    """A reading as a finding shows it: its calls as a confirmation shows them, or why it
    is not read."""
    if unread is not None:
        return texts.verify_unread(unread)
    shown: list[str] = []
    for tool, args in steps:
        spec = agent.tools.get(tool)
        typed = typed_args(spec, args) if spec is not None else dict(args)
        shown.append(texts.call_text(tool, typed))
    return texts.verify_steps(shown)
