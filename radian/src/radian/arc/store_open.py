"""Which store a repository's arc uses: the files under `.radian/arc/` (radian.arc.store), the
embedded default for one host."""

from __future__ import annotations

from pathlib import Path

from radian.arc.store import ArcStore
from radian.arc.store_protocol import Store


def open_store(repo_root: Path) -> Store:
    """The store of the repository at `repo_root`."""
    return ArcStore(repo_root)
