"""`radian arc status` starts with only what it needs (issue 33: under 0.3 s at 10,000 tasks):
the command line imports a command's modules when it runs, and status reads the files store
plainly (radian.arc.store_plain) without the typed records (pydantic), the same answer as
through the store. Counted in modules, not timed."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import run_env
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from test_status import fleet

from radian.arc import commands, status
from radian.arc.clock import FakeClock, format_utc
from radian.arc.errors import DamagedFile, NotFoundError
from radian.arc.record_format import PLAN_FIELDS, REQUIRED, PlainPlan, plain_plan
from radian.arc.records import Plan
from radian.arc.store import ArcStore
from radian.arc.store_open import open_reader
from radian.arc.store_plain import PlainFiles, read_plain
from radian.cli import main

# What `radian arc status` over the files store never needs: the typed records and config
# (pydantic), the store's writer and its locks, and every other command's modules.
NOT_FOR_STATUS = (
    "pydantic",
    "pydantic_core",
    "filelock",
    "rich",
    "asyncio",
    "radian.arc.records",
    "radian.arc.config",
    "radian.arc.attempt_result",
    "radian.arc.store",
    "radian.arc.store_protocol",
    "radian.arc.commands",
    "radian.arc.show",
    "radian.arc.listing",
    "radian.arc.loop",
    "radian.arc.claims",
    "radian.arc.gate",
    "radian.arc.hooks",
    "radian.arc.report",
    "radian.arc.doctor",
    "radian.arc.progress",
    "radian.arc.serve",
    "radian.worker.main",
)
ARC_COMMANDS = ["cancel", "confirm", "doctor", "gc", "init", "plan", "report", "reset-budget",
                "reverify", "rework", "run", "serve", "show", "start", "status", "stop", "store",
                "task"]  # fmt: skip
GROUPS = {"plan": ["add", "auto", "load"], "store": ["migrate"], "task": ["add"]}


PROBE = """\
import json, os, sys
from radian.cli import main
sys.argv[0] = "radian"
try:
    main()
finally:
    with open(os.environ["MODULES_OUT"], "w") as out:
        json.dump(sorted(sys.modules), out)
"""


def radian_imports(
    *args: str, env: dict[str, str]
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """`radian <args>` run as the console script runs it, and every module it had imported
    when it ended (sys.modules)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "modules.json"
        env = {**env, "MODULES_OUT": str(out)}
        ran = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True,
                             text=True, env=env, timeout=60)  # fmt: skip
        return ran, set(json.loads(out.read_text()))


def loaded(imported: set[str], wanted: tuple[str, ...]) -> list[str]:
    """Those of `wanted` imported, themselves or any of their submodules."""
    return [
        name
        for name in wanted
        if any(module == name or module.startswith(name + ".") for module in imported)
    ]


@pytest.mark.acceptance
def test_status_imports_no_typed_record_nor_any_other_commands_module(
    tmp_path: Path, clock: FakeClock
) -> None:
    store = fleet(tmp_path, clock)  # a loaded plan and a plan added task by task
    env = {**run_env(), "RADIAN_ARC_FAKE_NOW": format_utc(clock.now())}
    cases: list[tuple[list[str], str | None, str | None]] = [
        ([], None, None), (["--json"], None, None),
        (["--plan", "web", "--state", "review.rework_pending"], "web", "review.rework_pending"),
    ]  # fmt: skip
    for args, plan, state in cases:
        ran, imported = radian_imports("arc", "--repo", str(tmp_path), "status", *args, env=env)
        assert ran.returncode == 0, ran.stderr[-2000:]
        assert {"radian.arc.status", "radian.arc.store_plain"} <= imported  # the probe saw it
        assert loaded(imported, NOT_FOR_STATUS) == []
        # the same answer as the store's own read (which loads the typed records)
        found = status.fleet_status(ArcStore(store.repo_root), clock, plan=plan, state=state)
        if "--json" in args:
            assert json.loads(ran.stdout) == {"format_version": 2, **found.document()}
        else:
            assert ran.stdout.splitlines() == status.status_text(found)
            assert len(ran.stdout.splitlines()) > 3


@pytest.mark.acceptance
def test_status_refuses_an_unknown_or_damaged_plan_as_before(
    tmp_path: Path, clock: FakeClock
) -> None:
    store = fleet(tmp_path, clock)
    store.plan_path("web").write_text("{not json")
    env = run_env()
    unknown, _ = radian_imports("arc", "--repo", str(tmp_path), "status", "--plan", "nope", env=env)
    assert (unknown.returncode, unknown.stdout) == (1, "")
    assert unknown.stderr.splitlines()[-1] == "no plan named 'nope'"
    damaged, imported = radian_imports("arc", "--repo", str(tmp_path), "status", "--plan", "web",
                                       env=env)  # fmt: skip
    assert damaged.returncode == 1
    with pytest.raises(DamagedFile) as raised:
        ArcStore(tmp_path).load_plan("web")
    assert damaged.stderr.splitlines()[-1] == str(raised.value)
    assert "radian.arc.store" in imported  # the typed store says what is wrong, as before
    listed, imported = radian_imports("arc", "--repo", str(tmp_path), "status", env=env)
    assert listed.returncode == 0 and listed.stdout.startswith("plan big ")  # web left out
    assert "plan web" not in listed.stdout


@pytest.mark.acceptance
def test_the_help_of_radian_and_arc_loads_no_commands_module(tmp_path: Path) -> None:
    ran, imported = radian_imports("arc", "--help", env=run_env())
    assert ran.returncode == 0 and "RADIAN_ARC_REPO" in ran.stdout
    assert "radian.cli" in imported
    assert loaded(imported, (*NOT_FOR_STATUS, "radian.arc.status", "radian.arc.store_open")) == []
    ran, imported = radian_imports("--help", env=run_env())
    assert "worker  The radian worker: radian's coding agent, an ACP agent on..." in ran.stdout
    assert "radian.worker.main" in imported  # its help line is its own


@pytest.mark.unit
def test_every_command_and_its_help_are_there() -> None:
    runner = CliRunner()
    top = runner.invoke(main, ["--help"])
    assert top.exit_code == 0
    assert [line.split()[0] for line in _commands(top.output)] == ["arc", "worker"]
    arc = runner.invoke(main, ["arc", "--help"])
    assert [line.split()[0] for line in _commands(arc.output)] == ARC_COMMANDS
    for name in [*ARC_COMMANDS, *(f"{group} {sub}" for group, subs in GROUPS.items()
                                  for sub in subs)]:  # fmt: skip
        shown = runner.invoke(main, ["arc", *name.split(), "--help"])
        assert shown.exit_code == 0, (name, shown.output)
        assert shown.output.startswith(f"Usage: main arc {name} "), name
    for group, subs in GROUPS.items():
        listed = runner.invoke(main, ["arc", group, "--help"]).output
        assert [line.split()[0] for line in _commands(listed)] == subs
    worker = runner.invoke(main, ["worker", "--help"])
    assert worker.exit_code == 0 and "--max-turns INTEGER" in worker.output


def _commands(help_text: str) -> list[str]:
    lines = help_text.splitlines()
    return [line for line in lines[lines.index("Commands:") + 1 :] if line.startswith("  ")]


# -- the plain reader and the typed record agree --------------------------------------------


def _plain_of(plan: Plan) -> PlainPlan:
    return PlainPlan(plan.name, plan.auto, plan.confirmed, plan.max_cost_usd, tuple(plan.tasks),
                     plan.loading)  # fmt: skip


def _never() -> ArcStore:
    raise AssertionError("the typed store was opened for files arc wrote itself")


@pytest.mark.unit
def test_the_plain_shape_has_the_typed_plans_fields_and_defaults() -> None:
    assert list(PLAN_FIELDS) == list(Plan.model_fields)
    for name, (_, default) in PLAN_FIELDS.items():
        field = Plan.model_fields[name]
        if default is REQUIRED:
            assert field.is_required(), name
        else:
            assert field.get_default(call_default_factory=True) == default, name


@pytest.mark.unit
def test_plans_arc_wrote_read_plainly_as_the_typed_store_reads_them(
    tmp_path: Path, clock: FakeClock
) -> None:
    store = ArcStore(tmp_path)
    commands.add_plan(store, "plain")
    commands.add_plan(store, "all", auto="off", max_cost_usd=2.5, merge_main=False,
                      auto_rework=3, fix_level="major")  # fmt: skip
    commands.add_task(store, clock, "all", "a1", "Do a1.\n", max_cost_usd=0.5)
    commands.set_plan_auto(store, "all", "on")
    confirmed = store.load_plan("plain")
    confirmed.confirmed = True
    store.save_plan(confirmed)
    plan_file = tmp_path / "big.toml"
    plan_file.write_text('[plan]\nname = "big"\nmax_cost_usd = 3\nauto = "off"\n\n'
                         '[[task]]\nname = "b1"\nbrief = "Do 1."\n')  # fmt: skip
    commands.load_plan_file(store, clock, plan_file)
    typed = store.plans()
    assert [plan.name for plan in typed] == ["all", "big", "plain"]
    for plan in typed:
        written = json.loads(store.plan_path(plan.name).read_text())
        assert plain_plan(written) == _plain_of(plan)
    reader = PlainFiles(tmp_path, typed=_never)
    assert reader.plans() == [_plain_of(plan) for plan in typed]
    for plan in typed:
        assert reader.task_records(_plain_of(plan)) == store.task_records(plan)


@pytest.mark.unit
def test_a_plan_file_not_as_arc_writes_it_is_read_by_the_typed_store(
    tmp_path: Path, clock: FakeClock
) -> None:
    store = fleet(tmp_path, clock)
    plans = store.root / "plans"
    written = json.loads((plans / "web.json").read_text())
    edits: dict[str, Any] = {
        "whole": {**written, "name": "whole", "max_cost_usd": 5, "confirmed": "true"},
        "broken": "{not json",
        "wrong": {**written, "name": "wrong", "tasks": 3},
        "newer": {**written, "name": "newer", "format_version": 99},
        "misnamed": {**written, "name": "someone"},
        "half": {**written, "name": "half", "loading": True},
        "listed": [written],
        "infinite": {**written, "name": "infinite", "max_cost_usd": float("inf")},
    }
    for name, content in edits.items():
        text = content if isinstance(content, str) else json.dumps(content)
        (plans / f"{name}.json").write_text(text)
    (plans / "folder.json").mkdir()
    opened: list[ArcStore] = []

    def typed() -> ArcStore:
        opened.append(ArcStore(tmp_path))
        return opened[-1]

    reader = PlainFiles(tmp_path, typed=typed)
    expected = [_plain_of(plan) for plan in ArcStore(tmp_path).plans()]
    assert [plan.name for plan in expected] == ["big", "web", "whole"]
    assert expected[2].max_cost_usd == 5.0 and expected[2].confirmed is True
    assert reader.plans() == expected
    assert len(opened) == 1  # once, for all the plans that needed it
    for name in [*edits, "folder", "nope"]:
        try:
            want: object = _plain_of(ArcStore(tmp_path).load_plan(name))
        except (DamagedFile, NotFoundError) as error:
            want = (type(error), str(error))
        try:
            got: object = reader.load_plan(name)
        except (DamagedFile, NotFoundError) as error:
            got = (type(error), str(error))
        assert got == want, name
    plain, through_store = open_reader(tmp_path), ArcStore(tmp_path)
    assert isinstance(plain, PlainFiles)
    assert status.fleet_status(plain, clock) == status.fleet_status(through_store, clock)


JSON_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5),
    st.sampled_from(["on", "off", "major"]), st.lists(st.text(max_size=3), max_size=3),
    st.lists(st.integers(), min_size=1, max_size=2),
)  # fmt: skip


@pytest.mark.unit
@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from([*PLAN_FIELDS, "extra"]), JSON_VALUES))
def test_what_the_plain_shape_accepts_the_typed_plan_reads_alike(data: dict[str, Any]) -> None:
    """Any plan object: when the plain shape takes it, the typed record takes it too and reads
    every field status reads the same (else the typed record decides alone)."""
    plain = plain_plan(data)
    if plain is None:
        return
    try:
        typed = Plan.model_validate(data)
    except ValidationError as error:
        raise AssertionError(f"the plain shape took what the typed plan refuses: {error}") from None
    assert plain == _plain_of(typed)


@pytest.mark.unit
def test_a_state_that_is_no_text_counts_as_damaged(tmp_path: Path, clock: FakeClock) -> None:
    store = fleet(tmp_path, clock)
    for name, state in (("w1", ["done.integrated"]), ("w2", {"state": 1})):
        record = json.loads(store.task_path(name).read_text())
        store.task_path(name).write_text(json.dumps({**record, "state": state}))
    plain = open_reader(tmp_path)
    assert isinstance(plain, PlainFiles)
    for found in (
        status.fleet_status(ArcStore(tmp_path), clock),
        status.fleet_status(plain, clock),
    ):
        web = {plan.name: plan for plan in found.plans}["web"]
        assert web.counts == {"damaged": 2, "review.rework_pending": 1, "todo.paused_budget": 1}


@pytest.mark.unit
def test_a_plain_read_is_the_whole_file_or_none(tmp_path: Path) -> None:
    big = {"state": "todo.ready", "notes": ["x" * 1000] * 300}  # several reads' worth
    (tmp_path / "big.json").write_text(json.dumps(big))
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "latin.json").write_bytes(b'{"state": "\xe9"}')
    (tmp_path / "list.json").write_text("[1]")
    (tmp_path / "folder.json").mkdir()
    assert read_plain(str(tmp_path / "big.json")) == big
    for name in ("empty", "latin", "list", "folder", "missing"):
        assert read_plain(str(tmp_path / f"{name}.json")) is None, name
