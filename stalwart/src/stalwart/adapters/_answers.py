"""Answered runs going on by themselves: what every adapter's driver gives, in one place.

A person answers a guarded run's question wherever stalwart asks it: the driver's own
`answer`, the interface (`stalwart serve`), `stalwart chat`, another process. An answer
given outside the driver is recorded and bound to its user and question, and the run then
waits for its framework (state "running"); the application takes it up again with its
driver, here: `continue_answered` once, or `serve_answers` round after round on a thread
(or a process) of its own, with a driver of its own (a driver's `*_sync` methods run on
one event loop of its own, one call at a time). Both are `Guard.continue_answered` /
`Guard.serve_answers` (`stalwart.guarded`) over the driver's `resume_sync`: each run no
worker holds is claimed under its session's lock and continued once, whichever worker
looks. The framework is imported by the adapters only: nothing here knows one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..clock import Clock
from ..guarded import ANSWERS_EVERY_SECS, AnsweredRun, Continued, Guard


class ContinuesAnswered:
    """A driver's `continue_answered` and `serve_answers` (see the module). `options` are
    the driver's `resume_sync` options (`deps=`, `context=`), given to every run taken up."""

    guard: Guard

    def continue_answered(self, **options: Any) -> list[Continued[Any]]:
        """One round: every run of this framework an answer given elsewhere let go on (or a
        stopped process left mid-way) that no worker holds, taken up with `resume_sync`;
        what each came to (its `GuardedResult`, or the error it raised)."""
        return self.guard.continue_answered(self._taking_up(options))

    def serve_answers(
        self,
        *,
        stop: Callable[[], bool],
        every: float = ANSWERS_EVERY_SECS,
        clock: Clock | None = None,
        **options: Any,
    ) -> int:
        """`continue_answered`, round after round, `every` seconds apart on `clock` (the
        stalwart agent's by default), until `stop()`; the number of rounds."""
        return self.guard.serve_answers(
            self._taking_up(options), stop=stop, every=every, clock=clock
        )

    def _taking_up(self, options: dict[str, Any]) -> Callable[[AnsweredRun], Any]:
        resume: Callable[..., Any] = getattr(self, "resume_sync")  # noqa: B009 (each driver's)

        def take_up(answered: AnsweredRun) -> Any:
            return resume(answered.user, session=answered.name, **options)

        return take_up
