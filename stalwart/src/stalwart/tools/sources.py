"""Tool sources: where an agent's tools come from. Today `python:`, a module of `@tool`s.

A `python:` module imports under its own name with the project's folder on `sys.path`, so
the project's own code (`from shop.tools import CALLS`) sees the very module the agent
calls, and loading the same project again reuses it. Two folders whose modules share a
top-level name cannot both be loaded in one process: the second is refused, naming both
places, never a silent mix (`unload_python_sources` forgets the first one's modules).
"""

from __future__ import annotations

import importlib
import re
import sys
import types
from collections.abc import Iterable
from pathlib import Path

from stalwart.errors import ToolSourceError

from .spec import ToolSpec, tools_in_module

SOURCE_KEYS = ("python",)
MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def python_source(folder: Path, name: str) -> dict[str, ToolSpec]:
    """The `@tool`s of module `name`, imported with `folder` on the path.

    ToolSourceError if it fails to import, collides with a module of another folder,
    or defines no tools.
    """
    found = tools_in_module(import_tool_module(folder, name))
    if not found:
        raise ToolSourceError(f"module {name!r} defines no @tool functions")
    return found


def import_tool_module(folder: Path, name: str) -> types.ModuleType:
    """Module `name`, imported with `folder` on the path; see the module's rules."""
    top = name.split(".")[0]
    local = _local_module(folder, top)
    if local is not None:
        _refuse_collision(top, local)
        if str(folder) not in sys.path:
            # Kept on the path: tools may import more of their package later. Last, not
            # first: a `json.py` in the project's folder must not shadow the standard
            # library's, or any installed module, for the rest of the process.
            sys.path.append(str(folder))
    importlib.invalidate_caches()
    try:
        module = importlib.import_module(name)
    except Exception as error:  # whatever the module raised while it ran
        raise ToolSourceError(
            f"module {name!r} failed to import: {type(error).__name__}: {error}"
        ) from error
    if local is not None:
        _refuse_collision(top, local)
    return module


def unload_python_sources(folder: Path, modules: Iterable[str]) -> None:
    """Forget these modules (those from `folder`) and `folder`'s path entry."""
    tops = {name.split(".")[0] for name in modules}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] not in tops:
            continue
        origin = _module_origin(module)
        if origin is not None and origin.is_relative_to(folder):
            del sys.modules[name]
    sys.path[:] = [entry for entry in sys.path if entry != str(folder)]
    importlib.invalidate_caches()


def _refuse_collision(top: str, local: Path) -> None:
    existing = sys.modules.get(top)
    if existing is None:
        return
    origin = _module_origin(existing)
    if origin != local:
        raise ToolSourceError(
            f"module {top!r} is already imported from {origin or 'elsewhere'}, not from "
            f"{local}; two projects whose tool modules share a name cannot be loaded "
            "in one process"
        )


def _local_module(folder: Path, top: str) -> Path | None:
    """The package folder or module file for `top` in the folder, if there is one."""
    for candidate in (folder / top, folder / f"{top}.py"):
        if candidate.exists():
            return candidate.resolve()
    return None


def _module_origin(module: types.ModuleType) -> Path | None:
    file = getattr(module, "__file__", None)
    if file is not None:
        path = Path(file).resolve()
        return path.parent if path.name == "__init__.py" else path
    locations = list(getattr(module, "__path__", []))
    return Path(locations[0]).resolve() if locations else None
