"""Who is signed in: a small, pluggable authentication, and the anti-forgery tokens.

An `Authenticator` names the user of a request, or None. Two ship:

- `CookieLogin` (the default, for one machine): a login form checks a name and password
  against the users file (`users.Users`, scrypt verifiers) and sets a signed cookie
  (itsdangerous, HMAC-SHA-256 over the secret; it expires after `max_age_secs`).
- `ProxyHeader`: a reverse proxy that has authenticated the person names them in a
  header (`X-Forwarded-User`, say). Use it only behind a proxy that removes that header
  from what clients send: whoever can reach the server directly can claim any name.

Anything with `user(request) -> str | None` and `login_form: bool` plugs in
(`create_app(authenticator=...)`).

The operator signs in separately, with the operator token (checked by the library,
see `operator.py`); the operator's cookie says only "operator", never the token.

Forgery: every form and every API call that changes something carries a token (a form
field `csrf`, or the header `X-CSRF-Token`) that is an HMAC of the sign-in it belongs to;
a page of another site cannot read it, so it cannot send it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from itsdangerous import BadSignature, URLSafeTimedSerializer
from starlette.requests import Request

from .users import Users

USER_COOKIE = "stalwart_user"
OPERATOR_COOKIE = "stalwart_operator"
OPERATOR = "operator"  # the name shown for operator actions in the record
CSRF_FIELD = "csrf"
CSRF_HEADER = "X-CSRF-Token"


class Authenticator(Protocol):
    login_form: bool

    def user(self, request: Request) -> str | None: ...


class Signer:
    """Signs cookies and derives anti-forgery tokens from one secret."""

    def __init__(self, secret: bytes, *, max_age_secs: int = 12 * 3600) -> None:
        self._secret = secret
        self.max_age_secs = max_age_secs
        self._cookies = URLSafeTimedSerializer(secret, salt="stalwart-serve-cookie")

    def sign(self, value: dict[str, str]) -> str:
        return self._cookies.dumps(value)

    def read(self, cookie: str | None) -> dict[str, str] | None:
        if not cookie:
            return None
        try:
            value = self._cookies.loads(cookie, max_age=self.max_age_secs)
        except BadSignature:
            return None
        return value if isinstance(value, dict) else None

    def csrf(self, *parts: str) -> str:
        message = "\x00".join(("csrf", *parts)).encode("utf-8", "surrogatepass")
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()

    def csrf_ok(self, given: str | None, *parts: str) -> bool:
        return bool(given) and hmac.compare_digest(str(given), self.csrf(*parts))


def load_secret(env: str | None, folder: Path, stem: str) -> bytes:
    """The signing secret: the variable `env` names, else a 0600 file beside agent.yaml.

    Every worker of one machine reads the same file; workers on several machines need
    the variable, the same everywhere.
    """
    name = env or "STALWART_SECRET"
    value = os.environ.get(name)
    if value:
        return value.encode("utf-8")
    path = folder / f".{stem}.secret"
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes()
    with os.fdopen(descriptor, "wb") as out:
        out.write(secrets.token_hex(32).encode("ascii"))
    return path.read_bytes()


@dataclass
class CookieLogin:
    """The login form and its signed cookie, backed by the users file."""

    users: Users
    signer: Signer
    login_form: bool = True

    def user(self, request: Request) -> str | None:
        value = self.signer.read(request.cookies.get(USER_COOKIE))
        return value.get("u") if value else None

    def nonce(self, request: Request) -> str:
        value = self.signer.read(request.cookies.get(USER_COOKIE))
        return value.get("n", "") if value else ""

    def sign_in(self, name: str, password: str) -> str | None:
        """The cookie for a name and password that match; None otherwise."""
        if not self.users.check(name, password):
            return None
        return self.signer.sign({"u": name, "n": secrets.token_hex(8)})


@dataclass
class ProxyHeader:
    """The user a trusted reverse proxy names in `header`."""

    header: str
    login_form: bool = False

    def user(self, request: Request) -> str | None:
        value = request.headers.get(self.header, "").strip()
        return value or None
