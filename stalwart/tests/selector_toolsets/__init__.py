"""Tool sets the selector is tested on: the shop's, and three that have nothing to do with it.

Each module defines its tools with `@tool`; `specs(module)` gives their ToolSpecs in the
order they are defined.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

from stalwart.tools import ToolSpec, tools_in_module

SHOP_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"


def specs(module: types.ModuleType) -> list[ToolSpec]:
    return list(tools_in_module(module).values())


def shop_specs() -> list[ToolSpec]:
    """The shop's desk tools from chapter 34, imported from the example itself."""
    if str(SHOP_EXAMPLE) not in sys.path:
        sys.path.insert(0, str(SHOP_EXAMPLE))
    from shop import tools

    return specs(tools)
