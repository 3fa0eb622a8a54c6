"""What you need to test your own agent: time that moves only when told, a model that
answers from a script, and backoffs that never wait.

Everything else in a test is real: your agent.yaml, your tools, the SQLite record (in a
temporary folder), the rulebook. Only the model provider is replaced, and only time is
pretended:

    from stalwart import Agent
    from stalwart.testing import FAST_UNDO_BACKOFF, FakeClock, ScriptedModel, ask, call, say

    clock = FakeClock()
    model = ScriptedModel([ask(call("get_order", order=4411)), say("It shipped.")], clock=clock)
    agent = Agent.from_file("agent.yaml", clock=clock, model=model,
                            undo_backoff=FAST_UNDO_BACKOFF)
    reply = agent.chat("where is my parcel?", user="u-1")
    assert reply.text == "It shipped."
    assert len(model.requests) == 2          # what the model was sent, each time

A wait the runtime makes (an undo's retries, a model's backoff) goes through the clock:
`clock.slept` lists them and no test sleeps.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from .backoff import UNDO_RETRIES, Backoff, no_jitter
from .clock import FakeClock
from .errors import ProviderFailure, ScriptExhausted
from .models.backoff import BackoffPolicy
from .models.base import AssistantMessage, Completion, Model, Request, ToolCall, Usage
from .models.scripted import ScriptedAdapter, ScriptStep

__all__ = [
    "FAST_MODEL_BACKOFF",
    "FAST_UNDO_BACKOFF",
    "STEADY_UNDO_BACKOFF",
    "AssistantMessage",
    "Completion",
    "FakeClock",
    "ProviderFailure",
    "Request",
    "ScriptExhausted",
    "ScriptStep",
    "ScriptedModel",
    "ToolCall",
    "Usage",
    "ask",
    "call",
    "say",
]

FAST_UNDO_BACKOFF = Backoff(base=0.0, retries=UNDO_RETRIES, jitter=no_jitter)
"""The undo's tries as in production (the first and three more), with no wait between them."""

STEADY_UNDO_BACKOFF = Backoff(base=1.0, factor=2.0, retries=UNDO_RETRIES, jitter=no_jitter)
"""The undo's production schedule without its randomness: on a `FakeClock`, `clock.slept`
is exactly the ceilings, `[1.0, 2.0, 4.0]`, every run."""

FAST_MODEL_BACKOFF = BackoffPolicy(Backoff(base=0.0, jitter=no_jitter))
"""A model's tries as in production, with no wait between them (a retry-after a scripted
failure asks for is still honoured, on the clock)."""

_call_ids = itertools.count(1)


def call(tool: str, /, **arguments: Any) -> ToolCall:
    """One tool call a scripted model asks for, with a fresh id: `call("get_order", order=1)`."""
    return ToolCall(id=f"call_{next(_call_ids)}", name=tool, arguments=arguments)


def ask(*calls: ToolCall, text: str | None = None) -> AssistantMessage:
    """A model's answer that asks for these tool calls, in this order (and may say `text`)."""
    return AssistantMessage(text=text, tool_calls=calls)


def say(text: str) -> AssistantMessage:
    """A model's last answer: plain text, no tool calls; the run ends with it as its reply."""
    return AssistantMessage(text=text)


class ScriptedModel(Model):
    """A real `Model` whose provider answers from a script, one step per request.

    A step is an `AssistantMessage` (see `ask`, `say`), a `Completion` (with its `Usage`,
    to test costs), or a `ProviderFailure` to raise, as a rate limit (429), an overload
    (529) or a lost connection (status None) would: the model's real backoff handles it.
    A request past the script's end raises `ScriptExhausted`.

    Args:
        script: the answers, in the order the requests will get them.
        selector: the `provider:model` the record and the replies name.
        clock: the clock the backoff waits on (a fresh `FakeClock` if none).
        backoff: the model's backoff (`FAST_MODEL_BACKOFF` if none).
    """

    def __init__(
        self,
        script: Iterable[ScriptStep],
        *,
        selector: str = "scripted:model",
        clock: FakeClock | None = None,
        backoff: BackoffPolicy | None = None,
    ) -> None:
        self.adapter = ScriptedAdapter(script, selector=selector)
        super().__init__(
            selector,
            self.adapter,
            clock=clock if clock is not None else FakeClock(),
            backoff=backoff if backoff is not None else FAST_MODEL_BACKOFF,
        )

    @property
    def requests(self) -> list[Request]:
        """Every request the model was sent, in order (the history and the tools offered)."""
        return self.adapter.requests

    @property
    def remaining(self) -> int:
        """The script's steps not asked for yet."""
        return self.adapter.remaining
