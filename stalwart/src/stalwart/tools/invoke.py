"""Calling a tool: a plain function is called, an async one awaited, and a declared
timeout bounds both.

Async tools are awaited, not refused at registration: tools written over asyncio clients
(httpx's AsyncClient, an MCP session) are common, and honouring them costs one event loop
per call. The engine is synchronous, so each call runs its coroutine to the end on a loop
of its own (`asyncio.run`): in the calling thread when no loop runs there, else in a
helper thread (`chat` may be called from inside a running loop, a web handler's). A tool
must therefore not keep asyncio objects bound to one loop across calls; create its client
inside the call.

A timeout (seconds: `@tool(timeout=5)`, or `timeout: 5` under the tool in agent.yaml) runs
the call in a daemon worker thread and waits at most that long. Past it, `ToolTimeout` is
raised: a `TimeoutError`, so the call is in doubt and the chapter's rules apply (a read
or a retry-safe write is sent again under the same key, any other write goes to a
person). Python cannot stop a thread, so the late call keeps running on its own; it is a
daemon, it never keeps the process alive, and the run does not wait for it. An async tool
past its timeout is also cancelled on its loop.

The call's context (`stalwart.current_call()`) is copied into any thread it runs on.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import math
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from stalwart import texts
from stalwart.errors import ToolDefinitionError, ToolTimeout


def check_timeout(tool: str, timeout: Any) -> float | None:
    """A declared timeout as seconds; ToolDefinitionError unless a positive number."""
    if timeout is None:
        return None
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise ToolDefinitionError(texts.bad_timeout(tool, timeout))
    return float(timeout)


def call(
    tool: str, function: Callable[..., Any], kwargs: Mapping[str, Any], timeout: float | None
) -> Any:
    """Call `function(**kwargs)`, awaiting what it returns if that is awaitable, within
    `timeout` seconds if one is given (`ToolTimeout` past it)."""
    if timeout is None:
        return _run(function, kwargs, None)
    outcome: dict[str, Any] = {}
    done = threading.Event()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            outcome["value"] = context.run(_run, function, kwargs, timeout)
        except BaseException as error:  # handed to the caller, who raises it
            outcome["error"] = error
        finally:
            done.set()

    threading.Thread(target=work, name=f"stalwart-tool-{tool}", daemon=True).start()
    if not done.wait(timeout):
        raise ToolTimeout(texts.tool_timed_out(tool, timeout))
    if "error" in outcome:
        raise outcome["error"]
    if outcome["value"] is _EXPIRED:
        raise ToolTimeout(texts.tool_timed_out(tool, timeout))
    return outcome["value"]


# What an async call whose own timer ran out returns in place of a result.
_EXPIRED = object()


# What a tool returns most: never awaitable, told by its type alone (`inspect.isawaitable`
# asks the Awaitable ABC through abc's Python __instancecheck__, for every call sent).
_PLAIN = frozenset({dict, list, str, int, float, bool, type(None)})


def _run(function: Callable[..., Any], kwargs: Mapping[str, Any], timeout: float | None) -> Any:
    result = function(**kwargs)
    if type(result) not in _PLAIN and inspect.isawaitable(result):
        return _await(result, timeout)
    return result


def _await(awaitable: Awaitable[Any], timeout: float | None) -> Any:
    async def main() -> Any:
        if timeout is None:
            return await awaitable
        limit = asyncio.timeout(timeout)
        try:
            async with limit:
                return await awaitable
        except TimeoutError:
            if limit.expired():
                return _EXPIRED
            raise

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop in this thread: the usual case
        return asyncio.run(main())
    # A loop runs in this thread (the caller is async code calling the synchronous
    # engine): the coroutine gets a loop of its own on a helper thread.
    outcome: dict[str, Any] = {}
    context = contextvars.copy_context()

    def work() -> None:
        try:
            outcome["value"] = context.run(asyncio.run, main())
        except BaseException as error:
            outcome["error"] = error

    helper = threading.Thread(target=work, name="stalwart-tool-loop", daemon=True)
    helper.start()
    helper.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
