"""A write's probe: how it is declared (tools/probe.py) and what it found, shown under the
outcome question (_engine/probe.py) as evidence. The chapter's question and answers are
not changed: the evidence is a line of its own under them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from .questions import shown_value, visible

# --- declaring a probe (tools/probe.py, config/catalogue.py) ---


def probe_bad_binding(probe: str, argument: str, source: Any) -> str:
    return (
        f"probe {probe!r}: argument {argument!r} is bound to {source!r}; "
        "expected '$args.<name>' or '$key'"
    )


def probe_bad_shape(probe: Any) -> str:
    return f"probe {probe!r}: expected a tool name or {{tool: <name>, args: {{...}}}}"


def probe_on_a_read(tool: str) -> str:
    return (
        f"tool {tool!r}: only a write can have a probe (a read's outcome is never in "
        "doubt: it is asked again)"
    )


def probe_unknown(write: str, probe: str, closest: str | None) -> str:
    meant = f" (did you mean {closest!r}?)" if closest else ""
    return f"{write}'s probe names {probe!r}, which no tool source provides{meant}"


def probe_is_a_write(write: str, probe: str) -> str:
    return (
        f"{write}'s probe {probe} is a write; a probe must be a read, since it is asked "
        f"while nobody knows whether {write} took effect and must change nothing"
    )


def probe_takes_no(write: str, probe: str, argument: str, taken: str) -> str:
    return f"{write}'s probe binds {argument!r}, which {probe} does not take (it takes {taken})"


def probe_no_such_argument(write: str, probe: str, argument: str, source: str) -> str:
    return (
        f"{write}'s probe binds {probe}'s {argument!r} to {source}, which is not an "
        f"argument of {write}"
    )


def probe_unbound(write: str, probe: str, argument: str) -> str:
    return (
        f"{write}'s probe {probe} takes {argument!r}, which nothing binds: {write} has no "
        f"argument of that name; bind it: probe: {{tool: {probe}, args: {{{argument}: "
        "$args.<name> or $key}}"
    )


# --- what a probe found (_engine/probe.py), shown under the outcome question ---

# Where a probe's finding is cut (a result is shown whole in the record).
PROBE_FOUND_LIMIT = 200


def probe_found(probe: str, found: str, subject: str, keyed: bool) -> str:
    """`get_charge found charge ch_19 for order 4411 under this key`."""
    return f"{probe} found {found}{_for(subject, keyed)}"


def probe_found_nothing(probe: str, subject: str, keyed: bool) -> str:
    """`get_charge found nothing for order 4411 under this key`."""
    return f"{probe} found nothing{_for(subject, keyed)}"


def probe_finding(result: Any) -> str | None:
    """What a probe's result says it found, as the sentence names it; None: nothing (None,
    false, an empty text or collection). A mapping is its fields (`charge ch_19, amount
    25.00`), a list its items, a bare `true` "it"; cut to `PROBE_FOUND_LIMIT`."""
    if (
        result is None
        or result is False
        or (isinstance(result, str | Sequence | Mapping) and len(result) == 0)
    ):
        return None
    if result is True:
        return PROBE_FOUND_IT
    if isinstance(result, Mapping):
        text = ", ".join(f"{visible(str(name))} {probe_value(v)}" for name, v in result.items())
    elif isinstance(result, Sequence) and not isinstance(result, str):
        items = [probe_value(item) for item in result]
        text = items[0] if len(items) == 1 else probe_results(len(items), "; ".join(items))
    else:
        text = probe_value(result)
    return text if len(text) <= PROBE_FOUND_LIMIT else text[: PROBE_FOUND_LIMIT - 1] + "…"


def probe_value(value: Any) -> str:
    """One value in a probe's sentence: a text as it is (escaped where it does not show),
    a number as written, anything else as its JSON."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, Decimal | int | float) and not isinstance(value, bool):
        return shown_value(value)
    if isinstance(value, Mapping):
        return ", ".join(f"{visible(str(name))} {probe_value(v)}" for name, v in value.items())
    return shown_value(value)


def probe_subject(args: Mapping[str, Any]) -> str:
    """What a probe was asked about, from the write's arguments: `order 4411`."""
    return ", ".join(f"{visible(name)} {probe_value(value)}" for name, value in args.items())


def probe_failed(probe: str, error: str, message: str) -> str:
    """`get_charge could not be asked: TimeoutError: ...` (the probe raised or timed out)."""
    said = f": {message}" if message else ""
    return f"{probe} could not be asked: {error}{said}"


def probe_unbound_now(probe: str, argument: str, source: str) -> str:
    """A binding whose path the write's arguments do not have (the lint warned of it)."""
    return f"{probe} could not be asked: its {argument} <- {source} is not in the write's arguments"


def probe_not_listed(probe: str) -> str:
    """The agent does not list its write's probe (the lint `probe_out_of_reach`)."""
    return f"{probe} could not be asked: this agent does not list it"


def _for(subject: str, keyed: bool) -> str:
    said = f" for {subject}" if subject else ""
    return f"{said} under this key" if keyed else said


# What a found item is called when the probe returns bare `true`.
PROBE_FOUND_IT = "it"


def probe_results(count: int, shown: str) -> str:
    """Several results: `2 results: ch_19; ch_20`."""
    return f"{count} results: {shown}"


# The title of the evidence under the question (the interface, `stalwart chat`).
PROBE_EVIDENCE_TITLE = "Its probe says (you still decide):"


def chat_probe(sentence: str) -> str:
    """`stalwart chat`, under an outcome question: the probe's evidence."""
    return f"  {PROBE_EVIDENCE_TITLE} {sentence}"
