"""The operator's undo: a thread's last run undone from outside it, with the operator token."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import Project
from service import turn, write_service_project

from stalwart import Agent, AnswerError, FakeClock, OperatorTokenError
from stalwart.cli import main

TOKEN = "op-7f3a9c-never-to-be-written-down"
ENV = "SHOP_OPERATOR_TOKEN"


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Project, Agent]]:
    project = write_service_project(tmp_path)
    project.yaml.write_text(project.yaml.read_text() + f"operator_token_env: {ENV}\n")
    monkeypatch.setenv(ENV, TOKEN)
    agent = project.agent(clock=FakeClock())
    yield project, agent
    for opened in project.agents:
        opened.close()


def _done_run(agent: Agent) -> None:
    reply = agent.chat(turn(("charge_card", 1), ("book_slot", 2), ("send_note", 3)), user="u")
    while reply.waiting:
        reply = agent.confirm("u", "approve")
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


@pytest.mark.parametrize("token", [None, "", "op-7f3a9c-never-to-be-written-dowN", TOKEN + " "])
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


def test_no_token_configured_or_its_variable_unset_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = write_service_project(tmp_path)
    agent = project.agent(clock=FakeClock())
    _done_run(agent)
    with pytest.raises(OperatorTokenError, match="No operator token is configured"):
        agent.operator_undo("u", token=TOKEN)
    project.yaml.write_text(project.yaml.read_text() + f"operator_token_env: {ENV}\n")
    monkeypatch.delenv(ENV, raising=False)
    configured = project.agent(clock=FakeClock())
    with pytest.raises(OperatorTokenError, match=f"variable {ENV} is not set here"):
        configured.operator_undo("u", token=TOKEN)
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
    files = [p for p in tmp_path.iterdir() if p.name.startswith("record.sqlite")]
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
    agent.confirm("u", "approve")
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
        reply = agent.confirm("u", "approve")
    assert agent.answer("u", "abandon").state == "abandoned"
    reply = agent.operator_undo("u", token=TOKEN)
    assert reply.text == (
        "This run stopped: an operator undid it. Undone, latest first: "
        "book_slot (by free_slot), charge_card (by refund_card)."
    )
    assert _sends(project)[-2:] == ["free_slot", "refund_card"]


# --- the command ---


def test_operator_undo_command_reads_the_token_from_the_environment(
    desk: tuple[Project, Agent],
) -> None:
    project, agent = desk
    _done_run(agent)
    result = CliRunner().invoke(main, ["operator-undo", str(project.yaml), "u"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("This run stopped: an operator undid it. Undone, latest")
    assert TOKEN not in result.output


def test_operator_undo_command_takes_another_variable_or_asks_without_echo(
    desk: tuple[Project, Agent], monkeypatch: pytest.MonkeyPatch
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
    asked = CliRunner().invoke(
        main,
        ["operator-undo", str(project.yaml), "u", "--token-env", "UNSET_TOKEN_VARIABLE"],
        input=TOKEN + "\n",
    )
    assert asked.exit_code == 0, asked.output
    assert TOKEN not in asked.output, "the prompt does not echo the token"
    assert "an operator undid it" in asked.stdout
    again = CliRunner().invoke(main, ["operator-undo", str(project.yaml), "u"])
    assert again.exit_code == 4
    assert "no write left to undo" in again.stderr


def test_resume_command_with_nothing_left_mid_way_prints_nothing(
    desk: tuple[Project, Agent],
) -> None:
    project, agent = desk
    _done_run(agent)
    result = CliRunner().invoke(main, ["resume", str(project.yaml)])
    assert (result.exit_code, result.output) == (0, "")
