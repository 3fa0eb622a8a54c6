"""A model that answers from a script, for testing what calls a model.

It goes through the real `Model` (backoff, pricing, the same response type); only the
provider is replaced. Each request is recorded, so a test of a run loop can say what
the model was sent, or that it was never called.

    script = ScriptedAdapter([AssistantMessage(text="Done."), ProviderFailure(529, "Overloaded")])
    model = Model("scripted:desk", script, clock=FakeClock())
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from ..errors import ProviderFailure, ScriptExhausted
from .base import AssistantMessage, Completion, Request, Usage

ScriptStep = AssistantMessage | Completion | ProviderFailure


class ScriptedAdapter:
    """Answers each request with the script's next step: a message, a completion (with
    usage), or a ProviderFailure to raise (as a rate limit or lost connection would)."""

    def __init__(self, script: Iterable[ScriptStep], selector: str = "scripted:model") -> None:
        self._script: deque[ScriptStep] = deque(script)
        self._selector = selector
        self.requests: list[Request] = []
        self.closed = False

    def send(self, request: Request) -> Completion:
        self.requests.append(request)
        if not self._script:
            raise ScriptExhausted(
                self._selector, f"called {len(self.requests)} times; the script has no more"
            )
        step = self._script.popleft()
        if isinstance(step, ProviderFailure):
            raise step
        if isinstance(step, AssistantMessage):
            return Completion(
                text=step.text, tool_calls=step.tool_calls, usage=Usage(), stop_reason=None
            )
        return step

    @property
    def remaining(self) -> int:
        return len(self._script)

    def close(self) -> None:
        self.closed = True
