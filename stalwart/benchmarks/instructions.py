"""Instructions per order, counted by callgrind: `make bench-instructions`.

`run.py`'s two scenarios on the shop's desk (examples/shop), the failed order and the
happy order, each run as a person runs one (the turn, then every confirmation approved)
on an in-memory record (`open_store(":memory:")`), so no disk and no clock is measured:
only the work the four calls of an order (chat and three confirms) do. Each scenario runs
under `valgrind --tool=callgrind` twice, with `PYTHONHASHSEED=0`: once with 20 warm-up
orders alone, once with the same warm-up and `--orders` orders more (10 by default); the
difference of the two totals, divided by `--orders`, is what one order costs, start-up,
imports and warm-up left out (and the full collections of the warm-up's objects, which are
frozen after it: see `_child`). The count holds from one run to the next on a loaded machine
(it counts instructions, not time): the figure to compare before and after a change of the
hot path (`--source` measures another checkout's stalwart folder with these scenarios).

Needs valgrind (`apt-get install valgrind`); each scenario takes a few minutes.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WARM_UP_ORDERS = 20


def _child(orders: int, scenario_index: int, source: Path) -> None:
    """Run the warm-up and `orders` orders of one scenario (inside callgrind)."""
    sys.path[:0] = [str(source / "src"), str(source / "benchmarks")]
    import run as bench  # the benchmark's scenarios and its order, as a person runs one

    from stalwart import Agent
    from stalwart.record import open_store

    desk = Agent.from_file(bench.SHOP / "agent.yaml", store=open_store(":memory:"))
    calls = bench._shop_calls()
    scenario = bench.SCENARIOS[scenario_index]
    for number in range(WARM_UP_ORDERS):
        bench._order(desk, scenario, f"user-{number}")
        calls.clear()
    # A full collection walks every object the process holds (about 60,000 after the
    # warm-up: some 19 M instructions) and falls once in about 40 orders, wherever the heap's
    # growth puts it: inside one window and not another, it moved a window of 10 orders by
    # 1.9 M instructions an order. The warm-up's objects are frozen, so a collection in the
    # window walks only what the counted orders made.
    gc.collect()
    gc.freeze()
    for number in range(WARM_UP_ORDERS, WARM_UP_ORDERS + orders):
        bench._order(desk, scenario, f"user-{number}")
        calls.clear()


def _count(orders: int, scenario_index: int, source: Path, cache: Path) -> int:
    """The instructions callgrind counts for the warm-up and `orders` orders, the modules'
    bytecode read from `cache` (filled beforehand, so neither run compiles anything)."""
    with tempfile.TemporaryDirectory(prefix="stalwart-callgrind-") as folder:
        out = Path(folder) / "callgrind.out"
        command = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            *_child_command(orders, scenario_index, source),
        ]
        subprocess.run(command, check=True, env=_env(cache), capture_output=True)
        text = out.read_text()
    match = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
    if match is None:
        raise SystemExit(f"no total in callgrind's output {out}")
    return int(match.group(1))


def _child_command(orders: int, scenario_index: int, source: Path) -> list[str]:
    return [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        str(orders),
        "--scenario",
        ("failed", "happy")[scenario_index],
        "--source",
        str(source),
    ]


def _env(cache: Path) -> dict[str, str]:
    """A fixed hash seed; bytecode kept apart from the checkout's own `__pycache__`."""
    return {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPYCACHEPREFIX": str(cache)}


def per_order(scenario_index: int, orders: int, source: Path) -> float:
    """Instructions one order of the scenario costs: (I(orders) - I(0)) / orders.

    Both runs read the bytecode a first run without callgrind wrote: a module compiled
    in one run and not the other would count its compiling as the orders' work."""
    with tempfile.TemporaryDirectory(prefix="stalwart-pycache-") as cache:
        command = _child_command(0, scenario_index, source)
        subprocess.run(command, check=True, env=_env(Path(cache)), capture_output=True)
        low = _count(0, scenario_index, source, Path(cache))
        high = _count(orders, scenario_index, source, Path(cache))
    return (high - low) / orders


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--orders", type=int, default=10, help="orders counted (10)")
    parser.add_argument(
        "--scenario",
        choices=("failed", "happy", "both"),
        default="both",
        help="the failed order, the happy order, or both (both)",
    )
    parser.add_argument(
        "--source",
        type=Path,
        default=HERE.parent,
        help="the stalwart folder measured (its src/ and benchmarks/): this one by default",
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    scenarios = {"failed": [0], "happy": [1], "both": [0, 1]}[options.scenario]
    if options.child is not None:
        _child(options.child, scenarios[0], options.source)
        return 0
    if options.orders < 1:
        parser.error("--orders must be 1 or more")
    if shutil.which("valgrind") is None:
        print("valgrind not found: install it (apt-get install valgrind) to count instructions")
        return 1
    source = options.source.resolve()
    print(
        f"instructions per order, counted by callgrind: {options.orders} orders after "
        f"{WARM_UP_ORDERS} warm-up, PYTHONHASHSEED=0, in-memory record; stalwart from {source}",
        flush=True,
    )
    for index in scenarios:
        count = per_order(index, options.orders, source)
        name = ("failed order", "happy order")[index]
        print(f"  {name}: {count:,.0f} instructions per order", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
