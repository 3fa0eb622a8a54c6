"""Dependencies point inward: the engine and the policy are never wired to a language."""

from __future__ import annotations

import ast
import pathlib

import pytest

import stalwart

pytestmark = pytest.mark.unit

SRC = pathlib.Path(stalwart.__file__).parent


def imported_by(folder: str) -> dict[str, set[str]]:
    """Each module of `folder` and the stalwart modules it imports (resolved to dotted names)."""
    found: dict[str, set[str]] = {}
    for path in sorted((SRC / folder).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = ["stalwart", *path.relative_to(SRC).parent.parts]
                    base = base[: len(base) - node.level + 1]
                    module = ".".join([*base, node.module] if node.module else base)
                else:
                    module = node.module or ""
                names.add(module)
                names.update(f"{module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
        found[str(path.relative_to(SRC))] = names
    return found


def test_the_engine_and_the_policy_import_no_language() -> None:
    for folder in ("_engine", "policy"):
        for module, names in imported_by(folder).items():
            wired = {
                n
                for n in names
                if n.startswith(("stalwart.selector.english", "stalwart.selector.portuguese"))
            }
            assert wired == set(), module


def test_the_run_context_does_not_import_the_model_loop() -> None:
    assert not any("model_loop" in name for name in imported_by("_engine")["_engine/context.py"])


def test_a_framework_is_imported_by_its_adapter_only() -> None:
    """The engine and the guarded-run API know no framework: `stalwart.adapters.<name>`
    alone imports it (and only behind its extra)."""
    frameworks = ("pydantic_ai", "agents", "langgraph", "langchain")
    for module, names in imported_by(".").items():
        if module.startswith("adapters/"):
            continue
        wired = {n for n in names if n.split(".")[0] in frameworks}
        assert wired == set(), module
    adapter = imported_by("adapters")["adapters/pydantic_ai.py"]
    assert any(name.startswith("pydantic_ai") for name in adapter)
