"""agent.yaml: defaults, relative paths, several agents, tool facts, and every error kind."""

from __future__ import annotations

import shutil
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from stalwart.config import (
    AgentConfig,
    ModelSelector,
    ProjectConfig,
    confirms,
    load_agent,
    load_project,
    unload_tool_modules,
)
from stalwart.errors import ConfigError
from stalwart.tools import UndoSpec, spec_of

pytestmark = pytest.mark.unit

SHOP = Path(__file__).resolve().parents[1] / "examples" / "shop"

DESK_TOOLS = '''
from stalwart import tool

@tool
def get_order(order: int) -> dict:
    """Look up an order."""
    return {"order": order}

@tool(writes=True, undo="refund_card")
def charge_card(order: int, amount: float) -> dict:
    """Charge a card."""
    return {"order": order, "amount": amount, "charge": "ch_1"}

@tool(writes=True, retry_safe=True)
def refund_card(order: int, amount: float) -> dict:
    """Refund a charge."""
    return {"refunded": amount}

@tool(writes=True)
def book_flight(flight: str) -> dict:
    """Book a seat."""
    return {"booking": "b-1"}

@tool(writes=True, retry_safe=True)
def cancel_flight(booking: str) -> dict:
    """Cancel a booking."""
    return {"cancelled": booking}

@tool(writes=True, irreversible=True)
def send_receipt(order: int) -> dict:
    """Send a receipt."""
    return {"sent": True}
'''

MakeProject = Callable[..., Path]


@pytest.fixture
def make_project(tmp_path: Path) -> Iterator[MakeProject]:
    """Write agent.yaml and a tool module with a name of its own into a folder.

    In the yaml, `TOOLS` stands for the module's name. Each module gets a fresh name so
    tests never share one; they are taken out of sys.modules afterwards.
    """
    modules: list[str] = []

    def make(
        yaml_text: str,
        tools: str = DESK_TOOLS,
        *,
        folder: Path | None = None,
        module: str | None = None,
        policy: str | None = None,
        name: str = "agent.yaml",
    ) -> Path:
        where = folder or tmp_path
        where.mkdir(parents=True, exist_ok=True)
        module = module or f"desk_tools_{uuid.uuid4().hex[:10]}"
        modules.append(module)
        (where / f"{module}.py").write_text(textwrap.dedent(tools))
        if policy is not None:
            (where / "policy.co").write_text(policy)
        path = where / name
        path.write_text(textwrap.dedent(yaml_text).replace("TOOLS", module))
        return path

    yield make
    for module in modules:
        sys.modules.pop(module, None)
    sys.path[:] = [p for p in sys.path if not p.startswith(str(tmp_path))]


DESK = """\
agents:
  desk:
    model: "anthropic:claude-sonnet-5-5"
    tools: [get_order, charge_card, refund_card]
tools:
  - python: TOOLS
"""


def config_error(path: Path, agent: str | None = None) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_agent(path, agent) if agent else load_project(path)
    assert caught.value.file in (str(path), str(path.with_name("policy.co")))
    return caught.value


# --- what loads -------------------------------------------------------------------------


def test_the_shop_example_loads_as_the_chapter_describes() -> None:
    desk = load_agent(SHOP / "agent.yaml")
    assert isinstance(desk, AgentConfig)
    assert desk.name == "desk"
    assert desk.model == ModelSelector(
        "anthropic", "claude-sonnet-5-5", "anthropic:claude-sonnet-5-5"
    )
    assert list(desk.tools) == [
        "get_order", "charge_card", "refund_card", "update_crm", "restore_crm",
        "provision_account", "send_receipt",
    ]  # fmt: skip
    assert desk.tools["charge_card"].undo == UndoSpec("refund_card")
    assert desk.tools["send_receipt"].irreversible
    assert desk.on_unread == "refuse"
    assert desk.runs == "atomic"
    assert desk.rulebook.source == SHOP / "policy.co"
    assert desk.rulebook.rules
    assert desk.record == str(SHOP / "agent.record.sqlite")
    assert desk.operator_token == SHOP / "agent.operator-token"
    assert desk.source == SHOP / "agent.yaml"
    assert desk.project.agents == {"desk": desk}
    assert desk.project.modules == ("shop.tools",)


def test_loading_the_same_file_twice_reuses_its_module() -> None:
    first = load_agent(SHOP / "agent.yaml")
    second = load_agent(SHOP / "agent.yaml")
    assert first.tools["charge_card"].func is second.tools["charge_card"].func
    from shop import tools as shop_tools  # the project's own code sees the same module

    assert shop_tools.charge_card is first.tools["charge_card"].func


def test_defaults(make_project: MakeProject) -> None:
    path = make_project(
        """\
        agents:
          desk: {tools: [get_order]}
        tools: [{python: TOOLS}]
        """,
        name="shop-desk.yaml",
    )
    desk = load_agent(path)
    assert desk.model is None
    assert desk.on_unread == "refuse"
    assert desk.runs == "atomic"
    assert desk.rulebook.rules == () and desk.rulebook.source is None
    assert desk.record == str(path.parent / "shop-desk.record.sqlite")
    assert desk.operator_token == path.parent / "shop-desk.operator-token"


def test_relative_paths_resolve_from_the_yaml_folder(
    make_project: MakeProject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "project"
    path = make_project(DESK + "rulebook: rules/desk.co\nrecord: data/desk.sqlite\n", folder=folder)
    (folder / "rules").mkdir()
    (folder / "rules" / "desk.co").write_text("cap charge_card.amount <= 5\n")
    monkeypatch.chdir(tmp_path)  # somewhere else
    desk = load_agent(Path("project") / "agent.yaml")
    assert desk.rulebook.source == folder / "rules" / "desk.co"
    assert desk.record == str(folder / "data" / "desk.sqlite")
    assert desk.source == path


@pytest.mark.parametrize(
    "record", [":memory:", "postgresql://stalwart@localhost:5432/desk", "postgres://h/db"]
)
def test_record_keeps_memory_and_postgres_urls(make_project: MakeProject, record: str) -> None:
    desk = load_agent(make_project(DESK + f"record: '{record}'\n"))
    assert desk.record == record


def test_operator_token_and_model_on_unread_are_kept(make_project: MakeProject) -> None:
    path = make_project(
        """\
        agents:
          desk:
            model: "openai:gpt-5"
            tools: [get_order]
            on_unread: model
        tools: [{python: TOOLS}]
        operator_token: keys/desk.verifier
        """
    )
    desk = load_agent(path)
    assert desk.model == ModelSelector("openai", "gpt-5", "openai:gpt-5")
    assert str(desk.model) == "openai:gpt-5"
    assert desk.on_unread == "model"
    assert desk.operator_token == path.parent / "keys" / "desk.verifier"


def test_several_agents_share_the_catalogue_and_are_chosen_by_name(
    make_project: MakeProject,
) -> None:
    path = make_project(
        """\
        agents:
          desk:
            tools: [get_order, charge_card, refund_card]
          travel:
            tools: [book_flight, cancel_flight]
            on_unread: model
        tools:
          - python: TOOLS
        """
    )
    project = load_project(path)
    assert isinstance(project, ProjectConfig)
    assert list(project.agents) == ["desk", "travel"]
    assert set(project.catalogue) == {
        "get_order", "charge_card", "refund_card", "book_flight", "cancel_flight", "send_receipt"
    }  # fmt: skip
    travel = load_agent(path, agent="travel")
    assert list(travel.tools) == ["book_flight", "cancel_flight"]
    assert travel.on_unread == "model"
    assert travel.project.agents["desk"].tools["charge_card"].writes

    with pytest.raises(ConfigError) as caught:
        load_agent(path)
    assert caught.value.key_path == "agents"
    assert "several agents (desk, travel)" in caught.value.expected
    with pytest.raises(ConfigError) as caught:
        load_agent(path, agent="billing")
    assert caught.value.expected == "no agent named 'billing'; the file has: desk, travel"


# --- facts said in agent.yaml -----------------------------------------------------------


def test_yaml_facts_under_a_tools_name_override_the_decorator(make_project: MakeProject) -> None:
    path = make_project(
        """\
        agents:
          desk: {tools: [charge_card, refund_card, book_flight, cancel_flight, send_receipt]}
        tools:
          - python: TOOLS
          - charge_card:
              irreversible: true        # drops the decorator's undo
              retry_safe: true
          - book_flight:
              undo: cancel_flight
          - refund_card: {retry_safe: false}
          - send_receipt:
              undo: {tool: cancel_flight, args: {booking: $args.order}}   # drops irreversible
              confirm: never
        """
    )
    tools = load_agent(path).tools
    assert tools["charge_card"].irreversible and tools["charge_card"].undo is None
    assert tools["charge_card"].retry_safe
    assert tools["book_flight"].undo == UndoSpec("cancel_flight")
    assert not tools["refund_card"].retry_safe
    receipt = tools["send_receipt"]
    assert receipt.undo == UndoSpec("cancel_flight", {"booking": "$args.order"})
    assert not receipt.irreversible
    assert not confirms(receipt)
    assert confirms(tools["book_flight"])
    # The decorator's own spec is untouched: facts are laid over a copy.
    from importlib import import_module

    module = import_module(load_project(path).modules[0])
    decorated = spec_of(module.charge_card)
    assert decorated is not None and decorated.undo == UndoSpec("refund_card")


def test_an_explicit_undo_binding_is_kept(make_project: MakeProject) -> None:
    path = make_project(
        """\
        agents:
          travel: {tools: [book_flight, cancel_flight]}
        tools:
          - python: TOOLS
          - book_flight:
              undo: {tool: cancel_flight, args: {booking: $result.booking}}
        """
    )
    undo = load_agent(path).tools["book_flight"].undo
    assert undo == UndoSpec("cancel_flight", {"booking": "$result.booking"})


def test_an_undo_binding_in_the_decorator_is_checked_too(make_project: MakeProject) -> None:
    tools = DESK_TOOLS.replace(
        "@tool(writes=True)\ndef book_flight",
        '@tool(writes=True, undo={"tool": "cancel_flight", "args": {"seat": "$args.flight"}})\n'
        "def book_flight",
    )
    path = make_project(DESK, tools)
    error = config_error(path)
    assert error.key_path == "tools[0].python"
    assert error.expected == (
        "book_flight's undo binds 'seat', which cancel_flight does not take (it takes booking)"
    )


# --- every error kind -------------------------------------------------------------------


def test_yaml_syntax_error_names_its_line(make_project: MakeProject) -> None:
    path = make_project("agents:\n  desk:\n    tools: [get_order\n  other: 1\n")
    error = config_error(path)
    # A file that does not parse has no key path yet: the error names the file, line, column.
    assert (error.file, error.key_path, error.line, error.column) == (str(path), "", 4, 8)
    assert error.expected == "invalid YAML: expected ',' or ']', but got ':'"
    assert str(error) == f"{path}:4:8: {error.expected}"


@pytest.mark.parametrize(
    ("yaml_text", "key_path", "expected", "line"),
    [
        (
            DESK + "rulebok: ./policy.co\n",
            "rulebok",
            "unknown key 'rulebok'; expected one of: agents, tools, rulebook, runs, record, "
            "operator_token, prices, serve",
            7,
        ),
        (
            DESK.replace("tools: [get_order", "on_unread: ask\n    tools: [get_order"),
            "agents.desk.on_unread",
            "expected 'refuse' or 'model', got 'ask'",
            4,
        ),
        (
            DESK.replace("model:", "modle:"),
            "agents.desk.modle",
            "unknown key 'modle'; expected one of: model, tools, on_unread, instructions, "
            "max_tokens, temperature, thinking, timeout, stream, languages",
            3,
        ),
        (DESK + "runs: eventually\n", "runs", "expected 'atomic', got 'eventually'", 7),
        (
            DESK.replace("tools: [get_order, charge_card, refund_card]", "tools: get_order"),
            "agents.desk.tools",
            "expected a list, got 'get_order'",
            4,
        ),
        ("tools: []\n", "agents", "a required key is missing", 1),
        ("agents: {}\n", "agents", "expected at least one agent", 1),
        (
            DESK.replace('"anthropic:claude-sonnet-5-5"', "claude"),
            "agents.desk.model",
            "expected '<provider>:<model>', such as 'anthropic:claude-sonnet-5-5', got 'claude'",
            3,
        ),
        (
            DESK + "record: 'mysql://x/y'\n",
            "record",
            "expected a SQLite path, ':memory:' or a postgresql:// URL, got 'mysql://x/y'",
            7,
        ),  # fmt: skip
        (
            DESK + "operator_token_env: OPS_TOKEN\n",
            "operator_token_env",
            "operator_token_env is no longer read: an operator token is checked against its "
            "verifier (operator_token: names the file; run stalwart operator-token set)",
            7,
        ),
        (
            DESK + "  - charge_card: {retry_safe: 'yes'}\n",
            "tools[1].charge_card.retry_safe",
            "expected true or false, got 'yes'",
            7,
        ),
        (
            DESK + "  - charge_card: {undo: 3}\n",
            "tools[1].charge_card.undo",
            "expected a tool name or {tool: <name>, args: {...}}, got 3",
            7,
        ),
        (
            DESK + "  - charge_card: {undo: {tool: refund_card, args: {amount: $amount}}}\n",
            "tools[1].charge_card.undo",
            "undo 'refund_card': argument 'amount' is bound to '$amount'; "
            "expected '$args.<name>' or '$result.<field>'",
            7,
        ),
        (
            DESK + "  - charge_card: {undo: refund_card, irreversible: true}\n",
            "tools[1].charge_card",
            "a write cannot both name an undo and be irreversible",
            7,
        ),
        (
            DESK + "  - get_order: {confirm: never}\n",
            "tools[1].get_order.confirm",
            "only a write is confirmed; a read never asks",
            7,
        ),
        (
            DESK + "  - get_order: {undo: refund_card}\n",
            "tools[1].get_order",
            "tool 'get_order': only a write (writes=True) can have an undo or be irreversible",
            7,
        ),
        (
            DESK + "  - python: TOOLS\n    charge_card: {}\n",
            "tools[1]",
            "expected one key: 'python: <module>', or a tool's name with its facts",
            7,
        ),
        (DESK + "  - shop.tools\n", "tools[1]", "expected a mapping, got 'shop.tools'", 7),
        (
            DESK.replace("desk:", "desk/ops:"),
            "agents.desk/ops",
            "expected an agent name of letters, digits, '_' and '-'",
            2,
        ),
        (
            DESK.replace("[get_order,", "[get_order, get_order,"),
            "agents.desk.tools[1]",
            "'get_order' is listed twice",
            4,
        ),
        (DESK + "agents: {}\n", "agents", "this key appears twice", 7),
        (
            DESK + "  - charge_card: {retry_safe: true}\n  - charge_card: {writes: true}\n",
            "tools[2].charge_card",
            "facts about this tool are already said above",
            8,
        ),
    ],
)
def test_bad_input_names_file_key_path_expectation_and_line(
    make_project: MakeProject, yaml_text: str, key_path: str, expected: str, line: int
) -> None:
    path = make_project(yaml_text)
    error = config_error(path)
    assert (error.key_path, error.expected, error.line) == (key_path, expected, line)
    assert str(error) == f"{path}:{line}:{error.column}: {key_path}: {expected}"


def test_a_tool_no_source_provides(make_project: MakeProject) -> None:
    path = make_project(DESK.replace("refund_card]", "refund_card, send_reciept]"))
    error = config_error(path)
    assert error.key_path == "agents.desk.tools[3]"
    assert error.expected == "no tool source provides 'send_reciept'"
    assert (error.line, error.column) == (4, 50)


def test_facts_for_a_tool_no_source_provides(make_project: MakeProject) -> None:
    path = make_project(DESK + "  - charge_crad: {retry_safe: true}\n")
    error = config_error(path)
    assert (error.key_path, error.line, error.column) == ("tools[1].charge_crad", 7, 5)
    assert error.expected == "no tool source provides 'charge_crad'"


def test_a_module_that_fails_to_import_names_the_module_and_its_error(
    make_project: MakeProject,
) -> None:
    path = make_project(DESK, "from stalwart import tool\nraise RuntimeError('no database')\n")
    error = config_error(path)
    assert error.key_path == "tools[0].python"
    assert error.expected.endswith("failed to import: RuntimeError: no database")
    assert error.line == 6

    missing = make_project(DESK.replace("TOOLS", "desk_tools_that_do_not_exist"), name="b.yaml")
    error = config_error(missing)
    assert error.expected == (
        "module 'desk_tools_that_do_not_exist' failed to import: ModuleNotFoundError: "
        "No module named 'desk_tools_that_do_not_exist'"
    )


def test_a_module_with_a_badly_declared_tool_fails_to_import(make_project: MakeProject) -> None:
    broken = "from stalwart import tool\n@tool\ndef spread(*items: int) -> None:\n    pass\n"
    error = config_error(make_project(DESK, broken))
    assert "failed to import: ToolDefinitionError: tool 'spread': *args" in error.expected


def test_a_module_with_no_tools_is_refused(make_project: MakeProject) -> None:
    error = config_error(make_project(DESK, "VALUE = 1\n"))
    assert error.key_path == "tools[0].python"
    assert error.expected.endswith("defines no @tool functions")


def test_two_sources_providing_one_tool_name_are_refused(
    make_project: MakeProject, tmp_path: Path
) -> None:
    (tmp_path / "other_desk_tools.py").write_text(DESK_TOOLS)
    path = make_project(DESK + "  - python: other_desk_tools\n")
    try:
        error = config_error(path)
    finally:
        sys.modules.pop("other_desk_tools", None)
    assert error.key_path == "tools[1].python"
    assert "is provided by both" in error.expected


def test_a_rulebook_that_does_not_parse_names_its_line_and_column(
    make_project: MakeProject,
) -> None:
    path = make_project(
        DESK + "rulebook: policy.co\n", policy="# desk\ncap charge_card.amount <== 5\n"
    )
    error = config_error(path)
    assert (error.file, error.key_path) == (str(path.parent / "policy.co"), "")
    assert (error.line, error.column) == (2, 26)
    assert error.expected == "unexpected character '='"
    assert str(error) == f"{path.parent / 'policy.co'}:2:26: unexpected character '='"


@pytest.mark.parametrize(
    ("policy", "column", "expected"),
    [
        ("refund_card only after charge_crad\n", 24, "no tool source provides 'charge_crad'"),
        ("cap charge_card.amonut <= 5\n", 17, "charge_card takes no argument 'amonut'"),
        ("refund_card only after get_order with same amount\n", 44,
         "get_order takes no argument 'amount'"),
        ("require charge_card.amuont from turn\n", 21, "charge_card takes no argument 'amuont'"),
    ],
)  # fmt: skip
def test_a_rulebook_naming_unknown_tools_or_arguments_is_refused(
    make_project: MakeProject, policy: str, column: int, expected: str
) -> None:
    path = make_project(DESK + "rulebook: ./policy.co\n", policy=policy)
    error = config_error(path)
    assert (error.file, error.line, error.column) == (str(path.parent / "policy.co"), 1, column)
    assert error.expected == expected


def test_a_missing_rulebook_file(make_project: MakeProject) -> None:
    error = config_error(make_project(DESK + "rulebook: ./nowhere.co\n"))
    assert error.key_path == "rulebook"
    assert error.expected.startswith("expected a rulebook file, found none at ")
    assert error.line == 7


def test_a_missing_yaml_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the file"):
        load_project(tmp_path / "agent.yaml")


@pytest.mark.parametrize("text", ["", "- a list\n", "just text\n"])
def test_a_file_that_is_not_a_mapping(make_project: MakeProject, text: str) -> None:
    error = config_error(make_project(text))
    assert error.expected == "expected a mapping with an 'agents' key at the top"


def test_two_folders_whose_modules_share_a_name_do_not_collide_silently(
    make_project: MakeProject, tmp_path: Path
) -> None:
    module = f"same_name_{uuid.uuid4().hex[:8]}"
    first = make_project(DESK, folder=tmp_path / "one", module=module)
    second = make_project(DESK, folder=tmp_path / "two", module=module)
    load_project(first)
    load_project(first)  # the same file again is fine
    error = config_error(second)
    assert error.key_path == "tools[0].python"
    assert f"module {module!r} is already imported from {tmp_path / 'one' / module}.py" in (
        error.expected
    )
    assert "cannot be loaded in one process" in error.expected


def test_a_copy_of_the_shop_loads_once_the_first_is_unloaded(tmp_path: Path) -> None:
    original = load_project(SHOP / "agent.yaml")
    copy = tmp_path / "shop"
    shutil.copytree(SHOP, copy, ignore=shutil.ignore_patterns("*.sqlite*", "__pycache__"))
    with pytest.raises(ConfigError, match="already imported from"):
        load_project(copy / "agent.yaml")
    # Other tests hold the original modules: they are put back as they were.
    saved_modules = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "shop"}
    saved_path = list(sys.path)
    unload_tool_modules(original)
    try:
        assert "shop.tools" not in sys.modules and str(SHOP) not in sys.path
        copied = load_project(copy / "agent.yaml")
        assert sys.modules["shop.tools"].__file__ == str(copy / "shop" / "tools.py")
        assert copied.catalogue["charge_card"].func is not original.catalogue["charge_card"].func
        assert original.catalogue["charge_card"].func.__module__ == "shop.tools"  # still works
        unload_tool_modules(copied)
        assert "shop" not in sys.modules
    finally:
        sys.modules.update(saved_modules)
        sys.path[:] = saved_path
    assert load_project(SHOP / "agent.yaml").catalogue["charge_card"].func is (
        original.catalogue["charge_card"].func
    )


def test_prices_are_kept_per_model_and_a_bad_one_is_named(make_project: MakeProject) -> None:
    path = make_project(
        DESK
        + 'prices:\n  "anthropic:claude-sonnet-5-5": {input_per_mtok: 3, output_per_mtok: "15.5"}\n'
    )
    desk = load_agent(path)
    price = desk.prices["anthropic:claude-sonnet-5-5"]
    assert (price.input_per_mtok, price.output_per_mtok) == (Decimal(3), Decimal("15.5"))

    bad = make_project(DESK + 'prices:\n  "anthropic:x": {input_per_mtok: 3}\n', name="bad.yaml")
    error = config_error(bad)
    assert (error.key_path, error.line) == ("prices.anthropic:x", 8)
    assert "expected input_per_mtok and output_per_mtok" in error.expected
    unnamed = make_project(DESK + "prices:\n  sonnet: {input_per_mtok: 3, output_per_mtok: 15}\n",
                           name="unnamed.yaml")  # fmt: skip
    assert config_error(unnamed).expected == "expected a 'provider:model' selector, got 'sonnet'"
