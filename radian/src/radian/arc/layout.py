"""Where arc keeps its files in a repository: its configuration, and the folder of the files
store (radian.arc.store) with the names in it that a reader opens. Plain paths: a command
that only reads (`radian arc status`) finds its files without loading the typed config or
records."""

from __future__ import annotations

from pathlib import Path

CONFIG_PATH = Path(".radian") / "arc.toml"
ARC_DIR = Path(".radian") / "arc"  # the files store's folder
PLANS_DIR = "plans"  # <plan>.json
RUNS_DIR = "runs"  # <task>/task.json, brief.md and the attempts
TASK_FILE = "task.json"


def plan_path(root: Path, plan: str) -> Path:
    """A plan's file, under the store's folder `root`."""
    return root / PLANS_DIR / f"{plan}.json"
