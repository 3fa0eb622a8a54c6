"""radian arc with the REAL Codex CLI (`codex exec --json`) as its worker, against the OpenAI
Responses stand-in (standins/openai_responses.py on 127.0.0.1, streaming, no key).

exec_args are the ones `radian arc init --worker codex` ships, the program pointed at the npm
copy; CODEX_HOME names the stand-in as the model provider. Checked against CHECKED_VERSION.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from gate_fixtures.arc_world import add_plan, run_arc, task, write_arc_config
from gate_fixtures.world import GitWorld
from npm_tools import NpmCli, npm_cli
from standins.codex_env import CHECKED_VERSION, MODEL, codex_env
from standins.openai_responses import ResponsesStandIn, error, shell, text

from radian.arc import commands
from radian.arc.clock import FakeClock, parse_utc
from radian.arc.config import DEFAULT_CONFIG
from radian.arc.store import ArcStore
from radian.arc.worker.presets import config_with_worker

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def codex() -> NpmCli:
    return npm_cli("codex", checked=CHECKED_VERSION)


@pytest.fixture
def stand_in() -> Iterator[ResponsesStandIn]:
    with ResponsesStandIn() as server:
        yield server


def use_codex(
    monkeypatch: pytest.MonkeyPatch,
    world: GitWorld,
    stand_in: ResponsesStandIn,
    codex: NpmCli,
    *,
    stages: tuple[str, ...] = (),
    gate_commands: tuple[str, ...] = (),
) -> None:
    for name, value in codex_env(stand_in.url, world.root / "home").items():
        monkeypatch.setenv(name, value)
    shipped = tomllib.loads(config_with_worker(DEFAULT_CONFIG, "codex"))["worker"]
    write_arc_config(world, [str(codex.path), *shipped["exec_args"][1:]], stages=stages,
                     gate_commands=gate_commands)  # fmt: skip
    path = world.repo / ".radian" / "arc.toml"
    resume = json.dumps(shipped["resume_args"])
    path.write_text(path.read_text().replace(
        "[worker]\n", f'[worker]\nresume_args = {resume}\nmodel = "{MODEL}"\n'))  # fmt: skip


def attempt(world: GitWorld, name: str, attempt_id: str) -> dict[str, Any]:
    record = ArcStore(world.repo).read_attempt_result(name, attempt_id)
    assert record is not None
    return record.document()


def test_a_task_is_delivered_and_integrated(
    monkeypatch: pytest.MonkeyPatch,
    world: GitWorld,
    stand_in: ResponsesStandIn,
    codex: NpmCli,
    clock: FakeClock,
) -> None:
    stand_in.replies.extend([
        shell("printf 'def halve(x):\\n    return x / 2\\n' > src/calc/halve.py"),
        shell('git add -A && git commit -q -m "halve"'),
        shell("git push origin HEAD:arc/halve"),
        text("Done.", input_tokens=2000, output_tokens=100),
    ])  # fmt: skip
    use_codex(monkeypatch, world, stand_in, codex, stages=("commands",),
              gate_commands=("test -f src/calc/halve.py",))  # fmt: skip
    add_plan(world, clock, ["halve"])

    lines = run_arc(world, clock)

    assert str(task(world, "halve").state) == "done.integrated", lines
    assert "def halve" in world.read_main("src/calc/halve.py")
    record = attempt(world, "halve", "001")
    assert record["result_format"] == "codex" and record["session_id"]
    prompt = json.dumps(stand_in.requests[0]["input"])
    assert "git push origin HEAD:arc/halve" in prompt  # arc's delivery instructions


def test_a_resumed_thread_costs_what_it_spent_and_a_usage_limit_waits(
    monkeypatch: pytest.MonkeyPatch,
    world: GitWorld,
    stand_in: ResponsesStandIn,
    codex: NpmCli,
) -> None:
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    clock = FakeClock(now)
    reset = int(now.timestamp()) + 20 * 60
    stand_in.replies.extend([
        text("Looked.", input_tokens=1000, output_tokens=100),  # completed, not delivered
        error(429, {"error": {"type": "usage_limit_reached", "message": "limit",
                              "plan_type": "plus", "resets_at": reset}}),
    ])  # fmt: skip
    use_codex(monkeypatch, world, stand_in, codex)
    add_plan(world, clock, ["t1"])

    run_arc(world, clock, once=True)
    first = attempt(world, "t1", "001")
    # 1000 input, 100 output at gpt-5-codex's 1.25 and 10 per million
    assert first["cost_usd"] == pytest.approx(0.00225)
    assert first["next_state"] == "review.rework_pending"
    commands.rework(ArcStore(world.repo), clock, "t1", "Commit and push it.")

    run_arc(world, clock, once=True)
    second = attempt(world, "t1", "002")
    assert second["session_id"] == first["session_id"]  # resumed with `resume <thread id>`
    assert second["model_wait"] is True
    assert second["model_error"]["kind"] == "usage_limit"
    wait = (parse_utc(str(task(world, "t1").retry_at)) - clock.now()).total_seconds()
    assert 19 * 60 <= wait <= 20 * 60 + 1
