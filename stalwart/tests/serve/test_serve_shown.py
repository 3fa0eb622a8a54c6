"""The web page shows a value's hidden characters escaped, as the confirmation does
(issue 11, point 4): on the main this was written against they reached the page raw."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from stalwart.serve import Service
from stalwart.serve.app import create_app

from .serve_support import OPERATOR_ENV, OPERATOR_TOKEN, InstantClock, sign_in, write_desk

NOTE = """

@tool(writes=True, irreversible=True)
def send_note(to: str) -> dict[str, object]:
    CALLS.append("send_note")
    return {"sent_to": to}
"""


def test_the_page_and_the_api_show_a_bidi_override_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(OPERATOR_ENV, OPERATOR_TOKEN)
    desk = write_desk(tmp_path / "desk", more_source=NOTE, more_tools=", send_note")
    service = Service(desk.config(), clock=InstantClock(), secret=b"s")
    with TestClient(create_app(service)) as client:
        headers = sign_in(client, "alice")
        turn = {"text": 'send the note to "bob\u202etxt.exe"'}
        sent = client.post("/api/sessions/alice~s-note/turns", json=turn, headers=headers)
        question = sent.json()["waiting"][0]
        assert question["args"] == {"to": "bob\u202etxt.exe"}
        assert question["text"].startswith('Run send_note(to="bob\\u202etxt.exe")?')
        page = client.get("/s/alice~s-note").text
        assert "bob\\u202etxt.exe" in page
        assert "\u202e" not in page
