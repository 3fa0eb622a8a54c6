"""The ASGI app of `radian arc serve`: the fleet's page, live through server-sent events of
rendered HTML, and the JSON API beside it (in the spirit of OpenAI Symphony's):

- `GET /api/v1/state`: the status document, the running attempts, the recent failures;
- `GET /api/v1/tasks/<task>`: `radian arc show <task> --json`'s document (404 if unknown);
- `POST /api/v1/refresh`: read again now and wake the page's event streams (202).

Read-only: nothing here writes one of arc's files. An error is `{"error": {"code",
"message"}}`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from radian.arc import texts
from radian.arc.clock import format_utc
from radian.arc.errors import ArcError, NotFoundError
from radian.arc.serve import access
from radian.arc.serve.fleet import WAITING_SHOWN, Fleet, FleetState
from radian.arc.states import State

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=str(HERE / "templates"))
templates.env.globals.update(
    no_plans=texts.STATUS_NO_PLANS,
    no_running=texts.SERVE_NO_RUNNING,
    no_failures=texts.SERVE_NO_FAILURES,
    nobody_waits=texts.SERVE_NOBODY_WAITS,
    state_names=[str(state) for state in State],
    waiting_shown=WAITING_SHOWN,
    more_waiting=texts.serve_more_waiting,
)
templates.env.filters.update(
    usd=lambda value: "-" if value is None else f"${value:.2f}",
    elapsed=texts.elapsed,
)


def error(code: str, message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def create_app(fleet: Fleet, *, token: str | None = None) -> FastAPI:
    """The app over `fleet`; with `token`, every request must carry it."""
    app = FastAPI(
        title=f"radian arc · {fleet.repo_name}",
        description="The fleet of radian arc, read-only: its state, a task, a refresh.",
        docs_url=None,
        redoc_url=None,
    )
    app.state.fleet = fleet

    @app.get("/", include_in_schema=False)
    def home(request: Request) -> Response:
        return templates.TemplateResponse(request, "index.html", _context(fleet, fleet.state()))

    @app.get("/events", include_in_schema=False)
    def events(request: Request) -> Response:
        return StreamingResponse(
            _stream(request, fleet),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    @app.get("/api/v1/state")
    def state() -> dict[str, Any]:
        return fleet.state().document()

    @app.get("/api/v1/tasks/{task}")
    def task(task: str) -> Response:
        try:
            return JSONResponse(fleet.task(task))
        except NotFoundError as refused:
            return error("task_not_found", str(refused), 404)
        except ArcError as refused:
            return error("task_unreadable", str(refused), 500)

    @app.post("/api/v1/refresh", status_code=202)
    def refresh() -> dict[str, Any]:
        requested_at = format_utc(fleet.clock.now())
        read = fleet.refresh()
        return {"queued": True, "coalesced": False, "requested_at": requested_at,
                "generated_at": read.status.at, "operations": ["read", "notify"]}  # fmt: skip

    app.mount("/static", StaticFiles(directory=str(HERE / "static")), "static")

    @app.exception_handler(HTTPException)
    async def http_error(_request: Request, raised: HTTPException) -> Response:
        code = {404: "not_found", 405: "method_not_allowed"}.get(
            raised.status_code, f"http_{raised.status_code}"
        )
        return error(code, str(raised.detail), raised.status_code)

    app.add_middleware(TokenCheck, token=token)
    return app


def _context(fleet: Fleet, read: FleetState) -> dict[str, Any]:
    return {"repo": fleet.repo_name, "fleet": read, "status": read.status}


async def _stream(request: Request, fleet: Fleet) -> AsyncIterator[str]:
    """`update` events carrying the fleet's rendered HTML, each time it changes."""
    last: str | None = None
    version = fleet.notifier.version
    while not fleet.closed:
        read = await run_in_threadpool(fleet.state)
        html = templates.get_template("_fleet.html").render(**_context(fleet, read))
        if html != last:
            last = html
            data = "\n".join(f"data: {line}" for line in html.splitlines() or [""])
            yield f"event: update\n{data}\n\n"
        version = await fleet.notifier.wait(version, fleet.poll_secs)
        if await request.is_disconnected():
            return


class TokenCheck:
    """Every request: the token (when the server has one), else a loopback Host header.

    `/?token=<token>` sets the cookie (HttpOnly, SameSite=Strict) and sends the browser to
    `/`, so the token leaves the address bar and the history."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token or None
        self.cookie = access.cookie_value(self.token) if self.token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        refused = self._refused(request)
        if refused is None and self.token and request.url.path == "/":
            given = request.query_params.get("token")
            if given is not None:
                refused = self._sign_in(given)
        if refused is not None:
            await refused(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _refused(self, request: Request) -> Response | None:
        if self.token is None or self.cookie is None:
            if access.local_host(request.headers.get("host")):
                return None
            return error("wrong_host", texts.SERVE_WRONG_HOST, 403)
        if access.same(access.bearer(request.headers.get("authorization")), self.token):
            return None
        if access.same(request.cookies.get(access.COOKIE), self.cookie):
            return None
        if request.url.path == "/" and "token" in request.query_params:
            return None  # checked by _sign_in
        response = error("unauthorized", texts.SERVE_UNAUTHORIZED, 401)
        response.headers["WWW-Authenticate"] = "Bearer"
        return response

    def _sign_in(self, given: str) -> Response:
        assert self.token is not None and self.cookie is not None
        if not access.same(given, self.token):
            response: Response = error("unauthorized", texts.SERVE_UNAUTHORIZED, 401)
            response.headers["WWW-Authenticate"] = "Bearer"
            return response
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(access.COOKIE, self.cookie, httponly=True, samesite="strict")
        return response
