"""A guarded run: a run whose steps a foreign agent loop (Pydantic AI, ...) chooses and sends.

The facade is `stalwart.guarded`; this module only moves the run, through `runs.move` and
the same table, with the same steps as stalwart's own model loop:

- each call the framework makes is a step of the run, appended in the order the
  framework presents it (its call id kept as the step's `tool_call_id`, the locator by
  which it is found again; the key is stalwart's own, over session, step, tool and
  arguments);
- `runs.advance` confirms (or refuses) the step at the cursor as it does any, and stops
  where stalwart's own loop would send it: the framework sends it, through `send`, which
  is `runs.send_step` / `runs.try_call` with the framework's sender (in flight before the
  send, the key, the retry table, the outcome question);
- a failed step, a `cancel all` or `did not happen`, and a failure the framework hands over
  (`fail`), roll the run back by `runs.advance`, last write first, undos sent by stalwart
  itself.
"""

from __future__ import annotations

from typing import Any

from .. import texts
from ..errors import RunStateError
from ..record.ledger import Ledger
from ..record.schema import RunRow, as_recorded, replace_row
from ..states import Event, State
from ..steps import PlannedStep, planned_steps
from .context import RunContext
from .failures import Failed, recorded_failure
from .model_loop import _seen_results
from .runs import Sender, _new_run, advance, move, send_step, try_call


def call_id_of(run: RunRow, index: int) -> str:
    """The record's id of the call of the run's step at `index` (as `calls.step_row` makes it)."""
    return f"{run.run_id}:{index + 1}"


def start(ledger: Ledger, turn: str, framework: str, kept: Any = None) -> RunRow:
    """Record a new run of `framework`, its checkpoint `kept`, and commit it."""
    run = _new_run(ledger, turn, [])
    run = replace_row(run, framework={"name": framework, "kept": as_recorded(kept)})
    run = move(ledger, run, Event.TO_MODEL)
    ledger.commit()
    return run


def find(run: RunRow, call_id: str) -> int | None:
    """The index of the run's step the framework's call `call_id` is, or None."""
    for index, step in enumerate(planned_steps(run.steps)):
        if step.tool_call_id == call_id:
            return index
    return None


def add_step(
    ledger: Ledger,
    context: RunContext,
    run: RunRow,
    call_id: str,
    tool: str,
    args: dict[str, Any],
) -> tuple[RunRow, int]:
    """Append a call the framework makes as the run's next step (`args` as recorded).

    At the cursor, a step a person confirms is asked for (or refused) now; any other waits
    for its send, which commits it in flight; behind another step, it waits its turn. Each
    is committed with the next commit: a question, with the framework's checkpoint, before
    anyone is shown it (`GuardedRun.close` at the latest).
    """
    step = PlannedStep(
        tool=tool, args=args, tool_call_id=call_id, sources=_sources(ledger, context, run, args)
    )
    run = ledger.put_run(replace_row(run, steps=[*run.steps, step.to_record()]))
    index = len(run.steps) - 1
    spec = context.tools.get(tool)
    confirmed = spec is not None and context.confirms(spec)
    if run.state == State.RUNNING and run.cursor == index and confirmed:
        run = advance(ledger, context, run, commit=False)
    return run, index


def _sources(
    ledger: Ledger, context: RunContext, run: RunRow, args: dict[str, Any]
) -> dict[str, str]:
    # Imported here: provenance reads the grammar's tokens, which the engine needs only here.
    from ..policy.provenance import sources_of

    return sources_of(args, run.turn, _seen_results(ledger, run), context.grammars)


def send(ledger: Ledger, context: RunContext, run: RunRow, index: int, sender: Sender) -> RunRow:
    """Send the step at `index` through `sender`, by stalwart's rules, and go on as far as
    the run goes without its framework (a failure rolled back; the next step asked for)."""
    if run.state != State.RUNNING or run.cursor != index:
        raise RunStateError(texts.guarded_not_sendable(run.run_id, index + 1, run.state))
    call = ledger.call(call_id_of(run, index))
    if call is None:
        step = PlannedStep.from_record(run.steps[index])
        run = send_step(ledger, context, run, index, step, sender)
    else:  # left in flight by a process that stopped: sent again under its key
        run = try_call(ledger, context, run, call, sender)
    return advance(ledger, context, run)


def fail(
    ledger: Ledger, context: RunContext, run: RunRow, framework: str, error: BaseException
) -> RunRow:
    """The framework failed (its model, its own code): the run fails and is rolled back.

    A run that waits for a person, or has ended, is left as it is.
    """
    if run.state != State.RUNNING:
        return run
    failure = recorded_failure(Failed(framework, type(error).__name__))
    run = move(ledger, run, Event.MODEL_FAILED, failure=failure)
    return advance(ledger, context, run)


def finish(ledger: Ledger, run: RunRow, text: str) -> RunRow:
    """The framework's loop ended with its model's last word: the run is done."""
    if run.state != State.RUNNING or run.cursor < len(run.steps):
        raise RunStateError(texts.guarded_not_finished(run.run_id, run.state))
    reply = text or texts.MODEL_NO_ANSWER
    ledger.add_message("assistant", reply, run.run_id)
    run = move(ledger, run, Event.FINISHED, reply=reply)
    ledger.commit()
    return run


def keep(ledger: Ledger, run: RunRow, kept: Any) -> RunRow:
    """Keep the framework's checkpoint beside the run (committed with the next commit)."""
    framework = {**(run.framework or {}), "kept": as_recorded(kept)}
    return ledger.put_run(replace_row(run, framework=framework))
