"""The curated public API: every name a user needs is importable from `stalwart` itself."""

from __future__ import annotations

import inspect

import pytest

import stalwart
from stalwart import errors

pytestmark = pytest.mark.unit


def test_every_exported_name_is_there_and_every_stalwart_error_is_exported() -> None:
    for name in stalwart.__all__:
        assert getattr(stalwart, name) is not None, name
    raised_on_purpose = {
        name
        for name, value in inspect.getmembers(errors, inspect.isclass)
        if issubclass(value, errors.StalwartError)
    }
    assert raised_on_purpose <= set(stalwart.__all__)
    assert sorted(stalwart.__all__) == sorted(set(stalwart.__all__))


def test_what_the_agent_returns_is_exported_too() -> None:
    hints = {
        name: inspect.signature(getattr(stalwart.Agent, name)).return_annotation
        for name in ("chat", "confirm", "answer", "memory", "record", "usage", "operator_end")
    }
    assert hints == {
        "chat": "Reply",
        "confirm": "Reply",
        "answer": "Reply",
        "memory": "list[Message]",
        "record": "list[RecordedCall]",
        "usage": "SessionUsage",
        "operator_end": "Reply",
    }
    for name in ("Reply", "Ended", "Waiting", "Message", "RecordedCall", "SessionUsage", "Lint"):
        assert name in stalwart.__all__
    assert stalwart.tool is stalwart.tools.tool
    assert stalwart.current_call() is None  # outside a tool's call
