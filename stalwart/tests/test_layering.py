"""The rules the package's imports keep, read from its source's import statements.

Dependencies point inward: the engine and the policy are never wired to a language, and a
framework is imported by its adapter only.

An import at a module's top level is an edge of the graph; an import inside a function
is checked separately, since it runs later and so can hide a circle; an import under
`if TYPE_CHECKING:` never runs and is left out.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import stalwart

pytestmark = pytest.mark.unit

PACKAGE = Path(stalwart.__file__).parent


@dataclass
class ImportGraph:
    top: dict[str, set[str]] = field(default_factory=dict)  # run when the module loads
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
        return [sorted(part) for part in _strongly_connected(self.top) if len(part) > 1]


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
    target = _source(module, is_package, node)
    # A submodule, or a name in `target`: `import_graph` walks a name up to its module.
    yield from (f"{target}.{alias.name}" for alias in node.names)


Statement = ast.Import | ast.ImportFrom


def _source(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module `from ... import` reads from, its dots resolved against `module`."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1] if node.level else []
    return ".".join([*base, *([node.module] if node.module else [])])


def _imports(tree: ast.AST) -> Iterator[tuple[Statement, bool]]:
    """Each import statement that runs, with whether it runs inside a function."""

    def walk(node: ast.AST, in_function: bool) -> Iterator[tuple[Statement, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, in_function
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                yield from (item for part in child.orelse for item in walk(part, in_function))
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
    assert graph.circles() == []


def test_no_import_inside_a_function_closes_a_circle(graph: ImportGraph) -> None:
    closing = [
        f"{module} -> {target}"
        for module, targets in sorted(graph.inner.items())
        for target in sorted(targets)
        if graph.reaches(target, module)
    ]
    assert closing == []


def test_texts_import_nothing_from_the_engine_or_the_record(graph: ImportGraph) -> None:
    texts = [module for module in graph.top if module.startswith("stalwart.texts")]
    assert texts, "the texts package was not found"
    reached = {
        f"{module} -> {target}"
        for module in texts
        for target in graph.top[module] | graph.inner[module]
        if target.startswith(("stalwart._engine", "stalwart.record"))
    }
    assert reached == set()


def test_the_codec_is_the_ground_floor(graph: ImportGraph) -> None:
    codec = graph.top["stalwart.codec"] | graph.inner["stalwart.codec"]
    assert codec == {"stalwart.errors"}
    assert graph.top["stalwart.errors"] == set()


# The engine's public faces: `Agent` drives stalwart's own runs, the guarded-run API a
# foreign framework's (`stalwart.testing` reads only public modules). Everything
# else reads the public modules the engine itself reads: `states` (a run's states and
# their table), `labels`, `backoff`, `record.sessions`, `tools.current`.
ENGINE_FACES = frozenset({"stalwart.agent", "stalwart.guarded"})


def test_nothing_but_the_engines_faces_imports_the_engine(graph: ImportGraph) -> None:
    outside = [module for module in graph.top if not module.startswith("stalwart._engine")]
    assert "stalwart.serve.service" in outside, "the package was not read"
    reached = {
        f"{module} -> {target}"
        for module in outside
        if module not in ENGINE_FACES
        for target in graph.top[module] | graph.inner[module]
        if target == "stalwart._engine" or target.startswith("stalwart._engine.")
    }
    assert reached == set()


def test_a_runs_states_are_read_without_the_engine(graph: ImportGraph) -> None:
    """The table of states and transitions is data: it needs only the error it raises."""
    assert graph.top["stalwart.states"] | graph.inner["stalwart.states"] == {"stalwart.errors"}


def test_the_graph_sees_a_circle_when_there_is_one(tmp_path: Path) -> None:
    """The reader itself: a made-up package with a top-level circle and an inner one."""
    package = tmp_path / "made"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from . import b\n")
    (package / "b.py").write_text("from .a import thing\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
        "def later():\n    from .d import x\n"
    )
    (package / "d.py").write_text("from .c import later\n")
    made = import_graph(package)
    assert made.circles() == [["made.a", "made.b"]]
    assert made.inner["made.c"] == {"made.d"}
    assert made.reaches("made.d", "made.c")
    assert "made.a" not in made.top["made.c"]


SRC = PACKAGE


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


def _loaded_by(code: str) -> set[str]:
    """The stalwart modules a fresh interpreter has loaded after running `code`."""
    shown = "import sys; print(*sorted(m for m in sys.modules if m.startswith('stalwart')))"
    done = subprocess.run(
        [sys.executable, "-c", f"{code}; {shown}"], capture_output=True, text=True, check=True
    )
    return set(done.stdout.split())


def test_import_stalwart_loads_no_route_search_and_no_sample_turns() -> None:
    """An `Agent` lints itself with `verify.lints`, so `import stalwart` loads the verify
    package; its checks and sample turns wait until something verifies."""
    loaded = _loaded_by("import stalwart")
    assert {"stalwart.agent", "stalwart.verify", "stalwart.verify.lints"} <= loaded
    assert loaded & {"stalwart.verify.checks", "stalwart.verify.turns"} == set()


def test_the_verify_package_gives_each_of_its_names_from_its_home() -> None:
    import stalwart.verify as verify
    from stalwart.verify import checks, findings, turns

    for name in verify.__all__:
        given = getattr(verify, name)
        at_home = [vars(home)[name] for home in (findings, checks, turns) if name in vars(home)]
        assert at_home and all(value is given for value in at_home), name
    with pytest.raises(AttributeError, match="has no attribute 'route_search'"):
        verify.route_search  # type: ignore[attr-defined]  # noqa: B018
    assert {"stalwart.verify.checks", "stalwart.verify.turns"} <= _loaded_by(
        "from stalwart.verify import verify_project, check_turns"
    )


# --- a public name is read where it lives. `stalwart.states` and `stalwart.backoff` are
# public, and the engine reads them as everyone else does: a module that imports one of
# their names uses it itself. Read statically, over the package, its tests and benchmarks:
# `from m import n`, `m.n` (m bound by an import) and `__all__`; not getattr with a text.

HOMES = frozenset({"stalwart.states", "stalwart.backoff"})
ENGINE = "stalwart._engine"


def _dotted(node: ast.expr, bound: dict[str, str]) -> str | None:
    """The module an expression names (`runs`, `stalwart._engine.runs`), through `bound`."""
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.Attribute):
        owner = _dotted(node.value, bound)
        return f"{owner}.{node.attr}" if owner is not None else None
    return None


@dataclass(frozen=True)
class _Read:
    """What a file's source says about names: its imports, its `__all__` and the
    attributes it reads (`x.y`, `x.y.z`), each file parsed and walked once."""

    imports_from: list[ast.ImportFrom]
    imports: list[ast.Import]
    all_lists: list[ast.Assign]
    attributes: list[ast.Attribute]


@functools.cache
def _source_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _may_name(path: Path, modules: Iterable[str]) -> bool:
    """Whether the file's text holds the last part of one of `modules`' names, as every
    import of one of them and every read through one does (else it is not parsed)."""
    text = _source_text(path)
    return any(module.rsplit(".", 1)[-1] in text for module in modules)


@functools.cache
def _read(path: Path) -> _Read:
    read = _Read([], [], [], [])
    for node in ast.walk(ast.parse(_source_text(path))):
        if isinstance(node, ast.ImportFrom):
            read.imports_from.append(node)
        elif isinstance(node, ast.Import):
            read.imports.append(node)
        elif isinstance(node, ast.Assign) and "__all__" in map(ast.unparse, node.targets):
            read.all_lists.append(node)
        elif isinstance(node, ast.Attribute):
            read.attributes.append(node)
    return read


def _passers(modules: dict[str, tuple[Path, bool]], homes: frozenset[str]) -> Iterator[str]:
    """What marks a name of a home for passing on: `from home import n as n`, or a module
    whose `__all__` lists a name it imports from a home."""
    for module, (path, is_package) in modules.items():
        taken = _taken_from(module, is_package, path, homes)
        for node in _read(path).imports_from:
            if _source(module, is_package, node) in homes:
                marked = [alias.name for alias in node.names if alias.asname == alias.name]
                yield from (f"{module} marks {name} for re-export" for name in marked)
        for all_list in _read(path).all_lists:
            listed = set(ast.literal_eval(all_list.value)) & set(taken)
            yield from (f"{module} lists {name} in __all__" for name in sorted(listed))


def _taken_from(module: str, is_package: bool, path: Path, homes: frozenset[str]) -> dict[str, str]:
    """Each name `module` imports from one of `homes`, with that home."""
    if not _may_name(path, homes):
        return {}
    return {
        alias.asname or alias.name: home
        for node in _read(path).imports_from
        if (home := _source(module, is_package, node)) in homes
        for alias in node.names
    }


def names_passed_on(
    modules: dict[str, tuple[Path, bool]],
    readers: dict[str, tuple[Path, bool]],
    homes: frozenset[str],
) -> list[str]:
    """Where a name of `homes` is read through one of `modules` that imported it."""
    passing = {
        module: _taken_from(module, is_package, path, homes)
        for module, (path, is_package) in modules.items()
    }
    passing = {module: taken for module, taken in passing.items() if taken}
    found = list(_passers(modules, homes))
    for reader, (path, is_package) in readers.items():
        if not _may_name(path, passing):
            continue
        read = _read(path)
        bound: dict[str, str] = {}  # a name the reader binds to a module
        for node in read.imports_from:
            source = _source(reader, is_package, node)
            for alias in node.names:
                if alias.name in passing.get(source, {}):
                    found.append(f"{reader}: from {source} import {alias.name}")
                if f"{source}.{alias.name}" in passing:
                    bound[alias.asname or alias.name] = f"{source}.{alias.name}"
        for imported in read.imports:
            for alias in imported.names:
                first = alias.name.split(".")[0]
                bound[alias.asname or first] = alias.name if alias.asname else first
        for attribute in read.attributes if bound else ():
            owner = _dotted(attribute.value, bound)
            if owner is not None and attribute.attr in passing.get(owner, {}):
                found.append(f"{reader}: {owner}.{attribute.attr}")
    return sorted(set(found))


def _files_of(folder: Path) -> dict[str, tuple[Path, bool]]:
    """The test or benchmark files of `folder`, named by their path (they import stalwart
    by its full name, so their own names resolve nothing)."""
    root = folder.parent
    return {str(path.relative_to(root)): (path, False) for path in sorted(folder.rglob("*.py"))}


def test_a_name_of_states_or_backoff_is_read_from_its_home() -> None:
    modules = _module_names(PACKAGE)
    product = PACKAGE.parent.parent
    readers = {**modules, **_files_of(product / "tests"), **_files_of(product / "benchmarks")}
    assert "tests/test_runs.py" in readers and "stalwart._engine.retry" in readers
    assert names_passed_on(modules, readers, HOMES) == []


def test_nothing_reads_a_public_name_through_the_engine() -> None:
    """What the engine imports from a public module (`states`, `steps`, `labels`, ...)
    is read in that module, by the package, its tests and its benchmarks: a test that
    imports from `stalwart._engine` reads what the engine itself defines."""
    modules = _module_names(PACKAGE)
    product = PACKAGE.parent.parent
    engine = {name: place for name, place in modules.items() if name.startswith(ENGINE)}
    public = frozenset(name for name in modules if not name.startswith(ENGINE))
    readers = {**modules, **_files_of(product / "tests"), **_files_of(product / "benchmarks")}
    assert "stalwart.steps" in public and "stalwart._engine.runs" in engine
    assert names_passed_on(engine, readers, public) == []


def test_the_reader_sees_a_name_passed_on(tmp_path: Path) -> None:
    """The reader itself: a made-up package whose `mid` passes on a name of `home`."""
    package = tmp_path / "made"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "home.py").write_text("X = 1\nY = 2\n")
    (package / "mid.py").write_text(
        "from .home import X as X\nfrom .home import Y\n__all__ = ['Y']\nZ = X + Y\n"
    )
    (package / "user.py").write_text(
        "import made.mid\nfrom . import mid as m\nfrom .mid import X, Z\n"
        "a = (m.Y, m.Z, made.mid.X)\n"
    )
    modules = _module_names(package)
    assert names_passed_on(modules, modules, frozenset({"made.home"})) == [
        "made.mid lists Y in __all__",
        "made.mid marks X for re-export",
        "made.user: from made.mid import X",
        "made.user: made.mid.X",
        "made.user: made.mid.Y",
    ]
