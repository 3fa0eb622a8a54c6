"""The HTTP skeleton every provider stand-in in these tests shares.

A threaded server on 127.0.0.1 (a free port), started and stopped as a context manager. Each
request is handed to the stand-in's `respond` as an `Exchange`: the method, the path, the
JSON body, and the ways a provider answers here: a JSON body, a stream of server-sent events,
a stream that never says a word, or no answer at all until the stand-in stops. What a
stand-in says is its own; how it is put on the wire is here, once.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Exchange:
    """One request and its answer."""

    def __init__(self, handler: BaseHTTPRequestHandler, method: str, body: Any) -> None:
        self._handler = handler
        self.method = method
        self.path = handler.path
        self.body = body

    def json(self, status: int, value: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(value).encode()
        self._start(
            status, "application/json", {"content-length": str(len(data)), **(headers or {})}
        )
        self._handler.wfile.write(data)

    def events(
        self, events: Iterable[Mapping[str, Any]], headers: Mapping[str, str] | None = None
    ) -> None:
        """A server-sent event stream, each event named by its own `type`, then the end."""
        self._start(200, "text/event-stream", {"cache-control": "no-cache", **(headers or {})})
        for event in events:
            chunk = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
            self._handler.wfile.write(chunk.encode())
            self._handler.wfile.flush()
        self._handler.close_connection = True

    def hang(self, stopping: threading.Event, headers: Mapping[str, str] | None = None) -> None:
        """Send a stream's headers, then nothing until the stand-in stops."""
        self._start(200, "text/event-stream", {"cache-control": "no-cache", **(headers or {})})
        self._handler.wfile.flush()
        stopping.wait()
        self._handler.close_connection = True

    def no_answer(self, stopping: threading.Event) -> None:
        """Say nothing at all, not even a status line, until the stand-in stops."""
        stopping.wait()
        self._handler.close_connection = True

    def _start(self, status: int, content_type: str, headers: Mapping[str, str]) -> None:
        self._handler.send_response(status)
        self._handler.send_header("content-type", content_type)
        for name, value in headers.items():
            self._handler.send_header(name, value)
        self._handler.end_headers()


class StandInServer:
    """Serves `respond` on 127.0.0.1 from a daemon thread; `paths` keeps "METHOD /path" of
    every request, and `stopping` is set when the stand-in stops (hung requests end then)."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> StandInServer:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def respond(self, exchange: Exchange) -> None:
        raise NotImplementedError


def _handler_for(stand_in: StandInServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def do_GET(self) -> None:  # noqa: N802
            self._exchange("GET", None)

        def do_POST(self) -> None:  # noqa: N802
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {}
            self._exchange("POST", body)

        def _exchange(self, method: str, body: Any) -> None:
            with stand_in._lock:
                stand_in.paths.append(f"{method} {self.path}")
            stand_in.respond(Exchange(self, method, body))

    return Handler
