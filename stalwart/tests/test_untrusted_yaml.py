"""An agent.yaml from somewhere else (issue 11, points 6 and 8).

On the main this was written against: a 507-byte alias bomb took 45 s to load;
`rulebook: ../../../../etc/passwd` was read and a record could be written anywhere; loading
put the yaml's folder first on `sys.path`, where a `colorsys.py` beside it shadowed the
standard library's for the rest of the process, and `stalwart lint` left it there; and
`confirm: false` (or YAML's `confirm: no`) let a write run unasked.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from stalwart import Agent, ConfigError, FakeClock
from stalwart.cli import main
from stalwart.config import ALLOW_OUTSIDE_ENV, load_agent, load_project, unload_tool_modules
from stalwart.config.yamldoc import MAX_ALIASES

TOOLS = """
from stalwart import tool

CALLS = []


@tool
def look(order: int) -> dict:
    return {"order": order}


@tool(writes=True, irreversible=True)
def ring_bell(order: int) -> dict:
    CALLS.append(("ring_bell", order))
    return {"rang": order}
"""


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    """A project folder with a tools module of its own name; its module forgotten after."""
    folder = tmp_path / "project"
    folder.mkdir()
    module = f"bell_{uuid.uuid4().hex[:10]}"
    (folder / f"{module}.py").write_text(TOOLS)
    (folder / "module").write_text(module)
    yield folder
    sys.modules.pop(module, None)
    sys.path[:] = [entry for entry in sys.path if entry != str(folder)]


def _yaml(folder: Path, more: str = "", facts: str = "") -> Path:
    module = (folder / "module").read_text()
    path = folder / "agent.yaml"
    path.write_text(
        f"agents:\n  desk:\n    tools: [look, ring_bell]\ntools:\n  - python: {module}\n"
        f"{facts}{more}"
    )
    return path


def _bomb(levels: int, width: int) -> str:
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


# --- point 6: aliases ---


def test_an_alias_bomb_is_refused_before_it_expands(project: Path) -> None:
    bomb = _bomb(9, 9)  # the billion laughs: 9**9 values from a few hundred bytes
    assert len(bomb) < 600
    path = project / "agent.yaml"
    path.write_text(bomb)
    with pytest.raises(ConfigError, match=f"more than {MAX_ALIASES} aliases") as refused:
        load_project(path)
    assert refused.value.line is not None
    # Fewer aliases that still expand past the bound are refused by their expansion.
    path.write_text(_bomb(5, 10))  # 40 aliases, 111,111 values
    with pytest.raises(ConfigError, match="more than 100,000 values"):
        load_project(path)


def test_a_few_anchors_still_load(project: Path) -> None:
    facts = "  - ring_bell: &bell {confirm: true}\n  - look: {}\n"
    path = _yaml(project, facts=facts, more="record: &r ./desk.sqlite\n")
    assert load_agent(path).record == str(project / "desk.sqlite")


# --- point 6: the files agent.yaml names stay inside its folder ---


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("rulebook", "../../../../../../../../etc/passwd"),
        ("rulebook", "../outside.co"),
        ("record", "../elsewhere/desk.sqlite"),
        ("operator_token", "/tmp/some.operator-token"),
    ],
)
def test_a_file_outside_the_project_folder_is_refused(project: Path, key: str, value: str) -> None:
    (project.parent / "outside.co").write_text("")
    path = _yaml(project, more=f"{key}: {value}\n")
    with pytest.raises(ConfigError, match="expected a path inside the project folder") as refused:
        load_project(path)
    assert refused.value.key_path == key


def test_a_link_out_of_the_folder_is_outside_too_and_a_flag_allows_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = project.parent / "shared.co"
    outside.write_text("cap ring_bell.order <= 5\n")
    (project / "rules.co").symlink_to(outside)
    path = _yaml(project, more="rulebook: ./rules.co\n")
    with pytest.raises(ConfigError, match="inside the project folder"):
        load_project(path)
    allowed = load_agent(path, allow_outside_project=True)
    assert allowed.rulebook.source == outside
    unload_tool_modules(allowed.project)
    monkeypatch.setenv(ALLOW_OUTSIDE_ENV, "1")
    assert load_agent(path).rulebook.source == outside


def test_the_cli_refuses_a_file_outside_unless_told(project: Path) -> None:
    (project.parent / "outside.co").write_text("")
    path = _yaml(project, more="rulebook: ../outside.co\n")
    refused = CliRunner().invoke(main, ["lint", str(path)])
    assert refused.exit_code == 2
    assert "rulebook: expected a path inside the project folder" in refused.output
    allowed = CliRunner().invoke(main, ["--allow-outside-project", "lint", str(path)])
    assert allowed.exit_code == 0, allowed.output


# --- point 6: the project's folder on sys.path ---


def test_lint_leaves_neither_the_folder_nor_the_modules_behind(project: Path) -> None:
    path = _yaml(project)
    module = (project / "module").read_text()
    before = list(sys.path)
    linted = CliRunner().invoke(main, ["lint", str(path)])
    assert linted.exit_code == 0, linted.output
    assert "ring_bell: irreversible" not in linted.output  # it asks for confirmation
    assert sys.path == before
    assert module not in sys.modules


def test_a_module_beside_agent_yaml_does_not_shadow_the_standard_library(
    project: Path,
) -> None:
    (project / "colorsys.py").write_text("SHADOWED = True\n")
    path = _yaml(project)
    code = textwrap.dedent(
        f"""
        from stalwart.config import load_project
        load_project({str(path)!r})
        import colorsys
        print(getattr(colorsys, "SHADOWED", False), colorsys.__file__)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=project.parent, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("False "), done.stdout


# --- point 8: confirm: false ---


@pytest.mark.parametrize("said", ["false", "no", "off"])
def test_confirm_false_is_refused_for_a_write(project: Path, said: str) -> None:
    path = _yaml(project, facts=f"  - ring_bell: {{confirm: {said}}}\n")
    with pytest.raises(ConfigError, match="say confirm: never under ring_bell") as refused:
        load_project(path)
    assert refused.value.key_path == "tools[1].ring_bell.confirm"


def test_confirm_never_is_the_explicit_word_and_is_linted(project: Path) -> None:
    path = _yaml(project, facts="  - ring_bell: {confirm: never}\n")
    with Agent.from_file(path, clock=FakeClock(), store=None) as agent:
        reply = agent.chat("ring the bell for order 3", user="u")
        assert reply.waiting == [] and reply.state == "done"
        assert "irreversible_without_confirmation" in [lint.name for lint in agent.lints]
    linted = CliRunner().invoke(main, ["lint", str(path)])
    assert "ring_bell: irreversible_without_confirmation" in linted.output
    # A read never asks, so neither word is taken for one.
    path = _yaml(project, facts="  - look: {confirm: never}\n")
    with pytest.raises(ConfigError, match="only a write is confirmed"):
        load_project(path)
