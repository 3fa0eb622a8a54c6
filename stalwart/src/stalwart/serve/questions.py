"""Which question an answer answers: every button and API answer names one.

A question's id is a digest of the whole question as the record holds it (its run,
kind, step, call, tool, arguments and text), so a question asked again after the run
moved on (a stuck undo retried and stuck again says "after 8 tries", not 4) has a new
id, and a stale page's button matches nothing.

Binding happens twice: here, before the answer is handed to a run thread (a stale
button is refused at once with `StaleAnswer`), and in the library under the session's
lock (`Agent.answer(question=...)`), so two answers racing for one question never both
apply.
"""

from __future__ import annotations

import hashlib

from ..codec import canonical_json
from ..replies import Waiting


def question_id(waiting: Waiting) -> str:
    # The library's own id once `Waiting` carries one (the hardening issue); else a digest.
    given = getattr(waiting, "id", "")
    if isinstance(given, str) and given:
        return given
    text = canonical_json(waiting.to_record())
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]
