"""A local HTTP server that speaks a model provider's wire format, for tests.

It answers each request with the next scripted reply (recorded shapes under
tests/wire/<provider>/<name>.json) and records every request it received, body
parsed, so a test can assert on what went over the wire: the model name, the
messages, the tools' schemas. Nothing leaves 127.0.0.1.

    def test_something(wire):
        wire.enqueue("anthropic/tool_call")
        model = load_model("anthropic:m", base_url=wire.url, api_key="k", clock=FakeClock())
        ...
        assert wire.requests[0].body["model"] == "m"
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from stalwart.backoff import Backoff, no_jitter
from stalwart.models import BackoffPolicy

WIRE_DIR = Path(__file__).parent / "wire"

# A model's waits as the schedule's ceilings (1, 2, 4 s), not random draws.
STEADY = BackoffPolicy(Backoff(jitter=no_jitter))


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    # Held: sent only when the test ends (or `release`), so the client's timeout fires
    # first; the test waits for nothing but its own timeout.
    held: bool = False


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: Mapping[str, str]
    raw: bytes

    @property
    def body(self) -> Any:
        return json.loads(self.raw) if self.raw else None


def load_reply(name: str) -> Reply:
    """A recorded reply: {"status", "headers"?, and "body" (JSON) or "raw_body" (text)}."""
    shape = json.loads((WIRE_DIR / f"{name}.json").read_text(encoding="utf-8"))
    if "raw_body" in shape:
        body = shape["raw_body"].encode("utf-8")
        content_type = "application/json"  # a malformed body that claims to be JSON
    else:
        body = json.dumps(shape["body"]).encode("utf-8")
        content_type = "application/json"
    headers = {"content-type": content_type, **shape.get("headers", {})}
    return Reply(status=shape["status"], body=body, headers=headers)


class WireServer:
    """Scripted replies out, recorded requests in; one server per test."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # A short poll keeps `stop` quick: shutdown waits for the loop's next poll.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def enqueue(self, *names: str) -> None:
        for name in names:
            self.enqueue_reply(load_reply(name))

    def enqueue_reply(self, reply: Reply) -> None:
        with self._lock:
            self._replies.append(reply)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._replies)

    def start(self) -> None:
        self._thread.start()

    def release(self) -> None:
        """Send every held reply now."""
        self._released.set()

    def stop(self) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._replies:
                return self._replies.popleft()
        # 418 is outside every retry policy, so a missing script fails the test at once.
        message = {"error": {"type": "wire_test", "message": "the wire server has no reply"}}
        return Reply(418, json.dumps(message).encode(), {"content-type": "application/json"})

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            # HTTP/1.0: one request per connection, so no socket outlives its test.
            protocol_version = "HTTP/1.0"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                recorded = RecordedRequest(
                    method=self.command,
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    raw=raw,
                )
                reply = server._next(recorded)
                if reply.held:
                    server._released.wait(timeout=30)
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first (its timeout): nobody reads the reply

            do_GET = do_POST

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        return Handler


@pytest.fixture
def wire() -> Iterator[WireServer]:
    server = WireServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def uncached(value: Any) -> Any:
    """A request's part with Anthropic's cache breakpoints (`cache_control`) left out."""
    if isinstance(value, list):
        return [uncached(item) for item in value]
    if isinstance(value, dict):
        return {k: uncached(v) for k, v in value.items() if k != "cache_control"}
    return value


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens: every connection is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# Environment variables the official clients read: a developer's own settings must not
# leak into a test (nor a test's requests leave for a real provider).
PROVIDER_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_PROFILE",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
)


@pytest.fixture
def clean_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
