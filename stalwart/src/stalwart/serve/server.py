"""Running the app on uvicorn: one process, or several workers on one PostgreSQL record."""

from __future__ import annotations

import errno
import json
import os
import socket
import sys
from collections.abc import Callable

import uvicorn

from ..config import AgentConfig
from ..errors import AddressUnavailable
from ..texts import serve as texts
from .app import OPTIONS_ENV, create_app
from .service import Service


def run_server(
    config: AgentConfig,
    *,
    host: str,
    port: int,
    workers: int = 1,
    run_threads: int = 64,
    announce: Callable[[str], None],
) -> None:
    """Listen on host:port (0: a free port), say the address and the agent served there
    (`announce`), and serve until stopped; `AddressUnavailable` if it cannot listen there."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = _listen(family, host, port)
    bound = listening.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    said = texts.served_at(f"http://{shown}:{bound}/", config.name, workers=workers)
    if workers > 1:
        os.environ[OPTIONS_ENV] = json.dumps(
            {"config": str(config.source), "agent": config.name, "run_threads": run_threads}
        )
        announce(said)
        sys.stdout.flush()
        listening.close()
        uvicorn.run(
            "stalwart.serve.app:app_from_environment",
            factory=True,
            host=host,
            port=bound,
            workers=workers,
            log_level="warning",
            timeout_graceful_shutdown=2,
        )
        return
    svc = Service(config, run_threads=run_threads)
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(svc), log_level="warning", timeout_graceful_shutdown=2, lifespan="on"
        )
    )
    announce(said)
    sys.stdout.flush()
    server.run(sockets=[listening])


def _listen(family: socket.AddressFamily, host: str, port: int) -> socket.socket:
    """A socket bound to host:port; `AddressUnavailable` (one line, no traceback) when the
    system refuses it: a port another program listens on, a host not this machine's."""
    listening = socket.socket(family, socket.SOCK_STREAM)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((host, port))
    except OSError as error:
        listening.close()
        if error.errno == errno.EADDRINUSE:
            raise AddressUnavailable(texts.port_in_use(host, port)) from None
        reason = error.strerror or str(error)
        raise AddressUnavailable(texts.cannot_listen(host, port, reason)) from None
    # Listening before the address is said: a client that connects at once waits in the
    # backlog until the server accepts, never meets a refusal (uvicorn listens again, a no-op).
    listening.listen(socket.SOMAXCONN)
    return listening
