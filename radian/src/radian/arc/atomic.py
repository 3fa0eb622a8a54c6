"""Atomic files: a reader, or a process killed at any moment, sees the old file or the new one.

A write goes to a temporary file in the same folder, is fsynced and renamed over the old
file, and the folder is fsynced. This module imports nothing of arc's records (no pydantic),
so the wrapper, started once per attempt, can use it without paying for them at start-up.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_json_atomic(path: Path, data: Any, *, compact: bool = False) -> None:
    # allow_nan=False: a NaN or an infinity is refused here rather than written as
    # non-standard JSON that other readers reject.
    text = json.dumps(data, indent=None if compact else 2, allow_nan=False)
    write_text_atomic(path, text + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    import tempfile  # here: a command that only reads (`radian arc status`) never loads it

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def fsync_dir(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def read_json(path: Path) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))
