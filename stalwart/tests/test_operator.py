"""The operator's undo: a thread's last run undone from outside it, with the operator token."""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import Project
from service import turn, write_service_project
from terminal import on_terminal, without_terminal

from stalwart import Agent, AnswerError, FakeClock, OperatorTokenError
from stalwart.cli import main

TOKEN = "op-7f3a9c-never-to-be-written-down"


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[tuple[Project, Agent]]:
    project = write_service_project(tmp_path)
    agent = project.agent(clock=FakeClock())
    agent.set_operator_token(TOKEN)
    yield project, agent
    for opened in project.agents:
        opened.close()


def _done_run(agent: Agent) -> None:
    reply = agent.chat(turn(("charge_card", 1), ("book_slot", 2), ("send_note", 3)), user="u")
    while reply.waiting:
        reply = agent.confirm_current("u", "approve")
    assert reply.state == "done"


def _sends(project: Project) -> list[str]:
    assert project.module is not None
    return [name for name, _, _ in project.module.CALLS]


def test_the_operator_undoes_a_finished_run_last_write_first_and_rewinds_it(
    desk: tuple[Project, Agent],
) -> None:
    project, agent = desk
    _done_run(agent)
    reply = agent.operator_undo("u", token=TOKEN)
    assert reply.state == "rolled_back"
    assert reply.text == (
        "This run stopped: an operator undid it. Undone, latest first: book_slot (by free_slot), "
        "charge_card (by refund_card). Not undoable, and left as they are: send_note."
    )
    assert _sends(project)[3:] == ["free_slot", "refund_card"]
    assert [(m.role, m.content) for m in agent.memory("u")][1:] == [("assistant", reply.text)]
    with pytest.raises(AnswerError, match="has no write left to undo; nothing was changed"):
        agent.operator_undo("u", token=TOKEN)


def _snapshot(agent: Agent) -> Any:
    return agent.store.load("u")


@pytest.mark.parametrize(
    "token",
    [None, "", "op-7f3a9c-never-to-be-written-dowN", TOKEN + " ", TOKEN + "\ud800", "x" * 5000],
)
def test_a_wrong_or_missing_token_changes_nothing(
    desk: tuple[Project, Agent], token: str | None
) -> None:
    project, agent = desk
    _done_run(agent)
    before = _snapshot(agent)
    with pytest.raises(OperatorTokenError, match="wrong or missing; nothing was changed") as error:
        agent.operator_undo("u", token=token)
    assert error.value.code == "operator_token"
    assert _snapshot(agent) == before
    assert len(_sends(project)) == 3


def test_no_token_set_changes_nothing(tmp_path: Path) -> None:
    project = write_service_project(tmp_path)
    agent = project.agent(clock=FakeClock())
    _done_run(agent)
    with pytest.raises(OperatorTokenError, match="No operator token is set: there is no verifier"):
        agent.operator_undo("u", token=TOKEN)
    assert len(_sends(project)) == 3
    for opened in project.agents:
        opened.close()


def test_the_token_never_reaches_the_record_or_a_log(
    desk: tuple[Project, Agent], caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    project, agent = desk
    caplog.set_level(logging.DEBUG)
    _done_run(agent)
    with pytest.raises(OperatorTokenError) as wrong:
        agent.operator_undo("u", token=TOKEN[:-1])
    agent.operator_undo("u", token=TOKEN)
    agent.close()
    files = [p for p in tmp_path.iterdir() if p.name.startswith("record.sqlite") and p.is_file()]
    assert files, "the record is on disk"
    for path in files:
        assert TOKEN.encode() not in path.read_bytes()
        assert TOKEN[:-1].encode() not in path.read_bytes()
    assert TOKEN[:-1] not in caplog.text and TOKEN[:-1] not in str(wrong.value)


def test_a_run_waiting_on_a_question_is_answered_not_undone_by_the_operator(
    desk: tuple[Project, Agent],
) -> None:
    project, agent = desk
    agent.chat(turn(("book_slot", 1), ("charge_card", 2)), user="u")
    agent.confirm_current("u", "approve")
    before = _snapshot(agent)
    with pytest.raises(AnswerError, match="waits for an answer first: Run charge_card"):
        agent.operator_undo("u", token=TOKEN)
    assert _snapshot(agent) == before
    with pytest.raises(AnswerError, match="has no run to undo"):
        agent.operator_undo("nobody", token=TOKEN)


def test_the_operator_finishes_an_abandoned_rollback(desk: tuple[Project, Agent]) -> None:
    project, agent = desk
    assert project.module is not None
    project.module.PLAN.update({"free_slot": ["error"] * 4, "stamp_form": ["error"]})
    reply = agent.chat(turn(("charge_card", 1), ("book_slot", 2), ("stamp_form", 3)), user="u")
    while reply.waiting and reply.waiting[0].kind == "confirm":
        reply = agent.confirm_current("u", "approve")
    assert agent.answer_current("u", "abandon").state == "abandoned"
    reply = agent.operator_undo("u", token=TOKEN)
    assert reply.text == (
        "This run stopped: an operator undid it. Undone, latest first: "
        "book_slot (by free_slot), charge_card (by refund_card)."
    )
    assert _sends(project)[-2:] == ["free_slot", "refund_card"]


def _abandoned(project: Project, agent: Agent) -> dict[str, str]:
    """A rollback stuck on free_slot and abandoned: book_slot and charge_card are left to
    be undone by hand. The call id of each write, by its tool."""
    assert project.module is not None
    project.module.PLAN.update({"free_slot": ["error"] * 4, "stamp_form": ["error"]})
    reply = agent.chat(turn(("charge_card", 1), ("book_slot", 2), ("stamp_form", 3)), user="u")
    while reply.waiting and reply.waiting[0].kind == "confirm":
        reply = agent.confirm_current("u", "approve")
    reply = agent.answer_current("u", "abandon")
    assert reply.text.endswith("still to be undone by hand: book_slot, charge_card.")
    return {c.tool: c.call_id for c in agent.record("u") if c.kind == "write"}


def test_the_operator_does_not_undo_again_what_a_person_undid_by_hand_after_an_abandon(
    desk: tuple[Project, Agent],
) -> None:
    project, agent = desk
    writes = _abandoned(project, agent)
    # The person frees the slot by hand, as the reply told them, and says so.
    told = agent.undone_by_hand("u", writes["book_slot"])
    assert (told.state, told.text) == (
        "abandoned",
        "This run stopped: stamp_form failed (RuntimeError). Undone, latest first: book_slot "
        "(by hand). The rollback was abandoned; still to be undone by hand: charge_card.",
    )
    assert agent.pending("u") == told
    sent = len(_sends(project))

    reply = agent.operator_undo("u", token=TOKEN)
    assert reply.text == (
        "This run stopped: an operator undid it. Undone, latest first: "
        "book_slot (by hand), charge_card (by refund_card)."
    )
    assert _sends(project)[sent:] == ["refund_card"], "the slot is not freed a second time"
    undos = [(c.tool, c.status) for c in agent.record("u") if c.kind == "undo"]
    assert undos == [("free_slot", "by_hand"), ("refund_card", "ran")]


def test_a_write_undone_by_hand_is_said_once_and_only_of_a_write_left_to_a_person(
    desk: tuple[Project, Agent],
) -> None:
    project, agent = desk
    _done_run(agent)
    done = {c.tool: c.call_id for c in agent.record("u")}
    before = _snapshot(agent)
    with pytest.raises(AnswerError, match=r"is done: only an abandoned rollback or an operator"):
        agent.undone_by_hand("u", done["charge_card"])
    assert _snapshot(agent) == before

    writes = _abandoned(project, agent)
    # The latest run's writes only, each once: nothing is recorded for any other.
    for call in (done["charge_card"], writes["stamp_form"], "u#2:9", "no such call"):
        before = _snapshot(agent)
        with pytest.raises(AnswerError, match=r"has no write '.*' left to be undone by hand"):
            agent.undone_by_hand("u", call)
        assert _snapshot(agent) == before
    agent.undone_by_hand("u", writes["charge_card"])  # never tried: its undo is by hand
    before = _snapshot(agent)
    with pytest.raises(AnswerError, match="left to be undone by hand; nothing was changed"):
        agent.undone_by_hand("u", writes["charge_card"])
    assert _snapshot(agent) == before
    assert agent.undone_by_hand("u", writes["book_slot"]).text == (
        "This run stopped: stamp_form failed (RuntimeError). Undone, latest first: "
        "book_slot (by hand), charge_card (by hand)."
    )
    with pytest.raises(AnswerError, match="has no write left to undo; nothing was changed"):
        agent.operator_undo("u", token=TOKEN)
    assert "refund_card" not in _sends(project) and _sends(project).count("free_slot") == 4


def test_the_operator_does_not_undo_a_write_answered_done_by_hand_before_the_abandon(
    desk: tuple[Project, Agent],
) -> None:
    """A write the person answered `done by hand` for, before abandoning the rest, is
    undone already in the record: the operator's undo leaves it as it is."""
    project, agent = desk
    assert project.module is not None
    project.module.PLAN.update(
        {"free_slot": ["error"] * 4, "refund_card": ["error"] * 4, "stamp_form": ["error"]}
    )
    reply = agent.chat(turn(("charge_card", 1), ("book_slot", 2), ("stamp_form", 3)), user="u")
    while reply.waiting and reply.waiting[0].kind == "confirm":
        reply = agent.confirm_current("u", "approve")
    assert agent.answer_current("u", "done by hand").waiting[0].tool == "refund_card"
    assert agent.answer_current("u", "abandon").text.endswith(
        "Undone, latest first: book_slot (by hand). The rollback was abandoned; still to be "
        "undone by hand: charge_card."
    )
    sent = len(_sends(project))
    reply = agent.operator_undo("u", token=TOKEN)
    assert reply.text == (
        "This run stopped: an operator undid it. Undone, latest first: "
        "book_slot (by hand), charge_card (by refund_card)."
    )
    assert _sends(project)[sent:] == ["refund_card"]


# --- the command ---


def test_operator_undo_command_reads_the_token_from_stdin_or_a_named_variable(
    desk: tuple[Project, Agent],
) -> None:
    project, agent = desk
    _done_run(agent)
    wrong = CliRunner().invoke(
        main,
        ["operator-undo", str(project.yaml), "u", "--token-env", "MY_TOKEN"],
        env={"MY_TOKEN": "not-it"},
    )
    assert wrong.exit_code == 3
    assert wrong.stderr == "The operator token is wrong or missing; nothing was changed.\n"
    unset = CliRunner().invoke(
        main, ["operator-undo", str(project.yaml), "u", "--token-env", "UNSET_TOKEN_VARIABLE"]
    )
    assert unset.exit_code == 3
    assert unset.stderr == (
        "The variable UNSET_TOKEN_VARIABLE holds no operator token here; nothing was changed.\n"
    )
    asked = CliRunner().invoke(main, ["operator-undo", str(project.yaml), "u"], input=TOKEN + "\n")
    assert asked.exit_code == 0, asked.output
    assert TOKEN not in asked.output
    assert "an operator undid it" in asked.stdout
    again = CliRunner().invoke(main, ["operator-undo", str(project.yaml), "u"], input=TOKEN)
    assert again.exit_code == 4
    assert "no write left to undo" in again.stderr


def test_resume_command_with_nothing_left_mid_way_says_so(
    desk: tuple[Project, Agent],
) -> None:
    project, agent = desk
    _done_run(agent)
    result = CliRunner().invoke(main, ["resume", str(project.yaml)])
    said = f"Nothing to resume: no run of agent {agent.name!r} was left mid-way."
    assert (result.exit_code, result.output) == (0, said + "\n")
    from stalwart.texts import nothing_to_resume

    assert said == nothing_to_resume([agent.name])


# --- the verifier: what is kept of the token ---


def test_only_a_salted_scrypt_verifier_is_kept_and_setting_again_rotates_it(
    desk: tuple[Project, Agent],
) -> None:
    project, agent = desk
    path = agent.config.operator_token
    assert path == project.folder / "agent.operator-token"
    kept = json.loads(path.read_text())
    assert set(kept) == {"format", "kdf", "n", "r", "p", "dklen", "salt", "hash"}
    assert (kept["kdf"], kept["n"], kept["r"], kept["p"]) == ("scrypt", 2**14, 8, 1)
    assert TOKEN not in path.read_text() and TOKEN.encode().hex() not in path.read_text()
    assert path.stat().st_mode & 0o777 == 0o600
    agent.set_operator_token(TOKEN)
    assert json.loads(path.read_text())["salt"] != kept["salt"], "a fresh salt each time"
    agent.check_operator_token(TOKEN)
    rotated = "op-the-next-token-0123456789"
    agent.set_operator_token(rotated)
    agent.check_operator_token(rotated)
    with pytest.raises(OperatorTokenError):
        agent.check_operator_token(TOKEN)


def test_every_check_hashes_and_compares_in_constant_time(
    desk: tuple[Project, Agent], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, agent = desk
    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    for token in (TOKEN, "wrong-token-of-some-length", "", None, "\udcff" * 20):
        with contextlib.suppress(OperatorTokenError):
            agent.check_operator_token(token)
    assert len(compared) == 5, "every check, a refused one too, is one constant-time compare"
    assert all(len(a) == len(b) == 32 for a, b in compared), "digests, never tokens"


@pytest.mark.parametrize(
    ("token", "refusal"),
    [
        ("", "cannot be empty"),
        ("short", "from 16 to 1024 characters"),
        (" " + TOKEN, "cannot start or end with a space"),
        (TOKEN + "\udc80", "cannot be encoded as UTF-8"),
    ],
)
def test_a_token_that_cannot_be_set_is_refused_and_the_old_one_kept(
    desk: tuple[Project, Agent], token: str, refusal: str
) -> None:
    _, agent = desk
    before = agent.config.operator_token.read_bytes()
    with pytest.raises(OperatorTokenError, match=refusal):
        agent.set_operator_token(token)
    assert agent.config.operator_token.read_bytes() == before


def test_a_verifier_file_edited_to_cost_too_much_is_refused_not_run(
    desk: tuple[Project, Agent],
) -> None:
    _, agent = desk
    kept = json.loads(agent.config.operator_token.read_text())
    agent.config.operator_token.write_text(json.dumps({**kept, "n": 2**30}))
    with pytest.raises(OperatorTokenError, match="verifier at .* cannot be read"):
        agent.check_operator_token(TOKEN)


# --- the commands in a subprocess: with no terminal, and on a pty ---


def _victim(tmp_path: Path) -> Project:
    project = write_service_project(tmp_path)
    agent = project.agent(clock=FakeClock())
    _done_run(agent)
    agent.close()
    return project


def _undone(project: Project) -> bool:
    with project.agent() as agent:
        return any(call.kind == "undo" for call in agent.record("u"))


def test_a_token_made_up_in_the_environment_undoes_nothing(tmp_path: Path) -> None:
    project = _victim(tmp_path)
    old = project.yaml.read_text()
    project.yaml.write_text(old + "operator_token_env: OPS_TOKEN\n")
    made_up = without_terminal(
        ["operator-undo", str(project.yaml), "u"], env={"OPS_TOKEN": "anything"}
    )
    assert made_up.code == 2, made_up
    assert "operator_token_env is no longer read" in made_up.stderr
    project.yaml.write_text(old)
    assert not _undone(project)
    still = without_terminal(
        ["operator-undo", str(project.yaml), "u", "--token-env", "OPS_TOKEN"],
        env={"OPS_TOKEN": "anything"},
    )
    verifier = project.folder / "agent.operator-token"
    assert (still.code, still.stderr) == (
        3,
        f"No operator token is set: there is no verifier at {verifier} (stalwart "
        "operator-token set writes one); nothing was changed.\n",
    )
    set_ = without_terminal(["operator-token", "set", str(project.yaml)], TOKEN.encode() + b"\n")
    assert set_.code == 0, set_
    assert TOKEN not in set_.shown + set_.stderr
    wrong = without_terminal(
        ["operator-undo", str(project.yaml), "u", "--token-env", "OPS_TOKEN"],
        env={"OPS_TOKEN": "anything"},
    )
    assert (wrong.code, wrong.stderr) == (
        3,
        "The operator token is wrong or missing; nothing was changed.\n",
    )
    assert not _undone(project)


def test_with_no_terminal_and_no_token_it_exits_3_without_a_getpass_warning(
    tmp_path: Path,
) -> None:
    project = _victim(tmp_path)
    assert without_terminal(["operator-token", "set", str(project.yaml)], TOKEN.encode()).code == 0
    for stdin in (b"", b"\n", b"not-the-token\n"):
        ran = without_terminal(["operator-undo", str(project.yaml), "u"], stdin)
        assert (ran.code, ran.stderr) == (
            3,
            "The operator token is wrong or missing; nothing was changed.\n",
        ), stdin
    assert not _undone(project)
    ran = without_terminal(["operator-undo", str(project.yaml), "u"], TOKEN.encode() + b"\r\n")
    assert ran.code == 0, ran
    assert ran.shown.startswith("This run stopped: an operator undid it.")


def test_a_token_that_cannot_be_encoded_is_refused_cleanly(tmp_path: Path) -> None:
    project = _victim(tmp_path)
    bad = b"op-\xff\xfe-not-utf-8-at-all-0123"
    setting = without_terminal(["operator-token", "set", str(project.yaml)], bad + b"\n")
    assert setting.code == 3, setting
    assert setting.stderr == (
        "The operator token has characters that cannot be encoded as UTF-8 (such as a lone "
        "surrogate); nothing was changed.\n"
    )
    assert not (project.folder / "agent.operator-token").exists()
    assert without_terminal(["operator-token", "set", str(project.yaml)], TOKEN.encode()).code == 0
    for ran in (
        without_terminal(["operator-undo", str(project.yaml), "u"], bad),
        without_terminal(
            ["operator-undo", str(project.yaml), "u", "--token-env", "OPS"], env={"OPS": bad}
        ),
    ):
        assert (ran.code, ran.stderr) == (
            3,
            "The operator token is wrong or missing; nothing was changed.\n",
        )
    assert not _undone(project)


def test_on_a_terminal_the_token_is_asked_without_echo(tmp_path: Path) -> None:
    project = _victim(tmp_path)
    differ = on_terminal(["operator-token", "set", str(project.yaml)], [TOKEN, TOKEN + "x"])
    assert differ.code == 3, differ
    assert "The two tokens differ; nothing was changed." in differ.shown
    set_ = on_terminal(["operator-token", "set", str(project.yaml)], [TOKEN, TOKEN])
    assert set_.code == 0, set_
    assert "Operator token:" in set_.shown and "The same token again:" in set_.shown
    assert TOKEN not in set_.shown, "typed without echo"
    wrong = on_terminal(["operator-undo", str(project.yaml), "u"], ["made-up-token-1234567"])
    assert wrong.code == 3
    assert "The operator token is wrong or missing; nothing was changed." in wrong.shown
    assert not _undone(project)
    right = on_terminal(["operator-undo", str(project.yaml), "u"], [TOKEN])
    assert right.code == 0, right
    assert TOKEN not in right.shown
    assert "This run stopped: an operator undid it." in right.shown
    assert _undone(project)
