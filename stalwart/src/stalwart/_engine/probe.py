"""A write's probe, asked once when the write's outcome is in doubt (tools/probe.py).

Only `runs.ask_outcome` asks it, just before the outcome question is put to a person; a
write whose outcome is not in doubt never has its probe asked. The probe is a read: its
answer (or why it could not be asked) becomes `Evidence` under the question, and
changes nothing else: the run waits on the question as it would without it, and the
person's answer decides, by the chapter's rules.

How it is recorded: a row of kind "probe" (`<write's call id>:probe`, the write's step),
written in the same commit as the question it is shown under, with the evidence in the
question itself. A probe changes nothing, so it is not committed in flight before it is
asked (a step's read is, because its answer moves the run). Hence:

- a process that stops while the probe is being asked has committed neither: the record
  still shows the write in flight, and the resumed run asks the outcome question, and
  the probe, once more; nothing was kept of the first asking, so nothing is duplicated;
- once the question is committed, its evidence and the probe's row are in the record:
  every process shows the same evidence and none asks the probe again;
- a probe row found finished for the write (never, by the above, but cheap to honour)
  is shown again rather than asked again.

A probe that raises, times out (its own `timeout`, else `PROBE_TIMEOUT` seconds), returns
what the record cannot keep, or is not listed by the agent, is shown as such
("get_charge could not be asked: TimeoutError: ...").
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import texts
from ..errors import ToolTimeout
from ..record.ledger import Ledger
from ..record.schema import CallRow, CallStatus, RunRow, as_recorded
from ..replies import Evidence
from ..tools import ToolSpec
from ..tools.current import sending
from ..tools.paths import parse_path, resolve
from ..tools.probe import ProbeSpec, probe_bindings
from .calls import as_current, finish, typed_args
from .context import RunContext
from .retry import render_error

PROBE_KIND = "probe"
# Seconds a probe that declares no timeout of its own may take: a person waits for it.
PROBE_TIMEOUT = 10.0


def probe_id(write: CallRow) -> str:
    return f"{write.call_id}:probe"


def ask_probe(ledger: Ledger, context: RunContext, run: RunRow, write: CallRow) -> Evidence | None:
    """Ask the probe of `write` (in doubt) and return what it found; None when the write
    declares no probe. The probe's row is left in the ledger, for the question's commit."""
    spec = context.tools.get(write.tool)
    if spec is None or spec.probe is None:
        return None
    probe = context.tools.get(spec.probe.tool)
    if probe is None:
        text = texts.probe_not_listed(spec.probe.tool)
        return Evidence(tool=spec.probe.tool, args={}, text=text, found=None, error=text)
    bound = _bind(spec, probe, write)
    if isinstance(bound, str):
        return Evidence(tool=probe.name, args={}, text=bound, found=None, error=bound)
    args, subject, keyed = bound
    row = ledger.call(probe_id(write))
    if row is None or row.status not in (CallStatus.RAN, CallStatus.FAILED):
        row = _asked(ledger, run, write, probe, args, row)
    return _evidence(row, subject, keyed)


def _bind(
    write_spec: ToolSpec, probe: ToolSpec, write: CallRow
) -> tuple[dict[str, Any], dict[str, Any], bool] | str:
    """The probe's arguments, the part of them taken from the write's arguments (what the
    sentence says it was asked about) and whether the write's key was given; or why it
    cannot be bound (a text)."""
    write_args = typed_args(write_spec, write.args)
    args: dict[str, Any] = {}
    subject: dict[str, Any] = {}
    keyed = probe.takes_idempotency_key
    for binding in probe_bindings(write_spec, probe):
        source = binding.source
        if source is None:  # refused when the catalogue is built; said, never guessed
            return texts.probe_unbound_now(probe.name, binding.argument, "nothing")
        kind, path = ProbeSpec.parse_source(source)
        if kind == "key":
            args[binding.argument] = write.key
            keyed = True
            continue
        found, value = resolve(write_args, parse_path(path) or (path,))
        if not found:
            return texts.probe_unbound_now(probe.name, binding.argument, source)
        args[binding.argument] = value
        subject[binding.argument] = value
    return probe.typed(args), probe.typed(subject), keyed


def _asked(
    ledger: Ledger,
    run: RunRow,
    write: CallRow,
    probe: ToolSpec,
    args: dict[str, Any],
    before: CallRow | None,
) -> CallRow:
    """Ask the probe; its row, finished (ran or failed), put in the ledger."""
    row = CallRow(
        call_id=probe_id(write),
        run_id=run.run_id,
        session=run.session,
        agent=write.agent,
        seq=before.seq if before is not None else ledger.next_call_seq(),
        step=write.step,
        kind=PROBE_KIND,
        tool=probe.name,
        args=as_recorded(args),
        key=None,
        status=CallStatus.IN_FLIGHT,
        allowed=None,
        result=None,
        error=None,
        undoes=None,
        undone_by=None,
        bindings=None,
        created=ledger.clock.now(),
        finished=None,
        tries=(before.tries if before is not None else 0) + 1,
    )
    bounded = dataclasses.replace(probe, timeout=probe.timeout or PROBE_TIMEOUT)
    try:
        # Its tool reads it as `current_call()` (kind "probe", no key of its own: the
        # write's key is what it is asked about, bound as `$key`).
        with sending(as_current(run, row, ledger.lease_token)):
            result = bounded.call(args, write.key)
        recorded = as_recorded(result)
    except Exception as error:  # NotRecordable too: what it returned cannot be kept
        return ledger.put_call(finish(ledger, row, CallStatus.FAILED, error=_said(error)))
    return ledger.put_call(finish(ledger, row, CallStatus.RAN, result=recorded))


def _said(error: BaseException) -> str:
    """The error as the record keeps it (`RuntimeError: down`); stalwart's own timeout is
    named as the TimeoutError it is."""
    rendered = render_error(error)
    if isinstance(error, ToolTimeout):
        return "TimeoutError" + rendered[len(type(error).__name__) :]
    return rendered


def _evidence(row: CallRow, subject: dict[str, Any], keyed: bool) -> Evidence:
    shown = dict(row.args)
    if row.status == CallStatus.FAILED:
        text = texts.probe_failed(row.tool, *_split(row.error or ""))
        return Evidence(row.tool, shown, text, None, None, row.error, row.call_id, row.finished)
    finding = texts.probe_finding(row.result)
    about = texts.probe_subject(subject)
    if finding is None:
        text = texts.probe_found_nothing(row.tool, about, keyed)
    else:
        text = texts.probe_found(row.tool, finding, about, keyed)
    found = finding is not None
    return Evidence(row.tool, shown, text, found, row.result, None, row.call_id, row.finished)


def _split(error: str) -> tuple[str, str]:
    name, _, message = error.partition(": ")
    return name, message
