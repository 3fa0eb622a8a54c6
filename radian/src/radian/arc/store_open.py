"""Which store a repository's arc uses: RADIAN_ARC_STORE when set, else `[store] url` of
.radian/arc.toml, else the files under `.radian/arc/` (radian.arc.store, the embedded
default for one host). A postgresql:// URL opens radian.arc.store_postgres (the postgres
extra)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from radian.arc.errors import ConfigError
from radian.arc.layout import CONFIG_PATH
from radian.arc.store_plain import PlainFiles
from radian.arc.texts import store_needs_psycopg, store_unreachable, unknown_store_url

if TYPE_CHECKING:
    from radian.arc.status import Readable
    from radian.arc.store import ArcStore
    from radian.arc.store_protocol import Store

STORE_VARIABLE = "RADIAN_ARC_STORE"


def _config_table(repo_root: Path, name: str) -> dict[str, Any]:
    """A table of .radian/arc.toml as written; empty when the file cannot be read (the
    command's own load of it says why)."""
    path = Path(repo_root) / CONFIG_PATH
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    table = data.get(name)
    return table if isinstance(table, dict) else {}


def store_url(repo_root: Path) -> tuple[str, str] | None:
    """(where it was said, the URL) of the store to use; None for the files."""
    chosen = os.environ.get(STORE_VARIABLE, "").strip()
    if chosen:
        return STORE_VARIABLE, chosen
    url = _config_table(repo_root, "store").get("url")
    return (f"{CONFIG_PATH}: store.url", url) if isinstance(url, str) and url else None


def open_store(repo_root: Path, url: str | None = None) -> Store:
    """The store of the repository at `repo_root` (`url` instead of the one configured)."""
    said = ("url", url) if url is not None else store_url(repo_root)
    if said is None:
        return _files(repo_root)
    source, chosen = said
    if not chosen.startswith(("postgresql://", "postgres://")):
        raise ConfigError(unknown_store_url(source, chosen))
    try:
        import psycopg

        from radian.arc.store_postgres import PostgresStore
    except ImportError as error:
        raise ConfigError(store_needs_psycopg(str(error))) from None
    name = _config_table(repo_root, "hosts").get("name")
    lease = _config_table(repo_root, "store").get("lease_secs")
    try:
        return PostgresStore(
            repo_root,
            chosen,
            host=name if isinstance(name, str) and name else None,
            lease_secs=float(lease) if isinstance(lease, int | float) and lease > 0 else 60.0,
        )
    except psycopg.OperationalError as error:
        raise ConfigError(store_unreachable(str(error).strip())) from None


def _files(repo_root: Path) -> ArcStore:
    # Imported when a store is opened: reading plainly (open_reader) needs none of it.
    from radian.arc.store import ArcStore

    return ArcStore(repo_root)


def open_reader(repo_root: Path) -> Readable[Any]:
    """What a command that only reads every plan and task (`radian arc status`) reads: when
    the files are the store, the files read plainly (radian.arc.store_plain), the typed store
    opened only for a plan file not as arc writes it; else the store configured."""
    if store_url(repo_root) is not None:
        return open_store(repo_root)
    return PlainFiles(repo_root, typed=lambda: _files(repo_root))
