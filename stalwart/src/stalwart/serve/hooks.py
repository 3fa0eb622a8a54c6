"""The question hook: told when a question appears, so a team hears of it in its own tools.

Either a webhook (`serve: question_hook: URL` in agent.yaml: the question is POSTed as
JSON, from a thread of its own, with a short timeout, so a slow chat service never holds
a run) or a Python callback (`create_app(on_question=...)`), or both. The payload::

    {"event": "question", "session": "...", "user": "...", "question_id": "...",
     "kind": "confirm", "tool": "charge_card", "args": {...}, "text": "Run ...?",
     "answers": ["approve", "skip", "cancel all"], "url": "/s/<session>"}

Each question is told once by the worker whose run asked it.
"""

from __future__ import annotations

import json
import logging
import threading
import urllib.request
from collections import OrderedDict
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from .. import logs
from .views import Snapshot

log = logging.getLogger(logs.SERVE)

Callback = Callable[[dict[str, Any]], None]
HOOK_TIMEOUT_SECS = 5.0
_REMEMBERED = 4096


def payload(snapshot: Snapshot) -> dict[str, Any]:
    question = snapshot.question
    assert question is not None
    return {
        "event": "question",
        "session": snapshot.session,
        "user": snapshot.user,
        "question_id": snapshot.question_id,
        "kind": question.kind,
        "tool": question.tool,
        "args": question.args,
        "text": question.text,
        "answers": list(question.answers),
        "url": f"/s/{quote(snapshot.session, safe='')}",
    }


class QuestionHook:
    def __init__(self, url: str | None = None, callback: Callback | None = None) -> None:
        self.url = url
        self.callback = callback
        self._told: OrderedDict[str, None] = OrderedDict()
        self._guard = threading.Lock()

    def __bool__(self) -> bool:
        return bool(self.url or self.callback)

    def tell(self, snapshot: Snapshot) -> None:
        """Tell of the snapshot's question, once per question id."""
        if snapshot.question_id is None or not self:
            return
        with self._guard:
            if snapshot.question_id in self._told:
                return
            self._told[snapshot.question_id] = None
            while len(self._told) > _REMEMBERED:
                self._told.popitem(last=False)
        body = payload(snapshot)
        if self.callback is not None:
            try:
                self.callback(body)
            except Exception:
                log.exception("the question callback raised")
        if self.url:
            threading.Thread(target=self._post, args=(self.url, body), daemon=True).start()

    @staticmethod
    def _post(url: str, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode("utf-8")
        request = urllib.request.Request(
            url, data=data, method="POST", headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=HOOK_TIMEOUT_SECS) as answer:
                answer.read()
        except Exception as error:
            log.warning("the question hook %s failed: %s", url, error)
