"""`stalwart verify`: routes, each code failing and passing, the shop, and the command."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from stalwart.cli import main
from stalwart.config import load_agent, load_project
from stalwart.texts import IRREVERSIBLE_IN_ATOMIC_RUN
from stalwart.verify import (
    Code,
    Finding,
    Report,
    check_turns,
    routes,
    verify_agent,
    verify_project,
)

REPO = Path(__file__).resolve().parents[2]
SHOP = REPO / "stalwart" / "examples" / "shop"

Verify = Callable[..., Report]
Write = Callable[..., Path]


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Write]:
    """Write a tool module, agent.yaml and a rulebook; give the yaml's path.

    `tools` is the module's body (after `from stalwart import tool`); `yaml_text` may use
    TOOLS for the module's name.
    """
    modules: list[str] = []

    def write(tools: str, yaml_text: str, policy: str | None = None) -> Path:
        module = f"verify_tools_{uuid.uuid4().hex[:10]}"
        modules.append(module)
        folder = tmp_path / module
        folder.mkdir()
        header = "from __future__ import annotations\nfrom typing import TypedDict\n"
        header += "from stalwart import tool\n"
        (folder / f"{module}.py").write_text(header + textwrap.dedent(tools))
        text = textwrap.dedent(yaml_text).replace("TOOLS", module)
        if policy is not None:
            (folder / "policy.co").write_text(textwrap.dedent(policy))
            text += "rulebook: ./policy.co\n"
        path = folder / "agent.yaml"
        path.write_text(text)
        return path

    yield write
    for module in modules:
        sys.modules.pop(module, None)
    sys.path[:] = [p for p in sys.path if not p.startswith(str(tmp_path))]


@pytest.fixture
def verify(project: Write) -> Verify:
    def run(tools: str, yaml_text: str, policy: str | None = None) -> Report:
        return verify_project(load_project(project(tools, yaml_text, policy)))

    return run


def desk(*tools: str, facts: str = "") -> str:
    return f"agents:\n  desk:\n    tools: [{', '.join(tools)}]\ntools:\n  - python: TOOLS\n{facts}"


def codes(report: Report) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(f.code.value, f.tool, f.route) for f in report.findings]


TOOLS = """
@tool
def look(order: int) -> dict:
    \"\"\"Look up an order.\"\"\"
    return {"order": order}

@tool(writes=True, undo="refund")
def charge(order: int, amount: float) -> dict:
    \"\"\"Charge an order.\"\"\"
    return {"order": order, "charge": "ch"}

@tool(writes=True, retry_safe=True)
def refund(order: int, amount: float) -> dict:
    \"\"\"Refund a charge.\"\"\"
    return {"order": order}

@tool(writes=True)
def notify(order: int) -> dict:
    \"\"\"Tell the customer.\"\"\"
    return {"order": order}

@tool(writes=True, irreversible=True)
def mail(order: int) -> dict:
    \"\"\"Mail a receipt.\"\"\"
    return {"order": order}
"""


# --- routes -------------------------------------------------------------------------------


def test_routes_are_every_order_the_rules_allow_shortest_first(project: Write) -> None:
    path = project(TOOLS, desk("charge", "refund", "mail"), "refund only after charge\n")
    agent = load_agent(path)
    found = list(routes(agent, 2))
    assert found == [
        ("charge",),
        ("mail",),
        ("charge", "charge"),
        ("charge", "refund"),
        ("charge", "mail"),
        ("mail", "charge"),
        ("mail", "mail"),
    ]


def test_a_count_cap_limits_how_often_a_tool_is_on_a_route(project: Write) -> None:
    path = project(TOOLS, desk("charge"), "cap charge calls <= 2 per session\n")
    assert list(routes(load_agent(path), 3)) == [("charge",), ("charge", "charge")]


def test_a_tool_no_route_reaches_is_listed_unreached(verify: Verify) -> None:
    report = verify(
        TOOLS, desk("look", "charge", "refund"), "refund only after look\nlook only after refund\n"
    )
    assert report.unreached == (("desk", "look"), ("desk", "refund"))


# --- the shop ----------------------------------------------------------------------------


def test_the_shop_as_shipped_passes() -> None:
    report = verify_project(load_project(SHOP / "agent.yaml"))
    assert report.passed, [str(f) for f in report.findings]
    assert report.unreached == ()


def test_the_shop_with_send_receipt_a_plain_write_is_qg105_with_its_route(tmp_path: Path) -> None:
    # The same module (a link to the shop's package), with send_receipt's facts laid over.
    (tmp_path / "shop").symlink_to(SHOP / "shop", target_is_directory=True)
    (tmp_path / "policy.co").write_text((SHOP / "policy.co").read_text())
    yaml_text = (
        (SHOP / "agent.yaml")
        .read_text()
        .replace(
            "  - python: shop.tools\n",
            "  - python: shop.tools\n  - send_receipt: {irreversible: false}\n",
        )
    )
    (tmp_path / "agent.yaml").write_text(yaml_text)
    report = verify_project(load_project(tmp_path / "agent.yaml"))
    assert codes(report) == [("QG105", "send_receipt", ("send_receipt", "charge_card"))]
    assert str(report.findings[0]) == (
        "QG105 desk [send_receipt -> charge_card]: send_receipt is a write with neither an "
        "undo nor irreversible; if charge_card fails after it, the run cannot undo "
        "send_receipt, and nothing says so. Fix: name the tool that undoes send_receipt "
        "(undo: <tool>), or mark it irreversible: true so its confirmation warns."
    )


# --- each code, failing and passing -------------------------------------------------------


def test_qg105_a_plain_write_before_another_write(verify: Verify) -> None:
    failing = verify(TOOLS, desk("look", "charge", "refund", "notify"))
    assert codes(failing) == [("QG105", "notify", ("notify", "charge"))]
    # An undo tool is judged as an undo; a plain write alone on every route is no finding.
    assert verify(TOOLS, desk("look", "notify")).passed
    marked = desk("charge", "refund", "notify", facts="  - notify: {irreversible: true}\n")
    assert verify(TOOLS, marked).passed


def test_qg013_an_irreversible_step_unconfirmed_before_a_write_that_is_undone(
    verify: Verify,
) -> None:
    facts = "  - mail: {confirm: never}\n"
    failing = verify(TOOLS, desk("charge", "refund", "mail", facts=facts))
    assert ("QG013", "mail", ("mail", "charge")) in codes(failing)
    finding = next(f for f in failing.findings if f.code is Code.IRREVERSIBLE_UNWARNED)
    assert finding.text == (
        "mail is irreversible and can come before charge, which a failed run would undo, "
        "but it asks for no confirmation (confirm: never)"
    )
    assert IRREVERSIBLE_IN_ATOMIC_RUN in finding.fix
    assert verify(TOOLS, desk("charge", "refund", "mail")).passed
    # Not before a write that is undone: nothing for QG013 (QG014 still says confirm: never).
    alone = verify(TOOLS, desk("look", "mail", facts=facts))
    assert [c for c, _, _ in codes(alone)] == ["QG014"]


def test_qg013_asks_the_runtime_whether_the_confirmation_carries_the_sentence(
    verify: Verify, monkeypatch: pytest.MonkeyPatch
) -> None:
    import stalwart.verify.checks as verify_module

    # A runtime that forgot the sentence: verify finds it, since it asks the same function.
    monkeypatch.setattr(verify_module, "others_would_be_undone", lambda *a, **k: False)
    report = verify(TOOLS, desk("charge", "refund", "mail"))
    assert codes(report) == [("QG013", "mail", ("mail", "charge"))]
    assert report.findings[0].text.endswith(
        f"but its confirmation does not say: {IRREVERSIBLE_IN_ATOMIC_RUN}"
    )


def test_qg014_a_write_nobody_confirms(verify: Verify) -> None:
    failing = verify(TOOLS, desk("charge", "refund", facts="  - charge: {confirm: never}\n"))
    assert codes(failing) == [("QG014", "charge", ("charge",))]
    assert failing.findings[0].fix == "drop confirm: never from charge in agent.yaml"
    assert verify(TOOLS, desk("charge", "refund")).passed


def test_qg106_an_undo_the_rulebook_refuses_where_it_is_needed(verify: Verify) -> None:
    failing = verify(TOOLS, desk("look", "charge", "refund"), "refund only after look\n")
    assert codes(failing) == [("QG106", "charge", ("charge", "look"))]
    assert failing.findings[0].text == (
        "if look fails after charge, the rollback's refund is refused (the check refused "
        "refund, because line 1 of policy.co allows it only after look, and this session "
        "has no look that ran and was not undone), and charge stays done"
    )
    # `require ... from turn`: an undo's arguments come from the step it undoes.
    sourced = verify(TOOLS, desk("charge", "refund"), "require refund.amount from turn\n")
    assert codes(sourced) == [("QG106", "charge", ("charge", "charge"))]
    passing = "refund only after charge with same order, amount\n"
    assert verify(TOOLS, desk("charge", "refund"), passing).passed


def test_qg106_a_count_cap_refuses_the_second_refund(verify: Verify) -> None:
    # Two charges, then a step that fails: the rollback needs two refunds.
    report = verify(TOOLS, desk("charge", "refund"), "cap refund calls <= 1 per session\n")
    assert codes(report) == [("QG106", "charge", ("charge", "charge", "charge"))]
    assert "this would be its call 2 in this session" in report.findings[0].text
    both = "cap charge calls <= 2 per session\ncap refund calls <= 4 per session\n"
    assert verify(TOOLS, desk("charge", "refund"), both).passed


TYPED = """
class Booking(TypedDict):
    booking: str

@tool(writes=True, undo={"tool": "cancel", "args": {"booking": "$result.reference"}})
def book(flight: str) -> Booking:
    \"\"\"Book a flight.\"\"\"
    return {"booking": "B1"}

@tool(writes=True, retry_safe=True)
def cancel(booking: str) -> dict:
    \"\"\"Cancel a booking.\"\"\"
    return {}
"""


def test_qg107_an_undo_bound_to_a_field_the_declared_return_type_lacks(verify: Verify) -> None:
    failing = verify(TYPED, desk("book", "cancel"))
    assert codes(failing) == [("QG107", "book", ("book", "book"))]
    assert failing.findings[0].text == (
        "cancel, which undoes book, cannot be bound (cancel: nothing of the step binds "
        "booking), and book stays done"
    )
    passing = TYPED.replace("$result.reference", "$result.booking")
    assert verify(passing, desk("book", "cancel")).passed
    # Bound by name, with no explicit binding: the declared type has the field.
    by_name = TYPED.replace(
        'undo={"tool": "cancel", "args": {"booking": "$result.reference"}}', 'undo="cancel"'
    )
    assert verify(by_name, desk("book", "cancel")).passed


def test_qg108_a_write_whose_undo_the_agent_cannot_call(verify: Verify) -> None:
    yaml_text = (
        "agents:\n  desk:\n    tools: [look, charge]\n  back:\n    tools: [refund]\n"
        "tools:\n  - python: TOOLS\n"
    )
    failing = verify(TOOLS, yaml_text)
    assert codes(failing) == [("QG108", "charge", ("charge", "look"))]
    assert str(failing.findings[0]) == (
        "QG108 desk [charge -> look]: charge can run, but refund, which undoes it, is not "
        "one of its tools, so a failed run of agent 'desk' cannot undo it. "
        "Fix: add refund to agent 'desk''s tools."
    )
    assert verify(TOOLS, desk("look", "charge", "refund")).passed


def test_qg108_a_misspelt_undo_is_said_to_name_no_tool_and_the_closest_is_named(
    verify: Verify,
) -> None:
    """Issue 28: the fix said "add refnd to agent 'desk''s tools", for a tool nobody has."""
    misspelt = "  - charge:\n      undo: refnd\n"
    failing = verify(TOOLS, desk("look", "charge", "refund", facts=misspelt))
    [finding] = [f for f in failing.findings if f.code == Code.UNDO_OUT_OF_REACH]
    assert str(finding) == (
        "QG108 desk [charge -> look]: charge can run, but refnd, which undoes it, is not in "
        "the catalogue, so a failed run of agent 'desk' cannot undo it. "
        "Fix: no tool named 'refnd' (did you mean 'refund'?): correct charge's undo."
    )
    # The closest tool is in the catalogue but not among the agent's tools: add it too.
    [finding] = verify(TOOLS, desk("look", "charge", facts=misspelt)).findings
    assert finding.fix == (
        "no tool named 'refnd' (did you mean 'refund'?): correct charge's undo, "
        "and add refund to agent 'desk''s tools"
    )
    # No tool's name is close: nothing is guessed.
    [finding] = verify(
        TOOLS, desk("look", "charge", facts="  - charge:\n      undo: zap\n")
    ).findings
    assert finding.fix == (
        "no tool named 'zap': name a tool of the catalogue as charge's undo, "
        "or add a tool named 'zap' to the catalogue"
    )


def test_a_finding_as_data() -> None:
    finding = Finding(Code.WRITE_NOT_UNDOABLE, "desk", "notify", ("notify", "charge"), "t", "f")
    assert finding.to_json() == {
        "code": "QG105",
        "agent": "desk",
        "tool": "notify",
        "route": ["notify", "charge"],
        "text": "t",
        "fix": "f",
    }


def test_max_steps_must_leave_room_for_a_route(project: Write) -> None:
    agent = load_agent(project(TOOLS, desk("look")))
    with pytest.raises(ValueError, match="max_steps"):
        verify_agent(agent, max_steps=1)


# --- the command ---------------------------------------------------------------------------


def test_verify_passes_the_shop_and_exits_0() -> None:
    result = CliRunner().invoke(main, ["verify", str(SHOP / "agent.yaml")])
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == ("verified 1 agent(s) on every route of up to 4 steps: no findings\n")


def test_verify_prints_one_finding_per_line_and_exits_1(project: Write) -> None:
    path = project(
        TOOLS, desk("look", "charge", "refund", "notify", facts="  - charge: {confirm: never}\n")
    )
    result = CliRunner().invoke(main, ["verify", str(path)])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert [line.split(" ", 2)[:2] for line in lines] == [["QG014", "desk"], ["QG105", "desk"]]
    assert lines[1].startswith("QG105 desk [notify -> charge]: notify is a write")
    as_json = CliRunner().invoke(main, ["verify", "--json", str(path)])
    assert as_json.exit_code == 1
    data = json.loads(as_json.stdout)
    assert data["passed"] is False and data["max_steps"] == 4
    assert [(f["code"], f["route"]) for f in data["findings"]] == [
        ("QG014", ["charge"]),
        ("QG105", ["notify", "charge"]),
    ]


def test_verify_of_a_bad_file_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text("agents:\n  desk:\n    on_unread: ask\n")
    result = CliRunner().invoke(main, ["verify", str(path)])
    assert result.exit_code == 2 and result.stdout == ""
    assert "on_unread" in result.stderr


def test_the_installed_command_verifies_the_shop() -> None:
    command = Path(sys.executable).parent / "stalwart"
    done = subprocess.run(
        [str(command), "verify", "--json", "stalwart/examples/shop/agent.yaml"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["passed"] is True


# --- sample turns ----------------------------------------------------------------------------

SHOP_TURNS = """\
turns:
  - turn: "charge order 4411 40.00, then update the crm for order 4411"
    steps:
      - {tool: charge_card, args: {order: 4411, amount: 40.00}}
      - {tool: update_crm, args: {order: 4411}}
  - turn: "cobrar o pedido 4411"
    unread: "the turn is not English; it reads as Portuguese, which is not read yet"
"""


def test_the_shops_sample_turns_read_as_the_file_says(tmp_path: Path) -> None:
    turns = tmp_path / "turns.yaml"
    turns.write_text(SHOP_TURNS)
    findings, count = check_turns(load_project(SHOP / "agent.yaml"), turns)
    assert (findings, count) == ([], 2)
    result = CliRunner().invoke(main, ["verify", str(SHOP / "agent.yaml"), "--turns", str(turns)])
    assert result.exit_code == 0, result.output
    as_json = CliRunner().invoke(
        main, ["verify", "--json", str(SHOP / "agent.yaml"), "--turns", str(turns)]
    )
    assert json.loads(as_json.stdout)["turns"] == 2


LOOK = """
@tool
def look(order: int) -> dict:
    \"\"\"Look up an order.\"\"\"
    return {"order": order}
"""

LOOK_TURNS = """\
turns:
  - turn: "look up order 4411"
    steps: [{tool: look, args: {order: 4411}}]
  - turn: "cobrar o pedido 4411"
    unread: "no tool matches"
"""


def test_a_turn_that_changed_reading_is_qg201(project: Write, tmp_path: Path) -> None:
    before = project(LOOK, desk("look"))
    turns = tmp_path / "turns.yaml"
    turns.write_text(LOOK_TURNS)
    findings, _ = check_turns(load_project(before), turns)
    # The second turn's expected reason is wrong: it is not read for another reason.
    assert [(f.code.value, f.tool) for f in findings] == [("QG201", "turns[1]")]
    assert findings[0].text == (
        "the turn 'cobrar o pedido 4411' now reads as unread (the turn is not English; it "
        "reads as Portuguese, which is not read yet), not as unread (no tool matches)"
    )
    # A tool added with the same words: the first turn now reads differently.
    grown = (
        LOOK
        + '''
@tool
def look_up_order(order: int) -> dict:
    """Look up an order in the archive."""
    return {"order": order}
'''
    )
    after = project(grown, desk("look", "look_up_order"))
    turns.write_text(LOOK_TURNS.split('  - turn: "cobrar')[0])
    changed, count = check_turns(load_project(after), turns)
    assert count == 1
    assert [(f.code.value, f.tool, f.route) for f in changed] == [("QG201", "turns[0]", ())]
    assert changed[0].text == (
        "the turn 'look up order 4411' now reads as unread (two tools match equally: look, "
        "look_up_order), not as look(order=4411)"
    )
    result = CliRunner().invoke(main, ["verify", str(after), "--turns", str(turns)])
    assert result.exit_code == 1
    assert result.stdout.startswith("QG201 desk [(no route)]: the turn 'look up order 4411'")


def test_a_bad_turns_file_is_a_config_error(project: Write, tmp_path: Path) -> None:
    path = project(LOOK, desk("look"))
    turns = tmp_path / "turns.yaml"
    turns.write_text("turns:\n  - turn: hello\n")
    result = CliRunner().invoke(main, ["verify", str(path), "--turns", str(turns)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"{turns}: turns[0]: expected either steps: [...] or unread: <reason>, "
        "not both or neither\n"
    )
    turns.write_text("agent: back\nturns: []\n")
    result = CliRunner().invoke(main, ["verify", str(path), "--turns", str(turns)])
    assert result.stderr == f"{turns}: agent: no agent named 'back'; the agent.yaml has: desk\n"
