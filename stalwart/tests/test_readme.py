"""The README's tour of stalwart says only what is true of the shop's desk."""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
SHOP = ROOT / "stalwart" / "examples" / "shop"


def _tour_blocks() -> dict[str, list[str]]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tour = readme.split("## A short tour of stalwart", 1)[1].split("\n## ", 1)[0]
    blocks: dict[str, list[str]] = {"python": [], "yaml": []}
    for language, body in re.findall(r"```(\w+)\n(.*?)```", tour, re.S):
        blocks[language].append(body)
    return blocks


def _is_print(node: ast.Expr) -> bool:
    call = node.value
    return isinstance(call, ast.Call) and getattr(call.func, "id", None) == "print"


def test_the_tours_tools_are_the_shops_tools_as_declared() -> None:
    declared = (SHOP / "shop" / "tools.py").read_text(encoding="utf-8")
    [tools, _] = _tour_blocks()["python"]
    declarations = re.findall(r"(@tool.*?\n.*?\n\s+\"\"\".*?\"\"\")", tools, re.S)
    assert len(declarations) == 3
    for declaration in declarations:
        assert declaration in declared


def test_the_tours_agent_yaml_is_the_shops() -> None:
    [shown] = _tour_blocks()["yaml"]
    assert yaml.safe_load(shown) == yaml.safe_load((SHOP / "agent.yaml").read_text())


def test_the_tours_session_prints_what_its_comments_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    [_, session] = _tour_blocks()["python"]
    folder = tmp_path / "shop"
    shutil.copytree(SHOP, folder, ignore=shutil.ignore_patterns("*.sqlite*", "__pycache__"))
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))
    for name in _shop_modules():
        monkeypatch.delitem(sys.modules, name)
    try:
        _run_the_tour(session, folder)
    finally:
        # The copy's modules go (monkeypatch puts back only what it took out): left behind,
        # they stopped every later test in this process from loading the shop's own folder.
        for name in _shop_modules():
            del sys.modules[name]


def _shop_modules() -> list[str]:
    return [name for name in sys.modules if name == "shop" or name.startswith("shop.")]


def _run_the_tour(session: str, folder: Path) -> None:
    # Each statement the tour follows with "# ..." lines must print (or, as an expression,
    # evaluate to) exactly those lines, joined.
    lines = session.splitlines()
    namespace: dict[str, object] = {}
    checked = 0
    for node in ast.parse(session).body:
        end = node.end_lineno or node.lineno
        comments = []
        for line in lines[end:]:
            if not line.startswith("# "):
                break
            comments.append(line[2:])
        source = "\n".join(lines[node.lineno - 1 : end])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            if isinstance(node, ast.Expr) and comments and not _is_print(node):
                shown = repr(eval(source, namespace))  # noqa: S307
            else:
                exec(source, namespace)  # noqa: S102
                shown = out.getvalue().strip()
        if comments:
            assert shown == " ".join(comments)
            checked += 1
    assert checked == 2
    namespace["desk"].close()  # type: ignore[attr-defined]
    assert os.path.exists(folder / "agent.record.sqlite")
