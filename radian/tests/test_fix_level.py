"""An unknown fix_level is refused at once, naming the levels (issue 14, bug 9)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from radian.arc.config import parse_config
from radian.arc.errors import ConfigError
from radian.cli import main

pytestmark = pytest.mark.acceptance

LEVELS = "info, minor, major, critical"


def arc(repo: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["arc", "--repo", str(repo), *args])
    return result.exit_code, result.output


def test_the_command_line_refuses_an_unknown_fix_level(tmp_path: Path) -> None:
    code, output = arc(tmp_path, "plan", "add", "p", "--fix-level", "severe")
    assert code == 2 and "'severe' is not one of 'info', 'minor', 'major', 'critical'" in output
    assert arc(tmp_path, "plan", "add", "p", "--fix-level", "minor")[0] == 0
    brief = tmp_path / "brief.md"
    brief.write_text("# t\n")
    code, output = arc(tmp_path, "task", "add", "p", "t", "--brief", str(brief),
                       "--fix-level", "blocker")  # fmt: skip
    assert code == 2 and "'blocker' is not one of" in output
    assert arc(tmp_path, "show")[1] == "plan p (auto on, not confirmed)\n"


def test_a_plan_file_with_an_unknown_fix_level_is_refused_whole(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text('[plan]\nname = "p"\n\n[[task]]\nname = "t"\nbrief = "x"\nfix_level = "big"\n')
    code, output = arc(tmp_path, "plan", "load", str(plan))
    assert code == 2
    assert "task.0.fix_level: expected 'info', 'minor', 'major' or 'critical', got 'big'" in output
    assert arc(tmp_path, "show")[1] == "no plans\n"


def test_a_gate_section_with_an_unknown_fix_level_is_refused() -> None:
    with pytest.raises(ConfigError, match="gate.fix_level: expected "):
        parse_config('[gate]\nfix_level = "huge"\n', ".radian/arc.toml")
    assert parse_config('[gate]\nfix_level = "minor"\n', "x").gate is not None


def test_the_library_refuses_it_too(tmp_path: Path) -> None:
    from radian.arc import commands
    from radian.arc.errors import UsageError
    from radian.arc.store import ArcStore

    with pytest.raises(UsageError, match=f"fix_level 'x' is not a level: use one of {LEVELS}"):
        commands.add_plan(ArcStore(tmp_path), "p", fix_level="x")
