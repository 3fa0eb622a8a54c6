"""The ASGI app: `create_app(service)`, pages and the JSON API over one `Service`."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import logs
from ..config import load_agent
from ..errors import NotSignedIn, StalwartError
from ..texts import logs as logtexts
from . import api, pages
from .service import Service
from .web import status_of, wants_json

# `stalwart serve --workers N` starts each worker from this variable: a JSON object of
# the options `stalwart serve` was given (see cli.py).
OPTIONS_ENV = "STALWART_SERVE_OPTIONS"

log = logging.getLogger(logs.SERVE)


def create_app(
    svc: Service, *, own: bool = True, now: Callable[[], float] | None = None
) -> FastAPI:
    """The app serving `svc`; with `own`, the app starts it and closes it with itself.

    Each request is logged when answered (`texts.logs.REQUEST`: method, path, status and
    the milliseconds taken, read from `now`, by default the service's clock)."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if own:
            svc.start()
        try:
            yield
        finally:
            if own:
                svc.close()

    app = FastAPI(
        title=f"stalwart · {svc.agent.name}",
        description="The person's confirmations, answers and records (chapter 35).",
        lifespan=lifespan,
    )
    app.state.service = svc
    app.add_middleware(RequestLog, now=now or svc.clock.now)
    app.include_router(api.router)
    app.include_router(pages.router)
    app.mount("/static", StaticFiles(directory=str(Path(__file__).parent / "static")), "static")

    @app.exception_handler(StalwartError)
    async def stalwart_error(request: Request, error: StalwartError) -> Response:
        return _error(request, error.code, str(error), status_of(error), error)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> Response:
        first = error.errors()[0] if error.errors() else {}
        where = ".".join(str(part) for part in first.get("loc", ()))
        message = f"{where}: {first.get('msg', 'invalid request')}"
        return _error(request, "invalid_request", message, 422, None)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> Response:
        code = "not_found" if error.status_code == 404 else f"http_{error.status_code}"
        return _error(request, code, str(error.detail), error.status_code, None)

    return app


class RequestLog:
    """Logs each request once answered: method, path, status, milliseconds (at INFO, on
    `stalwart.serve`). A stream (the pages' events) is logged when it ends; a request the
    app failed on is logged with 500 before the error goes on."""

    def __init__(self, app: ASGIApp, now: Callable[[], float]) -> None:
        self.app = app
        self.now = now

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = self.now()
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            taken = (self.now() - began) * 1000
            log.info(logtexts.REQUEST, scope["method"], scope["path"], status, taken)


def _error(
    request: Request, code: str, message: str, status: int, error: StalwartError | None
) -> Response:
    if wants_json(request):
        return JSONResponse({"code": code, "message": message}, status_code=status)
    if isinstance(error, NotSignedIn):
        path = request.url.path
        return RedirectResponse("/operator" if path.startswith("/operator") else "/login", 303)
    parts = request.url.path.split("/")
    back = f"/s/{parts[2]}" if len(parts) > 2 and parts[1] == "s" else None
    return pages.page(request, "error.html", status, code=code, message=message, back=back)


def app_from_environment() -> FastAPI:
    """The app of one worker started by `stalwart serve --workers N` (uvicorn's factory)."""
    import json

    logs.serve_to_stderr()  # a worker process is the CLI's too
    options: dict[str, Any] = json.loads(os.environ[OPTIONS_ENV])
    config = load_agent(options["config"], options.get("agent"))
    svc = Service(config, run_threads=options.get("run_threads", 64))
    return create_app(svc)
