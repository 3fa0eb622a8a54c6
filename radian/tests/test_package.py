"""The package as a user gets it: its version, its public API, its logging, its hints."""

from __future__ import annotations

import logging
import re
import tomllib
from importlib.metadata import version
from importlib.resources import files
from pathlib import Path

import pytest
from arc_helpers import make_plan
from click.testing import CliRunner

import radian
import radian.arc
from radian.arc.claims import claim
from radian.arc.clock import FakeClock
from radian.arc.config import ArcConfig
from radian.cli import main

pytestmark = pytest.mark.unit


def test_the_version_comes_from_the_package_metadata() -> None:
    assert radian.__version__ == version("radian")
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"radian, version {version('radian')}\n"


def test_the_public_api_is_what_all_lists() -> None:
    for name in radian.arc.__all__:
        assert getattr(radian.arc, name) is not None
    assert {"Loop", "ArcStore", "Task", "Plan", "State", "ArcError"} <= set(radian.arc.__all__)
    with pytest.raises(AttributeError):
        _ = radian.arc.no_such_name


def test_no_address_is_published_and_the_readmes_links_are_relative() -> None:
    """There is no public address: the metadata names none (no invented placeholder), and
    any link of the README is relative, to a file of the product."""
    product = Path(__file__).resolve().parent.parent
    project = tomllib.loads((product / "pyproject.toml").read_text(encoding="utf-8"))
    assert "urls" not in project["project"]
    readme = (product / "README.md").read_text(encoding="utf-8")
    for link in re.findall(r"\]\(([^)\s]+)\)", readme):
        assert "://" not in link and not link.startswith("/"), link
        assert (product / link.split("#")[0]).is_file(), link


def test_type_hints_ship_with_the_package() -> None:
    assert files("radian").joinpath("py.typed").is_file()


def test_arc_is_silent_by_default_and_logs_claims(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    handlers = logging.getLogger("radian.arc").handlers
    assert any(isinstance(handler, logging.NullHandler) for handler in handlers)
    store = make_plan(tmp_path, clock, ["t"], confirm=False)
    with caplog.at_level(logging.INFO, logger="radian.arc"):
        assert claim(store, ArcConfig(), "t", clock) is not None
    assert [record.name for record in caplog.records] == ["radian.arc.claims"]
    assert "claimed t attempt 001" in caplog.records[0].getMessage()
