"""A real HTTP service on 127.0.0.1 that charges a card and then loses the answer.

Each request is read whole (headers and body), the charge is kept in `charges`, and then
the connection is answered as `mode` says:

- "reset": no answer at all; the connection is reset (an RST, SO_LINGER 0);
- "chunked_reset": the status line, headers and one chunk of a chunked body, then a reset;
- "ok": a whole JSON answer;
- "reset_once": the first request is charged and reset; every later one gets a whole
  answer, charged once per idempotency key (the request body's "key"), as a service that
  honours keys answers a retry: `applied` maps each key to its charge.

`refused_url()` is a URL on a port nothing listens on (the connection is refused).
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class ChargingServer:
    url: str
    mode: str = "reset"
    charges: list[bytes] = field(default_factory=list)
    applied: dict[str, str] = field(default_factory=dict)  # "reset_once": key -> its charge


def _read_request(connection: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = connection.recv(65536)
        if not chunk:
            break
        body += chunk
    return body


def _reset(connection: socket.socket) -> None:
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()


def _serve(listener: socket.socket, server: ChargingServer) -> None:
    while True:
        try:
            connection, _ = listener.accept()
        except OSError:
            return  # the listener was closed
        with connection:
            body = _read_request(connection)
            server.charges.append(body)
            if server.mode == "reset_once":
                key = str(json.loads(body or b"{}").get("key"))
                charge = server.applied.setdefault(key, f"ch-{len(server.applied) + 1}")
                if len(server.charges) == 1:
                    _reset(connection)
                else:
                    _answer(connection, {"charge": charge})
            elif server.mode == "reset":
                _reset(connection)
            elif server.mode == "chunked_reset":
                connection.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b'Transfer-Encoding: chunked\r\n\r\n5\r\n{"ch"\r\n'
                )
                _reset(connection)
            else:
                _answer(connection, {"charge": f"ch-{len(server.charges)}"})


def _answer(connection: socket.socket, answer: dict[str, str]) -> None:
    body = json.dumps(answer).encode()
    connection.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )


@contextmanager
def charging_server(mode: str = "reset") -> Iterator[ChargingServer]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    host, port = listener.getsockname()
    server = ChargingServer(url=f"http://{host}:{port}/charge", mode=mode)
    thread = threading.Thread(target=_serve, args=(listener, server), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() on Linux
        listener.close()
        thread.join(timeout=5)


def refused_url() -> str:
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]
    return f"http://127.0.0.1:{port}/charge"
