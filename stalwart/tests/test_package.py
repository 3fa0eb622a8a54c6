"""The package as a user gets it from an index: its version, licence, classifiers, README."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import metadata, version
from importlib.resources import files
from pathlib import Path

import pytest
from click.testing import CliRunner

import stalwart
from stalwart.cli import main

pytestmark = pytest.mark.unit

PRODUCT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((PRODUCT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_version_comes_from_the_package_metadata() -> None:
    assert stalwart.__version__ == version("stalwart")
    result = CliRunner().invoke(main, ["--version"])
    assert (result.exit_code, result.output) == (0, f"stalwart, version {version('stalwart')}\n")


def test_the_licence_is_apache_2_and_ships_with_the_package() -> None:
    assert PYPROJECT["license"] == "Apache-2.0"
    licence = (PRODUCT / "LICENSE").read_text(encoding="utf-8")
    assert licence == (PRODUCT.parent / "radian" / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    assert metadata("stalwart")["License-Expression"] == "Apache-2.0"


def test_the_classifiers_say_posix_only_typed_and_python_3_11() -> None:
    classifiers = set(PYPROJECT["classifiers"])
    assert {
        "Operating System :: POSIX",
        "Typing :: Typed",
        "Programming Language :: Python :: 3.11",
    } <= classifiers
    assert not {
        c for c in classifiers if "Windows" in c or c == "Operating System :: OS Independent"
    }
    assert set(metadata("stalwart").get_all("Classifier") or ()) == classifiers
    assert files("stalwart").joinpath("py.typed").is_file()


def test_the_readme_stands_alone() -> None:
    """The index page: what it is, how to install, an example, POSIX only, links to the docs."""
    readme = (PRODUCT / "README.md").read_text(encoding="utf-8")
    assert PYPROJECT["readme"] == "README.md"
    assert "pip install stalwart" in readme
    assert "POSIX" in readme
    assert "```python" in readme
    for page in ("runs.md", "testing.md", "logging.md"):
        assert f"docs/{page}" in readme
    for link in (line for line in readme.split("(") if line.startswith("docs/")):
        assert (PRODUCT / link.split(")")[0]).is_file(), link


def test_no_address_is_published_and_the_readmes_links_are_relative() -> None:
    """There is no public address: the metadata names none (no invented placeholder), and
    each link of the README is relative, to a file of the product."""
    assert "urls" not in PYPROJECT
    readme = (PRODUCT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", readme)
    assert links
    for link in links:
        assert "://" not in link and not link.startswith("/"), link
        assert (PRODUCT / link.split("#")[0]).is_file(), link


def test_the_readmes_example_prints_what_its_comments_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = (PRODUCT / "README.md").read_text(encoding="utf-8")
    blocks = [block.split("\n", 1) for block in readme.split("```")[1::2]]
    tools, program = [body for fence, body in blocks if fence == "python"]
    (yaml,) = [body for fence, body in blocks if fence == "yaml"]
    (tmp_path / "desk.py").write_text(tools, encoding="utf-8")
    (tmp_path / "agent.yaml").write_text(yaml, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    exec(compile(program, "README.md", "exec"), {})
    said = [line.split("# ", 1)[1] for line in program.splitlines() if "print(" in line]
    assert capsys.readouterr().out.splitlines() == said


def _pins(path: Path) -> dict[str, str]:
    pinned: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if "==" in line and not line.startswith("#"):
            name, _, pin = line.partition("==")
            pinned[name.strip().lower().replace("_", "-")] = pin.split(";")[0].strip()
    return pinned


def test_every_declared_floor_is_the_version_a_suite_runs_with() -> None:
    """A floor lower than what the tests install would be a promise nobody checked: each is
    the dev pin the suite runs with, or, for an adapter's framework, the lowest pin that
    `make test-adapters-lowest` runs the adapters' contract suite with."""
    dev = _pins(PRODUCT.parent / "constraints-dev.txt")
    lowest = _pins(PRODUCT / "constraints-lowest.txt")
    declared = list(PYPROJECT["dependencies"])
    for extra in PYPROJECT["optional-dependencies"].values():
        declared += extra
    assert declared
    for requirement in declared:
        name, _, floor = requirement.partition(">=")
        assert floor, f"{requirement} declares no floor"
        name = name.split("[")[0].lower()
        assert floor == lowest.get(name, dev[name]), requirement
