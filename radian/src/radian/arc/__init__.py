"""radian arc: a supervisor for coding agents working through a plan of tasks.

The public API is what `__all__` lists; everything else is internal and may change. Names
are loaded on first use, so the wrapper (started once per attempt, importing
radian.arc.worker) does not pay for pydantic and the loop at start-up.

arc logs through `logging.getLogger("radian.arc")` (claims, retries, waits, recovery) and is
silent until the application configures logging (radian.arc.logs, loaded by the modules that
log: the wrapper does not load logging).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from radian.arc.clock import Clock, FakeClock, SystemClock
    from radian.arc.commands import (
        add_plan,
        add_task,
        cancel,
        confirm,
        init,
        load_plan_file,
        reset_budget,
        rework,
        set_plan_auto,
    )
    from radian.arc.config import ArcConfig, load_config
    from radian.arc.errors import (
        ArcError,
        ConfigError,
        IllegalTransition,
        NotFoundError,
        UsageError,
    )
    from radian.arc.events import Event
    from radian.arc.loop import Loop, RunReport
    from radian.arc.records import Plan, Task
    from radian.arc.results import CommandResult
    from radian.arc.states import State
    from radian.arc.store import ArcStore

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "ArcConfig": "radian.arc.config",
    "load_config": "radian.arc.config",
    "ArcStore": "radian.arc.store",
    "Plan": "radian.arc.records",
    "Task": "radian.arc.records",
    "State": "radian.arc.states",
    "Clock": "radian.arc.clock",
    "SystemClock": "radian.arc.clock",
    "FakeClock": "radian.arc.clock",
    "Loop": "radian.arc.loop",
    "RunReport": "radian.arc.loop",
    "Event": "radian.arc.events",
    "CommandResult": "radian.arc.results",
    "ArcError": "radian.arc.errors",
    "UsageError": "radian.arc.errors",
    "ConfigError": "radian.arc.errors",
    "NotFoundError": "radian.arc.errors",
    "IllegalTransition": "radian.arc.errors",
    "init": "radian.arc.commands",
    "add_plan": "radian.arc.commands",
    "add_task": "radian.arc.commands",
    "load_plan_file": "radian.arc.commands",
    "confirm": "radian.arc.commands",
    "cancel": "radian.arc.commands",
    "rework": "radian.arc.commands",
    "reset_budget": "radian.arc.commands",
    "set_plan_auto": "radian.arc.commands",
}

__all__ = [
    "ArcConfig",
    "ArcError",
    "ArcStore",
    "Clock",
    "CommandResult",
    "ConfigError",
    "Event",
    "FakeClock",
    "IllegalTransition",
    "Loop",
    "NotFoundError",
    "Plan",
    "RunReport",
    "State",
    "SystemClock",
    "Task",
    "UsageError",
    "add_plan",
    "add_task",
    "cancel",
    "confirm",
    "init",
    "load_config",
    "load_plan_file",
    "reset_budget",
    "rework",
    "set_plan_auto",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
