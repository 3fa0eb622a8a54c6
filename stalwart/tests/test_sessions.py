"""A user's sessions are theirs by construction, and "not yours" is one error everywhere.

Issue 11, point 2: on the main this was written against, `chat(user="bob", session="alice")`
claimed the session named after alice, who then got `NotYourSession` on her own default
session; an answer from the wrong user was an `AnswerError`, a turn a `NotYourSession`.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Project, write_project

from stalwart import Agent, FakeClock, NotYourSession, SessionNotFound, errors


def test_a_session_name_reaches_only_the_users_own_sessions(garden: tuple[Project, Agent]) -> None:
    project, agent = garden
    squat = agent.chat("paint the fence for order 1", user="bob", session="alice")
    assert squat.waiting[0].tool == "paint_fence"
    # alice's default session is hers, untouched by bob's session named "alice".
    assert agent.pending("alice") is None
    mine = agent.chat("plant a tree for order 2", user="alice")
    assert mine.waiting[0].tool == "plant_tree"
    assert mine.session != squat.session
    approved = agent.confirm("alice", "approve", question=mine.waiting[0])
    assert approved.state == "done" and project.calls == [("plant_tree", {"order": 2})]
    # bob's own "alice" session still waits for bob, and only for bob.
    pending = agent.pending("bob", session="alice")
    assert pending is not None and pending.waiting[0].tool == "paint_fence"


def test_a_guessed_session_id_gives_another_user_nothing(garden: tuple[Project, Agent]) -> None:
    project, agent = garden
    alices = agent.chat("paint the fence for order 1", user="alice", session="orders")
    before = agent.store.load(alices.session)
    for guess in (alices.session, "orders", "alice"):
        assert agent.pending("mallory", session=guess) is None
        assert agent.record("mallory", session=guess) == []
        reply = agent.chat("plant a tree for order 9", user="mallory", session=guess)
        assert reply.session not in (alices.session, agent.session_id("alice"))
    assert agent.store.load(alices.session) == before
    assert project.calls == []
    assert agent.session_id("alice", "orders") == alices.session
    # Ids never collide, whatever the names hold: the parts are encoded.
    ids = {
        agent.session_id(user, name)
        for user, name in [("a~b", None), ("a", "b"), ("a", None), ("a", "a"), ("a~b", "c")]
    }
    assert len(ids) == 5


def _two_agents(folder: Path) -> tuple[Agent, Agent]:
    project = write_project(folder)
    text = project.yaml.read_text()
    keeper = text.split("tools:\n  - python")[0]
    other = keeper.replace("  keeper:\n", "  other:\n").replace("agents:\n", "")
    project.yaml.write_text(
        keeper + other + "tools:\n  - python" + text.split("tools:\n  - python")[1]
    )
    return (
        Agent.from_file(project.yaml, "keeper", clock=FakeClock()),
        Agent.from_file(project.yaml, "other", clock=FakeClock()),
    )


def test_not_yours_is_one_error_with_one_code_for_turns_answers_and_reads(tmp_path: Path) -> None:
    keeper, other = _two_agents(tmp_path)
    try:
        reply = keeper.chat("paint the fence for order 1", user="u")
        before = keeper.store.load(reply.session)
        attempts: list[Callable[[], object]] = [
            lambda: other.chat("plant a tree for order 2", user="u"),
            lambda: other.confirm("u", "approve", question=reply.waiting[0]),
            lambda: other.confirm_current("u", "approve"),
            lambda: other.answer_current("u", "skip"),
            lambda: other.pending("u"),
            lambda: other.record("u"),
        ]
        for attempt in attempts:
            with pytest.raises(NotYourSession) as refused:
                attempt()
            assert refused.value.code == "not_your_session"
        assert keeper.store.load(reply.session) == before
    finally:
        keeper.close()
        other.close()
    # The interface's name for it is the same class, with the same code.
    assert SessionNotFound is NotYourSession
    assert not hasattr(errors.ErrorCode, "SESSION_NOT_FOUND")


STALWART = str(Path(sys.executable).parent / "stalwart")


def _chat(project: Project, *args: str, typed: str) -> str:
    done = subprocess.run(
        [STALWART, "chat", str(project.yaml), *args],
        input=typed, capture_output=True, text=True, cwd=project.folder, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_cli_scopes_sessions_to_their_user_without_a_terminal(tmp_path: Path) -> None:
    project = write_project(tmp_path)
    squat = _chat(project, "--user", "bob", "--session", "alice",
                  typed="paint the fence for order 1\n")  # fmt: skip
    assert "Run paint_fence(order=1)?" in squat  # left waiting in bob's session "alice"
    mine = _chat(project, "--user", "alice", typed="plant a tree for order 2\na")
    assert "not_your_session" not in mine
    assert "Run plant_tree(order=2)?" in mine and "plant_tree returned" in mine
