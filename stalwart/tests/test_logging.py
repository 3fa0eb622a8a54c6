"""stalwart logs through `logging.getLogger("stalwart")` and its children: every move of a
run (rollbacks included), a call's retries, an undo's tries and waits, resumes, the model's
asks and its backoff's waits; silent where the application configures nothing."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import GARDEN_TOOLS, approve_all, write_project

from stalwart import FakeClock, ProviderFailure, logs
from stalwart.cli import main
from stalwart.testing import FAST_MODEL_BACKOFF, STEADY_UNDO_BACKOFF, ScriptedModel, say


def lines(caplog: pytest.LogCaptureFixture, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger]


@pytest.fixture
def info(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger="stalwart")
    return caplog


def test_a_failed_run_logs_its_moves_and_its_rollback(
    tmp_path: Path, info: pytest.LogCaptureFixture
) -> None:
    project = write_project(tmp_path)
    agent = project.agent(clock=FakeClock())
    project.fail.add("water_lawn")
    reply = approve_all(agent, "paint the fence for order 2, then water the lawn for order 2", "u")
    assert reply.state == "rolled_back"
    run = reply.run
    moved = [line for line in lines(info, logs.RUN) if " -> " in line]
    assert moved[-2:] == [
        f"session u run {run}: running -> rolling_back (step_failed)",
        f"session u run {run}: rolling_back -> rolled_back (undone)",
    ]
    assert f"session u run {run}: undoing paint_fence with unpaint_fence, try 1" in lines(
        info, logs.RUN
    )
    agent.close()


def test_an_undo_that_keeps_failing_logs_each_wait_and_gives_up(
    tmp_path: Path, info: pytest.LogCaptureFixture
) -> None:
    project = write_project(tmp_path)
    clock = FakeClock()
    agent = project.agent(clock=clock, undo_backoff=STEADY_UNDO_BACKOFF)
    project.fail.update({"water_lawn", "unpaint_fence"})
    reply = approve_all(agent, "paint the fence for order 2, then water the lawn for order 2", "u")
    assert reply.state == "stuck"
    error = "RuntimeError: unpaint_fence is out of order"
    run_lines = lines(info, logs.RUN)
    waits = [line for line in run_lines if line.startswith("an undo failed")]
    assert waits == [
        f"an undo failed on try 1 of 4 ({error}); the next try in 1 s",
        f"an undo failed on try 2 of 4 ({error}); the next try in 2 s",
        f"an undo failed on try 3 of 4 ({error}); the next try in 4 s",
    ]
    assert clock.slept == [1.0, 2.0, 4.0]
    gave_up = f"session u run {reply.run}: unpaint_fence failed after 4 tries ({error}); "
    assert gave_up + "a person is asked" in run_lines
    agent.close()


RETRIED_TOOLS = (
    GARDEN_TOOLS
    + '''

LOST = [True]


@tool
def weigh_apples(order: int) -> dict:
    """Weigh the apples of an order."""
    _call("weigh_apples", order=order)
    if LOST:
        LOST.pop()
        raise TimeoutError("the scale did not answer")
    return {"order": order, "kilos": 3}
'''
)


def test_a_call_in_doubt_sent_again_is_logged(
    tmp_path: Path, info: pytest.LogCaptureFixture
) -> None:
    project = write_project(tmp_path, tools_source=RETRIED_TOOLS, tool_names=["weigh_apples"])
    agent = project.agent(clock=FakeClock())
    reply = agent.chat("weigh the apples for order 3", user="u")
    assert reply.state == "done"
    assert (
        f"session u run {reply.run}: weigh_apples failed in doubt on try 1 "
        "(TimeoutError: the scale did not answer); sent again under its key"
    ) in lines(info, logs.RUN)
    agent.close()


CRASHING_TOOLS = (
    GARDEN_TOOLS
    + '''

class SimulatedCrash(BaseException):
    """The process stopping mid-call."""


CRASH = [True]


@tool
def weigh_apples(order: int) -> dict:
    """Weigh the apples of an order."""
    if CRASH:
        CRASH.pop()
        raise SimulatedCrash()
    return {"order": order, "kilos": 3}
'''
)


def test_a_resumed_run_is_logged(tmp_path: Path, info: pytest.LogCaptureFixture) -> None:
    project = write_project(tmp_path, tools_source=CRASHING_TOOLS, tool_names=["weigh_apples"])
    first = project.agent(clock=FakeClock())
    assert project.module is not None
    with pytest.raises(project.module.SimulatedCrash):
        first.chat("weigh the apples for order 3", user="u")
    second = project.agent(clock=FakeClock())
    reply = second.resume("u")
    assert reply is not None and reply.state == "done"
    assert f"session u run {reply.run}: resumed, running" in lines(info, logs.RUN)
    for opened in project.agents:
        opened.close()


def test_the_models_asks_and_its_backoffs_waits_are_logged(
    tmp_path: Path, info: pytest.LogCaptureFixture
) -> None:
    project = write_project(tmp_path, on_unread="model")
    clock = FakeClock()
    model = ScriptedModel(
        [ProviderFailure(529, "Overloaded"), say("Nothing to do.")],
        selector="scripted:gardener",
        clock=clock,
        backoff=FAST_MODEL_BACKOFF,
    )
    agent = project.agent(clock=clock, model=model)
    reply = agent.chat("how is the garden today?", user="u")
    assert reply.text == "Nothing to do."
    assert lines(info, logs.MODEL) == [
        f"session u run {reply.run}: asking the model scripted:gardener, ask 1 of at most 8",
        "the model scripted:gardener failed (HTTP 529: Overloaded) on try 1 of 4; "
        "the next try in 0 s",
        f"session u run {reply.run}: the model scripted:gardener answered with 0 tool call(s)",
    ]
    agent.close()


def test_silent_by_default_even_for_a_warning() -> None:
    """No handler configured: the NullHandler keeps Python's last-resort handler quiet."""
    code = (
        "import logging, stalwart\n"
        "logging.getLogger('stalwart.run').warning('a warning nobody asked to see')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0
    assert (done.stdout, done.stderr) == ("", "")
    assert any(
        isinstance(handler, logging.NullHandler)
        for handler in logging.getLogger("stalwart").handlers
    )


def test_the_cli_shows_warnings_not_the_info_lines(tmp_path: Path) -> None:
    """The command line is an application: WARNING and above of `stalwart` reach stderr (as
    before there was a NullHandler), INFO does not."""
    code = (
        "import logging, sys\n"
        "from stalwart.cli import main\n"
        "from stalwart import logs\n"
        "logs.warnings_to_stderr(); logs.warnings_to_stderr()\n"
        "logging.getLogger('stalwart.serve').warning('the question hook failed')\n"
        "logging.getLogger('stalwart.run').info('session u run r: running -> done (done)')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "the question hook failed\n")
    result = CliRunner().invoke(main, ["lint", str(tmp_path / "none.yaml")])
    assert result.exit_code != 0
    root = logging.getLogger("stalwart")
    assert sum(isinstance(h, logs.StderrHandler) for h in root.handlers) == 1
