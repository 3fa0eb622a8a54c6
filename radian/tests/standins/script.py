"""A stand-in's script: the replies it gives, one per request, in order."""

from __future__ import annotations

import threading
from typing import Generic, Protocol, TypeVar


class _Reply(Protocol):
    @property
    def sticky(self) -> bool: ...


R = TypeVar("R", bound=_Reply)


class Script(Generic[R]):
    """Each `take` gives the next reply; a sticky reply answers every later request too (a
    credential that stays refused), and an empty script gives `default`."""

    def __init__(self, replies: list[R], default: R) -> None:
        self.replies = list(replies)
        self._default = default
        self._lock = threading.Lock()

    def add(self, *replies: R) -> None:
        with self._lock:
            self.replies.extend(replies)

    def take(self) -> R:
        with self._lock:
            if not self.replies:
                return self._default
            return self.replies[0] if self.replies[0].sticky else self.replies.pop(0)
