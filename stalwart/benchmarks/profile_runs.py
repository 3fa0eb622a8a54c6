"""Where a run's time goes: `python stalwart/benchmarks/run.py --profile`.

Runs a scenario under cProfile and adds up each function's own time by where it lives:
a stalwart module, a standard library module, or a C method (`sqlite3 execute` holds the
fsync of every COMMIT, so it is the durable part). cProfile slows Python code more than C
code, so the shares lean towards Python; read them as where to look, not as the cost.
"""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Callable


def where_time_goes(run_once: Callable[[int], None], runs: int, top: int = 15) -> str:
    """Profile `run_once(number)` for `runs` numbers; the heaviest places, one per line."""
    profile = cProfile.Profile()
    profile.enable()
    for number in range(runs):
        run_once(number)
    profile.disable()
    stats: dict[tuple[str, int, str], tuple[int, int, float, float, object]]
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    by_place: dict[str, float] = {}
    for (path, _line, function), (_calls, _primitive, own, _cumulative, _callers) in stats.items():
        place = _place(path, function)
        by_place[place] = by_place.get(place, 0.0) + own
    total = sum(by_place.values())
    lines = [f"where the time of {runs} runs goes under cProfile (own time, by place):"]
    heaviest = sorted(by_place.items(), key=lambda item: -item[1])[:top]
    for place, secs in heaviest:
        lines.append(f"  {secs / runs * 1000:7.3f} ms/run  {secs / total:6.1%}  {place}")
    return "\n".join(lines)


def _place(path: str, function: str) -> str:
    if path == "~":  # a C function or method: name it, it is often the whole story
        return function.strip("<>").replace("method ", "").replace("built-in ", "")
    for marker in ("/src/", "/lib/python3"):
        if marker in path:
            tail = path.split(marker, 1)[1]
            return tail.split("/", 1)[1] if marker == "/lib/python3" else tail
    return path
