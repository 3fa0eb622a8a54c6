"""Who may read the fleet: anyone on this machine when served on 127.0.0.1 alone; with a
token, whoever sends it (Authorization: Bearer <token>, or the cookie `/?token=` sets).

The cookie holds a keyed hash of the token, never the token itself. Without a token the
server answers only requests addressed to 127.0.0.1 or localhost, so a web page elsewhere
cannot read it through a name that resolves to 127.0.0.1 (DNS rebinding).
"""

from __future__ import annotations

import hashlib
import hmac

from radian.arc import texts
from radian.arc.errors import UsageError

LOOPBACK = "127.0.0.1"
LOCAL_NAMES = frozenset({"127.0.0.1", "localhost"})
COOKIE = "radian_arc_token"


def check_token(host: str, token: str | None) -> None:
    """UsageError (exit 2, one line) when `host` is not 127.0.0.1 and there is no token."""
    if host != LOOPBACK and not token:
        raise UsageError(texts.serve_needs_token(host))


def cookie_value(token: str) -> str:
    return hmac.new(token.encode(), b"radian arc serve cookie", hashlib.sha256).hexdigest()


def same(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def bearer(header: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header."""
    if header is None:
        return None
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


def local_host(header: str | None) -> bool:
    """Whether a Host header names this machine's loopback (any port)."""
    if not header:
        return False
    name = header.rsplit(":", 1)[0] if header.count(":") == 1 else header
    return name.lower() in LOCAL_NAMES
