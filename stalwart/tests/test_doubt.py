"""What counts as in doubt (`_engine/doubt.py`): the whole family, from real clients.

A real HTTP service on 127.0.0.1 (tests/http_faults.py) charges and then resets the
connection; requests, httpx, urllib3, http.client and aiohttp are pointed at it, and so
is a run's tool. gRPC's deadline comes from a real gRPC server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import http.client
import socket
import subprocess
import sys
import threading
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, write_project
from http_faults import charging_server, refused_url
from hypothesis import given
from hypothesis import strategies as st

from stalwart import Agent, FakeClock
from stalwart._engine import doubt
from stalwart._engine.doubt import RULES, Says, in_doubt, in_doubt_classes
from stalwart.errors import Ambiguous, StalwartError

DOUBTFUL = [
    TimeoutError("read timed out"),  # socket.timeout and asyncio.TimeoutError are this class
    ConnectionResetError(104, "Connection reset by peer"),
    ConnectionAbortedError(),
    BrokenPipeError(32, "Broken pipe"),
    Ambiguous("the gateway does not know"),
]
DEFINITE = [
    ConnectionRefusedError(111, "Connection refused"),
    RuntimeError("provisioning service down"),
    ValueError("bad amount"),
    OSError("disk full"),
    ConnectionError("generic"),
    StalwartError("ours"),
    KeyError("order"),
]


@pytest.mark.parametrize("error", DOUBTFUL, ids=lambda e: type(e).__name__)
def test_these_failures_leave_the_effect_in_doubt(error: BaseException) -> None:
    assert in_doubt(error)


@pytest.mark.parametrize("error", DEFINITE, ids=lambda e: type(e).__name__)
def test_these_failures_are_definite(error: BaseException) -> None:
    assert not in_doubt(error)


def test_ambiguous_is_a_stalwart_error_with_a_code() -> None:
    assert issubclass(Ambiguous, StalwartError)
    assert Ambiguous.code == "ambiguous"


def _raised_from(outer: Exception, cause: BaseException) -> Exception:
    try:
        raise outer from cause
    except Exception as caught:
        return caught


def _raised_while_handling(outer: Exception, first: BaseException) -> Exception:
    try:
        try:
            raise first
        except BaseException:
            raise outer  # noqa: B904 - the implicit __context__ is the point
    except Exception as caught:
        return caught


def test_a_wrapped_timeout_is_in_doubt_through_its_explicit_cause() -> None:
    error = _raised_from(RuntimeError("refund failed"), TimeoutError())
    assert in_doubt(error)
    deeper = _raised_from(ValueError("outer"), _raised_from(RuntimeError("mid"), Ambiguous()))
    assert in_doubt(deeper)


def test_an_error_raised_while_handling_a_timeout_is_in_doubt() -> None:
    # The implicit context is walked too: requests wraps a reset there.
    assert in_doubt(_raised_while_handling(ValueError("card declined"), TimeoutError()))


def test_an_error_raised_from_none_has_said_what_happened() -> None:
    def declined() -> Exception:
        try:
            try:
                raise TimeoutError()
            except TimeoutError:
                raise ValueError("card declined") from None
        except Exception as caught:
            return caught

    assert not in_doubt(declined())


def test_the_outermost_deciding_error_wins() -> None:
    assert not in_doubt(_raised_from(ConnectionRefusedError(), TimeoutError()))
    assert in_doubt(_raised_from(TimeoutError(), ConnectionRefusedError()))


UNDECIDED = (RuntimeError, ValueError, KeyError, OSError, StalwartError)


@given(
    inner=st.sampled_from(DOUBTFUL + DEFINITE),
    wrappers=st.lists(st.sampled_from(UNDECIDED), max_size=4),
)
def test_wrapping_with_errors_that_decide_nothing_keeps_the_verdict(
    inner: BaseException, wrappers: list[type[Exception]]
) -> None:
    error: BaseException = inner
    for wrapper in wrappers:
        error = _raised_from(wrapper("wrapped"), error)
    assert in_doubt(error) == in_doubt(inner)


def test_a_cycle_in_the_cause_chain_ends() -> None:
    first, second = RuntimeError("a"), RuntimeError("b")
    first.__cause__, second.__cause__ = second, first
    assert not in_doubt(first)


def test_a_real_socket_timeout_is_in_doubt() -> None:
    # A listening socket that never answers: the read times out as a real client's would.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=0.05) as client:
            client.sendall(b"charge")
            with pytest.raises(OSError) as caught:
                client.recv(1)
    assert in_doubt(caught.value)


def test_a_real_refused_connection_is_not_in_doubt() -> None:
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]
    with pytest.raises(OSError) as caught:
        socket.create_connection(("127.0.0.1", port), timeout=1)
    assert isinstance(caught.value, ConnectionRefusedError)
    assert not in_doubt(caught.value)


def test_httpx_errors_when_httpx_is_installed() -> None:
    httpx = pytest.importorskip("httpx")
    request = httpx.Request("POST", "http://127.0.0.1/charge")
    assert in_doubt(httpx.ReadTimeout("slow", request=request))
    assert not in_doubt(httpx.ConnectTimeout("slow", request=request))  # never connected
    assert in_doubt(httpx.ReadError("reset", request=request))
    assert in_doubt(httpx.WriteError("reset", request=request))
    assert in_doubt(httpx.RemoteProtocolError("closed mid-answer", request=request))
    assert not in_doubt(httpx.ConnectError("refused", request=request))
    assert not in_doubt(httpx.HTTPStatusError("500", request=request, response=httpx.Response(500)))


def test_httpx2_errors_when_httpx2_is_installed() -> None:
    httpx2 = pytest.importorskip("httpx2")
    request = httpx2.Request("POST", "http://127.0.0.1/charge")
    assert in_doubt(httpx2.ReadTimeout("slow", request=request))
    assert in_doubt(httpx2.RemoteProtocolError("closed mid-answer", request=request))
    assert not in_doubt(httpx2.ConnectError("refused", request=request))


def test_a_library_error_is_found_by_its_module_once_imported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A stand-in module under the library's name: what in_doubt relies on is only that an
    # imported library's error classes are found in sys.modules by their names.
    library = types.ModuleType("requests.exceptions")

    class Timeout(OSError):
        pass

    library.Timeout = Timeout  # type: ignore[attr-defined]
    # An earlier test may have imported the real library (LangGraph's packages import
    # requests): out of sys.modules first, so the "import" below is one the lookup sees; and
    # a cache of the test's own, so what it finds leaves with it (the real library's classes
    # are found again after, at the very module count this test ends on).
    monkeypatch.delitem(sys.modules, "requests.exceptions", raising=False)
    monkeypatch.setattr(doubt, "_FOUND", {})
    assert not in_doubt(Timeout())  # before the "import"
    monkeypatch.setitem(sys.modules, "requests.exceptions", library)
    assert in_doubt(Timeout())
    assert Timeout in in_doubt_classes()


def test_requests_timeouts_when_requests_is_installed() -> None:
    requests = pytest.importorskip("requests")
    assert in_doubt(requests.exceptions.ReadTimeout())
    assert not in_doubt(requests.exceptions.ConnectTimeout())  # never connected
    assert in_doubt(requests.exceptions.ChunkedEncodingError())
    assert not in_doubt(requests.exceptions.HTTPError())


def test_in_doubt_imports_no_http_library() -> None:
    code = (
        "import sys\n"
        "from stalwart._engine.doubt import in_doubt\n"
        "in_doubt(TimeoutError())\n"
        "libraries = ('httpx', 'httpx2', 'requests', 'urllib3', 'aiohttp', 'grpc')\n"
        "print(sorted(m for m in libraries if m in sys.modules))\n"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "[]"


# --- the whole family, from real clients against a service that charges, then resets ---


def _failure(send: Callable[[], Any]) -> BaseException:
    with pytest.raises(Exception) as caught:
        send()
    return caught.value


def _requests_post(url: str) -> Any:
    import requests

    return requests.post(url, json={"order": 4411, "amount": "40.00"}, timeout=10).json()


def _httpx_post(url: str) -> Any:
    import httpx

    return httpx.post(url, json={"order": 4411, "amount": "40.00"}, timeout=10).json()


def _urllib3_post(url: str) -> Any:
    import urllib3

    return urllib3.request("POST", url, json={"order": 4411}, retries=False, timeout=10).json()


def _http_client_post(url: str) -> Any:
    host, port = url.split("/")[2].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request("POST", "/charge", body=b'{"order": 4411}')
        return connection.getresponse().read()
    finally:
        connection.close()


def _aiohttp_post(url: str) -> Any:
    aiohttp = pytest.importorskip("aiohttp")

    async def post() -> Any:
        async with (
            aiohttp.ClientSession() as session,
            session.post(url, json={"order": 4411}) as response,
        ):
            return await response.json()

    return asyncio.run(post())


CLIENTS = {
    "requests": _requests_post,
    "httpx": _httpx_post,
    "urllib3": _urllib3_post,
    "http.client": _http_client_post,
    "aiohttp": _aiohttp_post,
}


@pytest.mark.parametrize("mode", ["reset", "chunked_reset"])
@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_a_charge_whose_answer_was_lost_is_in_doubt(client: str, mode: str) -> None:
    with charging_server(mode) as server:
        error = _failure(lambda: CLIENTS[client](server.url))
        assert len(server.charges) == 1, "the service charged the card"
    assert in_doubt(error), f"{type(error).__module__}.{type(error).__name__}: {error!r}"


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_a_refused_connection_is_not_in_doubt_from_any_client(client: str) -> None:
    error = _failure(lambda: CLIENTS[client](refused_url()))
    assert not in_doubt(error), f"{type(error).__module__}.{type(error).__name__}: {error!r}"


def test_a_name_that_does_not_resolve_is_not_in_doubt_as_requests_wraps_it() -> None:
    # The chain urllib3 and requests build for a DNS failure, from their own classes (a
    # real lookup would need a resolver, and nothing in the tests leaves the machine).
    import requests
    import urllib3
    from urllib3.connection import HTTPConnection

    lookup = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    connection = HTTPConnection("shop.invalid", 80)
    resolution = urllib3.exceptions.NameResolutionError("shop.invalid", connection, lookup)
    retries = urllib3.exceptions.MaxRetryError(None, "/charge", reason=resolution)  # type: ignore[arg-type]
    assert not in_doubt(lookup)
    assert not in_doubt(requests.exceptions.ConnectionError(retries))


def test_a_lost_connection_that_says_no_more_is_in_doubt() -> None:
    import requests

    assert in_doubt(requests.exceptions.ConnectionError("connection lost"))


def test_every_rule_names_a_class_of_its_library() -> None:
    import importlib

    for rule in RULES:
        try:
            module = importlib.import_module(rule.module)
        except ImportError:
            continue
        assert isinstance(getattr(module, rule.name, None), type), rule
    assert {rule.says for rule in RULES} == set(Says)


def test_a_grpc_deadline_is_in_doubt_and_other_codes_are_not() -> None:
    grpc = pytest.importorskip("grpc")
    release = threading.Event()
    calls: list[bytes] = []

    def charge(request: bytes, context: Any) -> bytes:
        calls.append(request)
        release.wait(10)  # the charge is made; the answer comes after the deadline
        return b"ch-1"

    def decline(request: bytes, context: Any) -> bytes:
        context.abort(grpc.StatusCode.FAILED_PRECONDITION, "card declined")
        return b""

    handler = grpc.method_handlers_generic_handler(
        "shop.Cards",
        {
            "Charge": grpc.unary_unary_rpc_method_handler(charge),
            "Decline": grpc.unary_unary_rpc_method_handler(decline),
        },
    )
    from concurrent.futures import ThreadPoolExecutor

    server = grpc.server(ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            slow = channel.unary_unary("/shop.Cards/Charge")
            deadline = _failure(lambda: slow(b"4411", timeout=0.2))
            declined = _failure(lambda: channel.unary_unary("/shop.Cards/Decline")(b"4411"))
    finally:
        release.set()
        server.stop(None)
    assert calls == [b"4411"]
    assert deadline.code() == grpc.StatusCode.DEADLINE_EXCEEDED  # type: ignore[attr-defined]
    assert in_doubt(deadline)
    assert not in_doubt(declined)


# --- a run whose tool charges through a real client, and the answer is lost ---

CHARGING_TOOLS = '''
from pathlib import Path

from stalwart import tool

HERE = Path(__file__).parent
CALLS = []
FAIL = set()


@tool(writes=True)
def charge_card(order: int) -> dict:
    """Charge the card for an order."""
    client = (HERE / "client").read_text()
    url = (HERE / "url").read_text()
    CALLS.append(("charge_card", {"order": order}))
    if client == "requests":
        import requests

        return requests.post(url, json={"order": order}, timeout=10).json()
    import httpx

    return httpx.post(url, json={"order": order}, timeout=10).json()
'''


@pytest.fixture
def charging_project(tmp_path: Path) -> Iterator[Project]:
    project = write_project(tmp_path, tools_source=CHARGING_TOOLS, tool_names=["charge_card"])
    yield project
    for opened in project.agents:
        opened.close()


def _run_charge(project: Project, client: str, url: str) -> Any:
    (project.folder / "client").write_text(client)
    (project.folder / "url").write_text(url)
    agent: Agent = project.agent(clock=FakeClock())
    reply = agent.chat("charge the card for order 4411", user="u-17")
    assert reply.waiting[0].kind == "confirm"
    return agent, agent.confirm_current("u-17", "approve")


@pytest.mark.parametrize("mode", ["reset", "chunked_reset"])
@pytest.mark.parametrize("client", ["requests", "httpx"])
def test_a_charge_whose_answer_was_lost_asks_a_person(
    charging_project: Project, client: str, mode: str
) -> None:
    with charging_server(mode) as server:
        agent, reply = _run_charge(charging_project, client, server.url)
        assert len(server.charges) == 1
    assert reply.state == "waiting"
    assert reply.waiting[0].kind == "outcome"
    assert reply.text == "Did charge_card take effect? The call was sent and no answer came back."
    assert [(c.tool, c.status, c.tries) for c in agent.record("u-17")] == [
        ("charge_card", "in_doubt", 1)
    ]


@pytest.mark.parametrize("client", ["requests", "httpx"])
def test_a_charge_refused_at_the_door_fails_the_run(charging_project: Project, client: str) -> None:
    agent, reply = _run_charge(charging_project, client, refused_url())
    assert reply.state == "rolled_back"
    error = "ConnectionError" if client == "requests" else "ConnectError"
    assert reply.text == (
        f"This run stopped: charge_card failed ({error}). "
        "Nothing had been written, so nothing needed undoing."
    )


def test_a_library_imported_after_the_first_failure_is_still_read() -> None:
    """What each kind of error says is looked up once per set of imported modules: a
    library imported after the first failure was read is read all the same."""
    script = (
        "import sys\n"
        "from stalwart._engine.doubt import in_doubt\n"
        "assert 'httpx' not in sys.modules\n"
        "assert not in_doubt(ValueError('bad'))\n"
        "import httpx\n"
        "print(in_doubt(httpx.ReadError('reset')), in_doubt(httpx.ConnectError('refused')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]
