"""What counts as in doubt: a failed call that may still have taken effect.

A call is in doubt when it may have arrived and done its work before its answer was lost:
a timeout while waiting for the answer, a connection reset or closed mid-answer, a
deadline passed. A failure that proves the call never left (the connection was refused,
the host name did not resolve, the connection could not be made in time) is not in
doubt, and neither is any other error: the tool said what happened.

The errors, as data (`RULES`): each (module, class name, what it says). The libraries'
classes are looked up in `sys.modules` only, never imported: an instance of a library's
error can exist only once that library has been imported.

In doubt:

- builtins: `TimeoutError` (so `socket.timeout`, `asyncio.TimeoutError`),
  `ConnectionResetError`, `ConnectionAbortedError`, `BrokenPipeError`;
- stalwart: `stalwart.Ambiguous` (a tool says it does not know);
- http.client: `IncompleteRead`, `BadStatusLine` (so `RemoteDisconnected`);
- urllib3: `ProtocolError` (a connection reset or closed mid-request), `ReadTimeoutError`;
- requests: `ChunkedEncodingError`, `ContentDecodingError`, `ReadTimeout`, `Timeout`;
- httpx and httpx2 (and httpcore, httpcore2): `ReadError`, `WriteError`, `CloseError`,
  `RemoteProtocolError`, `LocalProtocolError`, `ReadTimeout`, `WriteTimeout`,
  `TimeoutException`;
- aiohttp: `ServerDisconnectedError`, `ServerTimeoutError`, `SocketTimeoutError`,
  `ClientPayloadError`;
- grpc: an `RpcError` whose `code()` is `DEADLINE_EXCEEDED` or `UNAVAILABLE` (gRPC does not
  say whether an unavailable call was sent).

Never sent, so not in doubt:

- builtins: `ConnectionRefusedError`, `socket.gaierror` (a name that did not resolve);
- http.client: `CannotSendRequest`;
- urllib3: `NewConnectionError`, `NameResolutionError`, `ConnectTimeoutError`;
- requests: `ConnectTimeout`;
- httpx, httpx2, httpcore, httpcore2: `ConnectError`, `ConnectTimeout`, `PoolTimeout`,
  `UnsupportedProtocol`;
- aiohttp: `ClientConnectorError` (and its DNS error), `ConnectionTimeoutError`.

Some errors only say a connection failed, not when: requests' `ConnectionError`, urllib3's
`MaxRetryError`, httpx's `NetworkError` and `TransportError`, aiohttp's
`ClientConnectionError` and `ClientOSError`. They are in doubt unless an error inside
them proves the call never left (requests wraps a refused connection as
`ConnectionError(MaxRetryError(reason=NewConnectionError(...)))`, a reset as
`ConnectionError(ProtocolError("Connection aborted.", ConnectionResetError(...)))`).

The walk: an error and everything inside it, outermost first: its explicit `__cause__`,
its implicit `__context__` (unless suppressed with `raise ... from None`: then the tool
has said what happened), every exception among its `args`, urllib3's `reason`, and an
exception group's members. The first error that decides (in doubt, or never sent) wins;
one error of both kinds (requests' `ConnectTimeout` is a `Timeout`) is never sent. When
nothing decides, an error that only says a connection failed leaves the call in doubt;
anything else does not.
"""

from __future__ import annotations

import enum
import sys
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from stalwart.errors import Ambiguous


class Says(enum.Enum):
    """What an error says of whether its call took effect."""

    IN_DOUBT = "in_doubt"  # it may have arrived and done its work
    NEVER_SENT = "never_sent"  # it never left this process
    LOST_CONNECTION = "lost_connection"  # a connection failed; in doubt unless proved otherwise


@dataclass(frozen=True)
class Rule:
    module: str
    name: str
    says: Says


def _rules(module: str, says: Says, *names: str) -> tuple[Rule, ...]:
    return tuple(Rule(module, name, says) for name in names)


_HTTPX_IN_DOUBT = (
    "ReadError",
    "WriteError",
    "CloseError",
    "RemoteProtocolError",
    "LocalProtocolError",
    "ReadTimeout",
    "WriteTimeout",
    "TimeoutException",
)
_HTTPX_NEVER_SENT = ("ConnectError", "ConnectTimeout", "PoolTimeout", "UnsupportedProtocol")

RULES: tuple[Rule, ...] = (
    *_rules("builtins", Says.NEVER_SENT, "ConnectionRefusedError"),
    *_rules("socket", Says.NEVER_SENT, "gaierror"),
    *_rules(
        "builtins",
        Says.IN_DOUBT,
        "TimeoutError",
        "ConnectionResetError",
        "ConnectionAbortedError",
        "BrokenPipeError",
    ),
    *_rules("http.client", Says.NEVER_SENT, "CannotSendRequest"),
    *_rules("http.client", Says.IN_DOUBT, "IncompleteRead", "BadStatusLine"),
    *_rules(
        "urllib3.exceptions",
        Says.NEVER_SENT,
        "NewConnectionError",
        "NameResolutionError",
        "ConnectTimeoutError",
    ),
    *_rules("urllib3.exceptions", Says.IN_DOUBT, "ProtocolError", "ReadTimeoutError"),
    *_rules("urllib3.exceptions", Says.LOST_CONNECTION, "MaxRetryError"),
    *_rules("requests.exceptions", Says.NEVER_SENT, "ConnectTimeout"),
    *_rules(
        "requests.exceptions",
        Says.IN_DOUBT,
        "ChunkedEncodingError",
        "ContentDecodingError",
        "ReadTimeout",
        "Timeout",
    ),
    *_rules("requests.exceptions", Says.LOST_CONNECTION, "ConnectionError"),
    *(
        rule
        for module in ("httpx", "httpx2", "httpcore", "httpcore2")
        for rule in (
            *_rules(module, Says.NEVER_SENT, *_HTTPX_NEVER_SENT),
            *_rules(module, Says.IN_DOUBT, *_HTTPX_IN_DOUBT),
            *_rules(module, Says.LOST_CONNECTION, "NetworkError", "TransportError"),
        )
        # httpcore has neither CloseError nor TransportError
        if module.startswith("httpx") or rule.name not in ("CloseError", "TransportError")
    ),
    *_rules(
        "aiohttp",
        Says.NEVER_SENT,
        "ClientConnectorError",
        "ClientConnectorDNSError",
        "ConnectionTimeoutError",
    ),
    *_rules(
        "aiohttp",
        Says.IN_DOUBT,
        "ServerDisconnectedError",
        "ServerTimeoutError",
        "SocketTimeoutError",
        "ClientPayloadError",
    ),
    *_rules("aiohttp", Says.LOST_CONNECTION, "ClientConnectionError", "ClientOSError"),
)

# gRPC errors say what they are by their status code, not by their class.
GRPC_IN_DOUBT_CODES = frozenset({"DEADLINE_EXCEEDED", "UNAVAILABLE"})

# Of one error that matches rules of several kinds, the strongest says.
_PRECEDENCE = (Says.NEVER_SENT, Says.IN_DOUBT, Says.LOST_CONNECTION)


def _classes(says: Says) -> tuple[type[BaseException], ...]:
    """The classes of the libraries imported now whose errors say `says`; looked up again
    only when a module was imported (or dropped) since: every failure is classified."""
    modules = len(sys.modules)
    known = _FOUND.get(says)
    if known is not None and known[0] == modules:
        return known[1]
    found = _look_up(says)
    _FOUND[says] = (modules, found)
    return found


_FOUND: dict[Says, tuple[int, tuple[type[BaseException], ...]]] = {}


def _look_up(says: Says) -> tuple[type[BaseException], ...]:
    found: list[type[BaseException]] = [Ambiguous] if says is Says.IN_DOUBT else []
    for rule in RULES:
        if rule.says is not says:
            continue
        module = sys.modules.get(rule.module)
        error_class = getattr(module, rule.name, None) if module is not None else None
        if isinstance(error_class, type) and issubclass(error_class, BaseException):
            found.append(error_class)
    return tuple(found)


def in_doubt_classes() -> tuple[type[BaseException], ...]:
    """Every error class that leaves a call in doubt, among the libraries imported now."""
    return _classes(Says.IN_DOUBT)


def what_it_says(error: BaseException) -> Says | None:
    """What this one error says by itself (not what is inside it); None: nothing."""
    for says in _PRECEDENCE:
        if isinstance(error, _classes(says)):
            return says
    if says_grpc_in_doubt(error):
        return Says.IN_DOUBT
    return None


def says_grpc_in_doubt(error: BaseException) -> bool:
    grpc = sys.modules.get("grpc")
    rpc_error = getattr(grpc, "RpcError", None) if grpc is not None else None
    if not isinstance(rpc_error, type) or not isinstance(error, rpc_error):
        return False
    code = getattr(error, "code", None)
    try:
        status = code() if callable(code) else None
    except Exception:
        return False
    return getattr(status, "name", None) in GRPC_IN_DOUBT_CODES


def inside(error: BaseException) -> Iterator[BaseException]:
    """The errors an error carries, outermost first (see the module's walk)."""
    if error.__cause__ is not None:
        yield error.__cause__
    if error.__context__ is not None and not error.__suppress_context__:
        yield error.__context__
    try:  # an error's own attributes may raise; what cannot be read decides nothing
        args = tuple(getattr(error, "args", ()))
        reason = getattr(error, "reason", None)  # urllib3's MaxRetryError
    except Exception:
        args, reason = (), None
    for arg in args:
        if isinstance(arg, BaseException):
            yield arg
    if isinstance(reason, BaseException):
        yield reason
    if isinstance(error, BaseExceptionGroup):
        yield from error.exceptions


def in_doubt(error: BaseException) -> bool:
    """Whether this failure leaves open if the call took effect (see the module's rules)."""
    lost_connection = False
    seen: set[int] = set()
    queue: deque[BaseException] = deque([error])
    while queue:
        current = queue.popleft()
        if id(current) in seen:
            continue
        seen.add(id(current))
        says = what_it_says(current)
        if says is Says.NEVER_SENT:
            return False
        if says is Says.IN_DOUBT:
            return True
        lost_connection = lost_connection or says is Says.LOST_CONNECTION
        queue.extend(inside(current))
    return lost_connection
