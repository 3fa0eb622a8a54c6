"""Running the app on uvicorn: one process, or several workers on one PostgreSQL record."""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Callable

import uvicorn

from ..config import AgentConfig
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
    """Listen on host:port (0: a free port), say the address, and serve until stopped."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listening.bind((host, port))
    bound = listening.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    if workers > 1:
        os.environ[OPTIONS_ENV] = json.dumps(
            {"config": str(config.source), "agent": config.name, "run_threads": run_threads}
        )
        announce(f"http://{shown}:{bound}/")
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
    announce(f"http://{shown}:{bound}/")
    sys.stdout.flush()
    server.run(sockets=[listening])
