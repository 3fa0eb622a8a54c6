"""The rules radian's imports keep, read from its source's import statements.

Lower floors know nothing of upper ones: no import circle, not even one only the type
checker follows. An import at a module's top level is an edge of the graph, and so is one
under `if TYPE_CHECKING:` (it never runs, but a module whose types name an upper floor is
not below it); an import inside a function runs later and so can hide a circle: it is
checked separately.

The graph's reader is a copy of stalwart/tests/test_layering.py's (the two products share
no code, DESIGN.md), with the `TYPE_CHECKING` imports kept as edges.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import radian

pytestmark = pytest.mark.unit

PACKAGE = Path(radian.__file__).parent

Statement = ast.Import | ast.ImportFrom


@dataclass
class ImportGraph:
    top: dict[str, set[str]] = field(default_factory=dict)  # at load, or for the type checker
    inner: dict[str, set[str]] = field(default_factory=dict)  # run when a function runs

    def reaches(self, start: str, goal: str) -> bool:
        seen, todo = {start}, [start]
        while todo:
            here = todo.pop()
            if here == goal:
                return True
            for there in self.top[here] - seen:
                seen.add(there)
                todo.append(there)
        return False

    def circles(self) -> list[list[str]]:
        """The module-level import circles: each strongly connected part of two or more."""
        return sorted(sorted(part) for part in _strongly_connected(self.top) if len(part) > 1)


def _module_names(root: Path) -> dict[str, tuple[Path, bool]]:
    names: dict[str, tuple[Path, bool]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        names[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return names


def _targets(module: str, is_package: bool, node: Statement) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1] if node.level else []
    target = ".".join([*base, *([node.module] if node.module else [])])
    # A submodule, or a name in `target`: `import_graph` walks a name up to its module.
    yield from (f"{target}.{alias.name}" for alias in node.names)


def _imports(tree: ast.AST) -> Iterator[tuple[Statement, bool]]:
    """Each import statement, with whether it runs inside a function."""

    def walk(node: ast.AST, in_function: bool) -> Iterator[tuple[Statement, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, in_function
            else:
                inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                yield from walk(child, inside)

    yield from walk(tree, False)


def import_graph(root: Path) -> ImportGraph:
    modules = _module_names(root)
    graph = ImportGraph()
    for module, (path, is_package) in modules.items():
        top, inner = graph.top.setdefault(module, set()), graph.inner.setdefault(module, set())
        for node, in_function in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _targets(module, is_package, node):
                while target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in modules and target != module:
                    (inner if in_function else top).add(target)
    return graph


def _strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively (no recursion limit to meet on a deep package)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    parts: list[list[str]] = []
    for start in edges:
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, rest = work[-1]
            following = next(rest, None)
            if following is not None:
                if following not in index:
                    index[following] = low[following] = len(index)
                    stack.append(following)
                    on_stack.add(following)
                    work.append((following, iter(sorted(edges[following]))))
                elif following in on_stack:
                    low[node] = min(low[node], index[following])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.append(member)
                    if member == node:
                        break
                parts.append(part)
    return parts


@pytest.fixture(scope="module")
def graph() -> ImportGraph:
    return import_graph(PACKAGE)


def test_no_import_circle_at_module_level(graph: ImportGraph) -> None:
    assert "radian.arc.store" in graph.top  # the package's modules were read
    assert graph.circles() == []


def test_no_import_inside_a_function_closes_a_circle(graph: ImportGraph) -> None:
    closing = [
        f"{module} -> {target}"
        for module, targets in sorted(graph.inner.items())
        for target in sorted(targets)
        if graph.reaches(target, module)
    ]
    assert closing == []


def test_the_store_knows_nothing_of_the_loop_or_its_index(graph: ImportGraph) -> None:
    """The loop owns its due-index; the stores keep the change journal it reads."""
    stores = [module for module in graph.top if module.startswith("radian.arc.store")]
    assert "radian.arc.store_journal" in stores
    reached = {
        f"{module} -> {upper}"
        for module in stores
        for upper in ("radian.arc.due", "radian.arc.loop")
        if graph.reaches(module, upper)
    }
    assert reached == set()


def test_the_graph_sees_a_circle_when_there_is_one(tmp_path: Path) -> None:
    """The reader itself: a made-up package with a top-level circle, one only the type
    checker follows, and an inner one."""
    package = tmp_path / "made"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from . import b\n")
    (package / "b.py").write_text("from .a import thing\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import e\n"
        "def later():\n    from .d import x\n"
    )
    (package / "d.py").write_text("from .c import later\n")
    (package / "e.py").write_text("from made.c import later\n")
    made = import_graph(package)
    assert made.circles() == [["made.a", "made.b"], ["made.c", "made.e"]]
    assert made.inner["made.c"] == {"made.d"}
    assert made.reaches("made.d", "made.c")
    assert made.top["made.c"] == {"made.e"}
