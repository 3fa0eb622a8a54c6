"""`radian arc serve`: the app on uvicorn, listening where it was told, or one clear line."""

from __future__ import annotations

import errno
import socket
import sys
from collections.abc import Callable
from types import FrameType

import uvicorn

from radian.arc import texts
from radian.arc.errors import UsageError
from radian.arc.serve.access import check_token
from radian.arc.serve.app import create_app
from radian.arc.serve.fleet import Fleet


class AddressUnavailable(UsageError):
    """The system refuses the address (a port in use, a host not this machine's): exit 2."""


class _Server(uvicorn.Server):
    """uvicorn's server, which ends the pages' event streams when told to stop (Ctrl-C,
    SIGTERM), so a page left open never holds the stop for the graceful timeout."""

    def __init__(self, config: uvicorn.Config, fleet: Fleet) -> None:
        super().__init__(config)
        self.fleet = fleet

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.fleet.close()
        super().handle_exit(sig, frame)


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to host:port (0: a free port); AddressUnavailable when refused."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((host, port))
        # listening before the address is announced: a client told it is never refused
        listening.listen(2048)
    except OSError as refused:
        listening.close()
        if refused.errno == errno.EADDRINUSE:
            raise AddressUnavailable(texts.serve_port_in_use(host, port)) from None
        reason = refused.strerror or str(refused)
        raise AddressUnavailable(texts.serve_cannot_listen(host, port, reason)) from None
    return listening


def url_of(host: str, listening: socket.socket) -> str:
    port = listening.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def run_server(
    fleet: Fleet,
    *,
    host: str,
    port: int,
    token: str | None,
    announce: Callable[[str], None],
) -> None:
    """Serve `fleet` on host:port until stopped (Ctrl-C, SIGTERM); `announce` is told the
    address once it listens. UsageError for a host other than 127.0.0.1 without a token."""
    check_token(host, token)
    listening = listen(host, port)
    server = _Server(
        uvicorn.Config(
            create_app(fleet, token=token),
            log_level="warning",
            timeout_graceful_shutdown=2,
            lifespan="off",
        ),
        fleet,
    )
    announce(url_of(host, listening))
    sys.stdout.flush()
    try:
        server.run(sockets=[listening])
    finally:
        listening.close()
