"""Every sentence a person reads lives in the texts package (one module per area): the
selector, the rulebook and the lints keep no sentences of their own."""

from __future__ import annotations

import ast
import importlib
import pathlib

import pytest

import stalwart
from stalwart import texts

pytestmark = pytest.mark.unit

SRC = pathlib.Path(stalwart.__file__).parent


def module_constants(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def test_the_reasons_refusals_and_lint_texts_are_in_texts() -> None:
    moved = {
        "selector/core.py": {"NOTHING_SAID", "NO_TOOL_MATCHES", "NOT_ENGLISH"},
        "policy/rulebook.py": {"REFUSAL_TEXTS", "BOUNDS", "SOURCE_KINDS"},
        "verify/lints.py": {"LINT_TEXTS", "UNBOUND_SOURCE"},
    }
    for module, names in moved.items():
        assert module_constants(SRC / module) & names == set(), module
        assert all(hasattr(texts, name) for name in names)


def test_the_selectors_reasons_are_functions_of_texts() -> None:
    assert texts.tools_match_equally(["a", "b"]) == "two tools match equally: a, b"
    assert texts.required_not_given("order", "charge_card") == (
        "required argument order of charge_card is not given"
    )
    assert (
        texts.REFUSAL_TEXTS["cap_arg"].format(
            arg="amount",
            value=900.0,
            where="line 6 of policy.co",
            bound=texts.BOUNDS["<="],
            limit=500,
        )
        == "its amount is 900.0, and line 6 of policy.co allows at most 500"
    )


def defined_names(path: pathlib.Path) -> set[str]:
    """The public names a module of the texts package defines (not the ones it imports)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = module_constants(path)
    names.update(n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef))
    return {name for name in names if not name.startswith("_")}


def test_every_text_of_every_area_resolves_from_the_package() -> None:
    """`texts.X` and `from stalwart.texts import X` reach each area's text, and no two areas
    define the same name (one would hide the other)."""
    areas = sorted((SRC / "texts").glob("*.py"))
    seen: dict[str, str] = {}
    for path in areas:
        if path.stem in ("__init__", "serve"):
            continue
        module = importlib.import_module(f"stalwart.texts.{path.stem}")
        for name in defined_names(path):
            assert name not in seen, f"{name} is in both {seen[name]} and {path.stem}"
            seen[name] = path.stem
            assert getattr(texts, name) is getattr(module, name), name
    assert len(seen) >= 135  # the 135 public names of the former texts.py, and any since
    assert texts.serve.NOT_SIGNED_IN == "Sign in first."


def test_every_text_the_code_names_exists() -> None:
    """Every `texts.X` and `from ...texts import X` in the sources and the tests resolves."""
    tests = pathlib.Path(__file__).parent
    for path in [*SRC.rglob("*.py"), *tests.rglob("*.py")]:
        nodes = list(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))
        # the names this file gives the run's texts package (serve's modules name theirs texts)
        aliases = {
            alias.asname or alias.name
            for node in nodes
            if isinstance(node, ast.ImportFrom) and node.module in ("stalwart", None, "..")
            for alias in node.names
            if alias.name == "texts" and (path.parent.name != "serve" or alias.asname)
        }
        for node in nodes:
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("texts"):
                package = "stalwart.texts.serve" if node.module == "serve.texts" else texts
                for alias in node.names:
                    assert alias.name == "serve" or hasattr(package, alias.name), (path, alias)
            run_texts = (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
            )
            if run_texts:
                assert isinstance(node, ast.Attribute)
                assert hasattr(texts, node.attr), (path, node.attr)
