"""What every route needs: the service, who is signed in, the anti-forgery check, and
how a stalwart error becomes an HTTP status."""

from __future__ import annotations

import asyncio
import secrets
from concurrent.futures import Future
from typing import TypeVar

from starlette.requests import Request

from ..errors import (
    AnswerError,
    ConfigError,
    CsrfRefused,
    InputRefused,
    NotSignedIn,
    NotYourSession,
    OperatorTokenError,
    QuestionPending,
    RewindRefused,
    StalwartError,
)
from ..record import SessionBusy
from ..texts import serve as texts
from .auth import CSRF_HEADER, OPERATOR_COOKIE, CookieLogin
from .service import Service

T = TypeVar("T")

STATUS: tuple[tuple[type[StalwartError], int], ...] = (
    (NotYourSession, 404),  # SessionNotFound is the same class
    (InputRefused, 422),
    (NotSignedIn, 401),
    (CsrfRefused, 403),
    (OperatorTokenError, 403),
    (QuestionPending, 409),
    (RewindRefused, 409),
    (AnswerError, 409),  # StaleAnswer too
    (SessionBusy, 503),
    (ConfigError, 500),
)


def status_of(error: StalwartError) -> int:
    return next((status for kind, status in STATUS if isinstance(error, kind)), 400)


def service(request: Request) -> Service:
    found: Service = request.app.state.service
    return found


def user_of(request: Request) -> str | None:
    return service(request).auth.user(request)


def require_user(request: Request) -> str:
    user = user_of(request)
    if user is None:
        raise NotSignedIn(texts.NOT_SIGNED_IN)
    return user


def csrf_token(request: Request, user: str) -> str:
    auth = service(request).auth
    nonce = auth.nonce(request) if isinstance(auth, CookieLogin) else ""
    return service(request).signer.csrf("user", user, nonce)


def check_csrf(request: Request, user: str, given: str | None) -> None:
    _check_token(request, csrf_token(request, user), given)


def _check_token(request: Request, expected: str, given: str | None) -> None:
    """The form's token, else the X-CSRF-Token header, must be `expected`."""
    token = given or request.headers.get(CSRF_HEADER)
    if not secrets.compare_digest(str(token or ""), expected):
        raise CsrfRefused(texts.CSRF_REFUSED)


def operator_nonce(request: Request) -> str | None:
    value = service(request).signer.read(request.cookies.get(OPERATOR_COOKIE))
    return value.get("n") if value and value.get("op") == "1" else None


def require_operator(request: Request) -> str:
    nonce = operator_nonce(request)
    if nonce is None:
        raise NotSignedIn(texts.OPERATOR_ONLY)
    return nonce


def operator_csrf(request: Request, nonce: str) -> str:
    return service(request).signer.csrf("operator", nonce)


def check_operator_csrf(request: Request, nonce: str, given: str | None) -> None:
    _check_token(request, operator_csrf(request, nonce), given)


def wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/") or "application/json" in request.headers.get(
        "accept", ""
    )


async def finished(future: Future[T]) -> T:
    """The run thread's result, awaited without holding a thread of the server's."""
    return await asyncio.wrap_future(future)
