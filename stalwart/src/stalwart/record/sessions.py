"""A session's id in the record, made from the user it belongs to and its name.

A user's sessions are theirs by construction: the id of `session="orders"` for bob is not
the id of alice's session "orders", nor of alice's default session, so no name a user
passes can reach another user's record (issue 11, point 2). Both parts are
percent-encoded (`~` too, which `quote` would leave), so the separator `~` is never inside
a part and no two (user, name) pairs share an id; a user's default session is the encoded
user alone. `~` is unreserved in a URL, so an id of plain names is its own URL path part
(`/s/alice~s-1f0c`).
"""

from __future__ import annotations

from urllib.parse import quote, unquote

SEPARATOR = "~"


def session_id(user: str, name: str | None = None) -> str:
    """The record's id of `user`'s session `name` (None: the user's default session)."""
    owner = _encode(user)
    return owner if name is None else f"{owner}{SEPARATOR}{_encode(name)}"


def split_session_id(sid: str) -> tuple[str, str | None]:
    """(user, name) of a session id `session_id` made; name None for a default session."""
    owner, separator, name = sid.partition(SEPARATOR)
    return unquote(owner), (unquote(name) if separator else None)


def _encode(part: str) -> str:
    return quote(part, safe="").replace(SEPARATOR, "%7E")
