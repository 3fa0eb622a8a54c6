"""An `mcp:` item of agent.yaml's `tools:` into the server it names (`tools.mcp.McpServer`).

    tools:
      - mcp:
          command: [mcp-server-memory]          # stdio; or  url: http://127.0.0.1:8000/mcp
          env: {MEMORY_FILE_PATH: $KG_FILE}     # a command's environment; a url: headers:
          prefix: kg_                           # optional: keeps two servers' names apart
          timeout: 60                           # seconds a tools/call waits for its answer

`$NAME` and `${NAME}` in env and headers are read from the environment as the file is
loaded, so agent.yaml names a secret without holding it; an unset one is a ConfigError.
Starting the server and listing its tools is `tools.mcp.mcp_source`'s (`catalogue.py`
calls it); docs/mcp.md says what a server's tool becomes.
"""

from __future__ import annotations

import os
import re
from typing import Any

from stalwart.tools.mcp import McpServer

from .reading import NAME, Raw, Reading
from .yamldoc import Loc

_ENV_VALUE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


class _RawMcp(Raw):
    command: list[str] | None = None
    url: str | None = None
    env: dict[str, str] = {}
    headers: dict[str, str] = {}
    prefix: str = ""
    timeout: float | None = None


class _RawMcpSource(Raw):
    mcp: _RawMcp


def mcp_server(reading: Reading, item: dict[str, Any], loc: Loc) -> McpServer:
    """The server the item `{mcp: {...}}` at `loc` names; ConfigError if it is not one."""
    raw = reading.validate(_RawMcpSource, item, loc).mcp
    at: Loc = (*loc, "mcp")
    if (raw.command is None) == (raw.url is None):
        raise reading.error(at, "expected either command: [program, args...] (stdio) "
                            "or url: http://... (streamable HTTP)")  # fmt: skip
    if raw.command is not None and not raw.command:
        raise reading.error((*at, "command"), "expected the program to start, then its arguments")
    if raw.url is not None and not raw.url.startswith(("http://", "https://")):
        raise reading.error((*at, "url"), f"expected an http:// or https:// URL, got {raw.url!r}")
    if raw.command is None and raw.env:
        raise reading.error((*at, "env"), "env is for a command; a url takes headers", at_key=True)
    if raw.url is None and raw.headers:
        raise reading.error((*at, "headers"), "headers are for a url; a command takes env",
                            at_key=True)  # fmt: skip
    if raw.prefix and not NAME.match(raw.prefix):
        raise reading.error((*at, "prefix"), f"expected letters, digits, '_' and '-', "
                            f"got {raw.prefix!r}")  # fmt: skip
    if raw.timeout is not None and raw.timeout <= 0:
        raise reading.error((*at, "timeout"), "expected seconds, more than 0")
    return McpServer(
        command=tuple(raw.command or ()),
        url=raw.url,
        env=_from_environment(reading, raw.env, (*at, "env")),
        headers=_from_environment(reading, raw.headers, (*at, "headers")),
        prefix=raw.prefix,
        cwd=reading.folder,
        **({"timeout": raw.timeout} if raw.timeout is not None else {}),
    )


def _from_environment(reading: Reading, values: dict[str, str], loc: Loc) -> dict[str, str]:
    """Each value with its `$NAME` (or `${NAME}`) read from the environment."""
    read: dict[str, str] = {}
    for key, value in values.items():

        def variable(match: re.Match[str], key: str = key) -> str:
            name = match.group(1) or match.group(2)
            if name not in os.environ:
                raise reading.error((*loc, key), f"${name} is not set in the environment")
            return os.environ[name]

        read[key] = _ENV_VALUE.sub(variable, value)
    return read
