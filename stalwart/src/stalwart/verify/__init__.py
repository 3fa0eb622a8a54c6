"""`stalwart verify`: routes, and the QG checks made before launch.

In parts: `findings.py` (codes, findings, the report), `checks.py` (the routes and the
checks on each), `turns.py` (sample turns).

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

The checks (each a code; `texts/verify.py` holds their texts and fixes)
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
           the agent's tools (or not in the catalogue at all: then its fix says no tool
           has the name, and names the closest tool when one is close).
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

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .checks import routes, verify_agent, verify_project
    from .findings import DEFAULT_MAX_STEPS, Code, Finding, Report, Route
    from .turns import (
        ExpectedStep,
        Reader,
        SampleTurn,
        TurnsFile,
        check_turns,
        load_turns,
        verify_turns,
    )
else:

    def __getattr__(name: str) -> object:
        """A name of `__all__`, from its module, loaded on first use: `import stalwart`
        reads `verify.lints` (an `Agent` lints itself), and so loads this package, but
        neither the route search nor the sample turns until someone verifies."""
        if name not in __all__:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from . import checks, findings, turns

        value = next(vars(part)[name] for part in (findings, checks, turns) if name in vars(part))
        globals()[name] = value
        return value


__all__ = [
    "DEFAULT_MAX_STEPS",
    "Code",
    "ExpectedStep",
    "Finding",
    "Reader",
    "Report",
    "Route",
    "SampleTurn",
    "TurnsFile",
    "check_turns",
    "load_turns",
    "routes",
    "verify_agent",
    "verify_project",
    "verify_turns",
]
