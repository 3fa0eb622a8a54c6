"""The registration lints: each of the chapter's eight, firing and not firing."""

from __future__ import annotations

import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stalwart.config import load_agent, load_project
from stalwart.texts import LINT_TEXTS
from stalwart.verify.lints import (
    Lint,
    lint_agent,
    lint_project,
    result_fields,
    undo_bindings,
)

pytestmark = pytest.mark.unit

SHOP = Path(__file__).resolve().parents[1] / "examples" / "shop"

Lints = Callable[..., list[str]]


@pytest.fixture
def lints(tmp_path: Path) -> Iterator[Lints]:
    """Write a tool module and agent.yaml, load it, and give its lints as printed.

    `tools` is the module's body (after `from stalwart import tool`); `yaml_text` may
    use TOOLS for the module's name.
    """
    modules: list[str] = []

    def run(tools: str, yaml_text: str) -> list[str]:
        module = f"lint_tools_{uuid.uuid4().hex[:10]}"
        modules.append(module)
        folder = tmp_path / module
        folder.mkdir()
        header = "from __future__ import annotations\nfrom stalwart import tool\n"
        (folder / f"{module}.py").write_text(header + textwrap.dedent(tools))
        path = folder / "agent.yaml"
        path.write_text(textwrap.dedent(yaml_text).replace("TOOLS", module))
        return [str(lint) for lint in lint_project(load_project(path))]

    yield run
    for module in modules:
        sys.modules.pop(module, None)
    sys.path[:] = [p for p in sys.path if not p.startswith(str(tmp_path))]


def one_agent(*tools: str, facts: str = "") -> str:
    return f"agents:\n  desk:\n    tools: [{', '.join(tools)}]\ntools:\n  - python: TOOLS\n{facts}"


def text(name: str, **placeholders: str) -> str:
    return LINT_TEXTS[name].format(**placeholders)


# --- the texts --------------------------------------------------------------------------


def test_the_texts_are_the_chapters_as_printed() -> None:
    assert LINT_TEXTS == {
        "write_without_compensation": "a write neither compensated nor marked irreversible",
        "write_not_retry_safe": (
            "a write with no idempotency, so an ambiguous failure goes to a person"
        ),
        "irreversible_without_confirmation": (
            "an irreversible operation that asks for no confirmation"
        ),
        "compensation_unknown_tool": "the compensation names '{undo}', which the catalogue lacks",
        "compensation_not_retry_safe": "'{undo}' undoes it and is not retry-safe",
        "compensation_unbound": "{argument} <- {source}",
        "compensation_cycle": "its compensations return to '{at}'",
        "compensation_out_of_reach": (
            "agent '{agent_name}' can call it but not '{undo}', which undoes it, so a run of "
            "that agent cannot undo it"
        ),
    }


def test_a_lint_prints_its_tool_name_and_text_and_its_agent_when_there_are_several() -> None:
    assert str(Lint("write_not_retry_safe", None, "charge_card", "x")) == (
        "charge_card: write_not_retry_safe: x"
    )
    assert str(Lint("write_not_retry_safe", "desk", "charge_card", "x")) == (
        "desk/charge_card: write_not_retry_safe: x"
    )


def test_the_shops_lints() -> None:
    desk = load_agent(SHOP / "agent.yaml")
    assert [str(lint) for lint in lint_agent(desk)] == [
        f"charge_card: write_not_retry_safe: {text('write_not_retry_safe')}",
        f"update_crm: write_not_retry_safe: {text('write_not_retry_safe')}",
        f"provision_account: write_not_retry_safe: {text('write_not_retry_safe')}",
        f"send_receipt: write_not_retry_safe: {text('write_not_retry_safe')}",
    ]
    assert lint_project(desk.project) == lint_agent(desk)


# --- each lint --------------------------------------------------------------------------

CLEAN = """
@tool
def look(order: int) -> dict:
    return {"order": order}

@tool(writes=True, undo="unwrite", retry_safe=True)
def write(order: int) -> dict:
    return {"order": order}

@tool(writes=True, retry_safe=True)
def unwrite(order: int) -> dict:
    return {"order": order}

@tool(writes=True, irreversible=True, retry_safe=True)
def announce(order: int) -> dict:
    return {"order": order}
"""


def test_a_catalogue_with_everything_said_has_no_lints(lints: Lints) -> None:
    assert lints(CLEAN, one_agent("look", "write", "unwrite", "announce")) == []


def test_write_without_compensation(lints: Lints) -> None:
    tools = CLEAN + (
        "\n@tool(writes=True, retry_safe=True)\ndef provision(order: int) -> None:\n    pass\n"
    )
    assert lints(tools, one_agent("provision")) == [
        f"provision: write_without_compensation: {text('write_without_compensation')}"
    ]
    # Said irreversible or compensated in agent.yaml: no lint.
    irreversible = "  - provision: {irreversible: true}\n"
    assert lints(tools, one_agent("provision", facts=irreversible)) == []
    compensated = "  - provision: {undo: unwrite}\n"
    assert lints(tools, one_agent("provision", "unwrite", facts=compensated)) == []


def test_an_undo_tool_is_not_asked_for_its_own_compensation_or_retry_safety(
    lints: Lints,
) -> None:
    unsafe_undo = "  - unwrite: {retry_safe: false}\n"
    assert lints(CLEAN, one_agent("write", "unwrite", facts=unsafe_undo)) == [
        f"write: compensation_not_retry_safe: {text('compensation_not_retry_safe', undo='unwrite')}"
    ]


def test_write_not_retry_safe(lints: Lints) -> None:
    facts = "  - announce: {retry_safe: false}\n"
    assert lints(CLEAN, one_agent("announce", facts=facts)) == [
        f"announce: write_not_retry_safe: {text('write_not_retry_safe')}"
    ]
    key_but_not_retry_safe = (
        "\n@tool(writes=True, irreversible=True)\n"
        "def mail(order: int, idempotency_key: str | None = None) -> None:\n    pass\n"
    )
    assert lints(CLEAN + key_but_not_retry_safe, one_agent("mail")) == [
        f"mail: write_not_retry_safe: {text('write_not_retry_safe')}"
    ]
    assert lints(CLEAN, one_agent("look")) == []  # a read is retried anyway


def test_irreversible_without_confirmation(lints: Lints) -> None:
    facts = "  - announce: {confirm: never}\n"
    assert lints(CLEAN, one_agent("announce", facts=facts)) == [
        "announce: irreversible_without_confirmation: " + text("irreversible_without_confirmation")
    ]
    confirmed = "  - announce: {confirm: true}\n"
    assert lints(CLEAN, one_agent("announce", facts=confirmed)) == []
    # A compensated write that runs unconfirmed can still be undone: not this lint.
    write_unconfirmed = "  - write: {confirm: never}\n"
    assert "irreversible_without_confirmation" not in " ".join(
        lints(CLEAN, one_agent("write", "unwrite", facts=write_unconfirmed))
    )


def test_write_without_confirmation_is_stalwarts_own_lint(lints: Lints) -> None:
    write_unconfirmed = "  - write: {confirm: never}\n"
    assert lints(CLEAN, one_agent("write", "unwrite", facts=write_unconfirmed)) == [
        "write: write_without_confirmation: a write that asks for no confirmation "
        "(confirm: never), though every write is confirmed by a person"
    ]
    assert "write_without_confirmation" not in LINT_TEXTS  # the chapter's table stays its own
    assert lints(CLEAN, one_agent("write", "unwrite")) == []
    # An irreversible write unconfirmed is the chapter's lint, said once.
    facts = "  - announce: {confirm: never}\n"
    assert [line.split(": ")[1] for line in lints(CLEAN, one_agent("announce", facts=facts))] == [
        "irreversible_without_confirmation"
    ]


def test_compensation_unknown_tool(lints: Lints) -> None:
    facts = "  - write: {undo: unwirte}\n"
    assert lints(CLEAN, one_agent("write", facts=facts)) == [
        "write: compensation_unknown_tool: " + text("compensation_unknown_tool", undo="unwirte")
    ]


def test_compensation_not_retry_safe(lints: Lints) -> None:
    tools = CLEAN.replace(
        "@tool(writes=True, retry_safe=True)\ndef unwrite", "@tool(writes=True)\ndef unwrite"
    )
    assert lints(tools, one_agent("write", "unwrite")) == [
        f"write: compensation_not_retry_safe: {text('compensation_not_retry_safe', undo='unwrite')}"
    ]
    # An undo that is a read is retried like any read.
    read_undo = "  - write: {undo: look}\n"
    assert lints(CLEAN, one_agent("write", "look", facts=read_undo)) == []


BOOKING = """
from typing import TypedDict

class Booking(TypedDict):
    booking: str
    seat: str

@tool(writes=True, retry_safe=True)
def book(flight: str, seat: str) -> Booking:
    return {"booking": "b-1", "seat": seat}

@tool(writes=True, retry_safe=True)
def book_untyped(flight: str):
    '''Book a seat.

    Returns:
        booking: the booking's reference
        price: what it cost
    '''
    return make_booking(flight)

@tool(writes=True, retry_safe=True)
def book_literal(flight: str) -> dict:
    return {"booking": "b-1", "price": 10}

@tool(writes=True, retry_safe=True)
def book_opaque(flight: str) -> dict:
    return make_booking(flight)

@tool(writes=True, retry_safe=True)
def cancel(booking: str, flight: str, reason: str = "undo") -> dict:
    return {"cancelled": booking}

def make_booking(flight):
    return {"booking": "b-1"}
"""


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        # Bound by name: flight from the write's arguments, booking from its result.
        ("  - book: {undo: cancel}\n", []),
        ("  - book_untyped: {undo: cancel}\n", []),  # documented in Returns:
        ("  - book_literal: {undo: cancel}\n", []),  # its return statements say
        ("  - book_opaque: {undo: cancel}\n", []),  # cannot be known: left to the check
        (
            "  - book: {undo: {tool: cancel, args: {booking: $result.booking, flight: $args.flight}}}\n",  # noqa: E501
            [],
        ),
        (
            "  - book: {undo: {tool: cancel, args: {booking: $result.reference}}}\n",
            ["booking <- $result.reference"],
        ),
        (
            "  - book: {undo: {tool: cancel, args: {flight: $args.flihgt}}}\n",
            ["flight <- $args.flihgt"],
        ),
        (
            "  - book_untyped: {undo: {tool: cancel, args: {booking: $result.ref}}}\n",
            ["booking <- $result.ref"],
        ),
        (
            "  - book_literal: {undo: {tool: cancel, args: {booking: $result.ref}}}\n",
            ["booking <- $result.ref"],
        ),
        ("  - book_opaque: {undo: {tool: cancel, args: {booking: $result.ref}}}\n", []),
    ],
)
def test_compensation_unbound_with_names_and_explicit_bindings(
    lints: Lints, facts: str, expected: list[str]
) -> None:
    write = facts.split(":")[0].strip(" -")
    found = lints(BOOKING, one_agent(write, "cancel", facts=facts))
    assert found == [f"{write}: compensation_unbound: {e}" for e in expected]


def test_compensation_unbound_names_nothing_when_no_argument_or_field_has_the_name(
    lints: Lints,
) -> None:
    tools = BOOKING.replace("def cancel(booking: str,", "def cancel(booking: str, pnr: str,")
    assert lints(tools, one_agent("book", "cancel", facts="  - book: {undo: cancel}\n")) == [
        "book: compensation_unbound: pnr <- nothing (no argument or result field named pnr)"
    ]


def test_result_fields_and_bindings_are_public_for_the_check(lints: Lints) -> None:
    lints(BOOKING, one_agent("book", "cancel"))
    module = next(m for name, m in sys.modules.items() if name.startswith("lint_tools_"))
    book, cancel = module.book.__stalwart_tool__, module.cancel.__stalwart_tool__
    assert result_fields(book) == frozenset({"booking", "seat"})
    assert result_fields(module.book_untyped.__stalwart_tool__) == frozenset({"booking", "price"})
    assert result_fields(module.book_literal.__stalwart_tool__) == frozenset({"booking", "price"})
    assert result_fields(module.book_opaque.__stalwart_tool__) is None
    assert [(b.argument, b.source) for b in undo_bindings(book, cancel)] == [
        ("booking", "$result.booking"),
        ("flight", "$args.flight"),
    ]


def test_compensation_cycle(lints: Lints) -> None:
    tools = """
    @tool(writes=True, undo="disable", retry_safe=True)
    def enable(feature: str) -> None:
        pass

    @tool(writes=True, undo="enable", retry_safe=True)
    def disable(feature: str) -> None:
        pass

    @tool(writes=True, undo="enable", retry_safe=True)
    def toggle(feature: str) -> None:
        pass

    @tool(writes=True, undo="again", retry_safe=True)
    def again(feature: str) -> None:
        pass
    """
    assert lints(tools, one_agent("enable", "disable", "toggle", "again")) == [
        f"enable: compensation_cycle: {text('compensation_cycle', at='enable')}",
        f"disable: compensation_cycle: {text('compensation_cycle', at='disable')}",
        f"toggle: compensation_cycle: {text('compensation_cycle', at='enable')}",
        f"again: compensation_cycle: {text('compensation_cycle', at='again')}",
    ]
    assert "compensation_cycle" not in " ".join(lints(CLEAN, one_agent("write", "unwrite")))


def test_compensation_out_of_reach_and_the_agent_prefix(lints: Lints) -> None:
    yaml_text = """\
    agents:
      desk:
        tools: [look, write, unwrite]
      sales:
        tools: [look, write]
    tools:
      - python: TOOLS
    """
    assert lints(CLEAN, yaml_text) == [
        "sales/write: compensation_out_of_reach: "
        + text("compensation_out_of_reach", agent_name="sales", undo="unwrite")
    ]
    # A single agent that lacks the undo: the text names it, the prefix is left out.
    assert lints(CLEAN, one_agent("write")) == [
        "write: compensation_out_of_reach: agent 'desk' can call it but not 'unwrite', which "
        "undoes it, so a run of that agent cannot undo it"
    ]
