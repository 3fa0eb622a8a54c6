"""radian arc with the REAL Claude Code CLI as its worker, against the Anthropic stand-in.

The CLI is @anthropic-ai/claude-code from `make npm-tools` (npm_tools.py: skipped, or failed
under CI, when it cannot run); the model is standins/anthropic_api.py on 127.0.0.1 serving
the streaming Messages API Claude Code speaks. No key, no internet. exec_args are the ones
`radian arc init --worker claude-code` ships, with the program path pointed at the npm copy.
Each test was checked against CHECKED_VERSION.
"""

from __future__ import annotations

import json
import time
import tomllib
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from gate_fixtures.arc_world import add_plan, run_arc, task, write_arc_config
from gate_fixtures.world import GitWorld
from npm_tools import NpmCli, npm_cli
from standins.anthropic_api import AnthropicStandIn, bash, error, hang, refusal, text, write
from standins.claude_env import CHECKED_VERSION, claude_env

from radian.arc.clock import FakeClock, parse_utc
from radian.arc.config import DEFAULT_CONFIG
from radian.arc.store import ArcStore
from radian.arc.worker.presets import config_with_worker

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def claude() -> NpmCli:
    return npm_cli("claude", checked=CHECKED_VERSION)


@pytest.fixture
def stand_in() -> Iterator[AnthropicStandIn]:
    with AnthropicStandIn() as server:
        yield server


@pytest.fixture
def real_clock() -> FakeClock:
    # Claude Code states resets in real time; arc's clock starts at the real now to read them.
    return FakeClock(datetime.now(UTC).replace(microsecond=0))


def shipped_exec_args(program: Path, output_format: str = "stream-json") -> list[str]:
    """`radian arc init --worker claude-code`'s exec_args, the program pointed at npm's copy."""
    config = tomllib.loads(config_with_worker(DEFAULT_CONFIG, "claude-code"))
    args = [str(program), *config["worker"]["exec_args"][1:]]
    if output_format == "json":
        at = args.index("stream-json")
        args[at : at + 3] = ["json"]  # "--output-format json", no --verbose/partial messages
    return args


def use_claude(
    monkeypatch: pytest.MonkeyPatch,
    world: GitWorld,
    stand_in: AnthropicStandIn,
    claude: NpmCli,
    *,
    output_format: str = "stream-json",
    stall_secs: float = 60.0,
    stages: tuple[str, ...] = (),
    gate_commands: tuple[str, ...] = (),
    oauth: bool = False,
    logged_in: bool = True,
) -> None:
    """The worker's environment (arc's own, which the wrapper passes on) and arc.toml."""
    for name in ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    env = claude_env(stand_in.url, world.root / "home", oauth=oauth, logged_in=logged_in)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    write_arc_config(
        world,
        shipped_exec_args(claude.path, output_format),
        stages=stages,
        gate_commands=gate_commands,
    )
    path = world.repo / ".radian" / "arc.toml"
    path.write_text(path.read_text().replace("stall_secs = 30.0", f"stall_secs = {stall_secs}"))


def worktree(world: GitWorld, name: str) -> Path:
    return world.repo / ".radian" / "arc" / "worktrees" / name


def attempt(world: GitWorld, name: str, attempt_id: str) -> dict[str, Any]:
    record = ArcStore(world.repo).read_attempt_result(name, attempt_id)
    assert record is not None
    return record.document()


def test_a_task_is_delivered_and_integrated(
    monkeypatch: pytest.MonkeyPatch,
    world: GitWorld,
    stand_in: AnthropicStandIn,
    claude: NpmCli,
    clock: FakeClock,
) -> None:
    tree = worktree(world, "double")
    stand_in.add(
        write(str(tree / "src" / "calc" / "double.py"), "def double(x):\n    return 2 * x\n"),
        bash("git add -A"),
        bash('git commit -q -m "double"'),
        bash("git push origin HEAD:arc/double"),  # the literal command the brief gives
        text("Done: double added and pushed."),
    )
    use_claude(monkeypatch, world, stand_in, claude, stages=("commands",),
               gate_commands=("test -f src/calc/double.py",))  # fmt: skip
    add_plan(world, clock, ["double"])

    lines = run_arc(world, clock)

    assert str(task(world, "double").state) == "done.integrated", lines
    assert "def double" in world.read_main("src/calc/double.py")
    # the brief Claude Code got ends with arc's delivery instructions
    first = stand_in.agent_requests()[0]
    prompt = json.dumps(first["messages"][0])
    assert "git push origin HEAD:arc/double" in prompt
    record = attempt(world, "double", "001")
    assert record["result_format"] == "claude" and record["cost_usd"] > 0


def test_a_resumed_attempt_costs_what_it_spent(
    monkeypatch: pytest.MonkeyPatch,
    world: GitWorld,
    stand_in: AnthropicStandIn,
    claude: NpmCli,
    clock: FakeClock,
) -> None:
    # attempt 1 spends 0.008 (1000 in, 200 out) and then meets a 529: a model wait;
    # attempt 2 resumes the session and spends 0.024 (3000 in, 600 out).
    stand_in.add(
        bash("git status --short", input_tokens=1000, output_tokens=200),
        error(529, "overloaded_error", "Overloaded"),
        text("Finished.", input_tokens=3000, output_tokens=600),
    )
    use_claude(monkeypatch, world, stand_in, claude)
    add_plan(world, clock, ["t1"])

    lines = run_arc(world, clock, once=True)
    first = attempt(world, "t1", "001")
    assert first["model_wait"] is True and first["model_error"]["kind"] == "unavailable"
    assert any("t1 worker model unavailable -> retry at" in line for line in lines)
    assert task(world, "t1").retry_count == 0
    assert first["cost_usd"] == pytest.approx(0.008)

    clock.advance(6 * 60)
    run_arc(world, clock, once=True)
    second = attempt(world, "t1", "002")
    assert second["session_id"] == first["session_id"]  # resumed
    assert second["session_cost_usd"] == pytest.approx(0.032)  # 2.1.332: the session's total
    assert second["cost_usd"] == pytest.approx(0.024)  # the attempt's own spend
    assert task(world, "t1").total_cost_usd == pytest.approx(0.032)


@pytest.mark.parametrize("output_format", ["json", "stream-json"])
def test_a_usage_limit_is_a_model_wait_until_its_reset(
    monkeypatch: pytest.MonkeyPatch,
    world: GitWorld,
    stand_in: AnthropicStandIn,
    claude: NpmCli,
    real_clock: FakeClock,
    output_format: str,
) -> None:
    reset = int(time.time()) + 25 * 60
    stand_in.add(error(429, "rate_limit_error", "limited", {
        "anthropic-ratelimit-unified-status": "rejected",
        "anthropic-ratelimit-unified-reset": str(reset),
        "anthropic-ratelimit-unified-representative-claim": "five_hour"}))  # fmt: skip
    use_claude(monkeypatch, world, stand_in, claude, output_format=output_format, oauth=True)
    add_plan(world, real_clock, ["t1"])

    run_arc(world, real_clock, once=True)

    record = attempt(world, "t1", "001")
    error_ = record["model_error"]
    assert record["model_wait"] is True and error_["kind"] == "usage_limit"
    assert "You've hit your 5-hour limit · resets" in error_["message"]
    retry_at = parse_utc(str(task(world, "t1").retry_at))
    # 25 minutes (the text gives the minute; the stream's rate_limit_event the second), not the
    # 5 minutes of a first model wait without a reset
    wait = (retry_at - real_clock.now()).total_seconds()
    assert 24 * 60 <= wait <= 25 * 60 + 1
    assert task(world, "t1").retry_count == 0


def test_a_refusal_is_refused_and_the_retry_starts_a_fresh_session(
    monkeypatch: pytest.MonkeyPatch,
    world: GitWorld,
    stand_in: AnthropicStandIn,
    claude: NpmCli,
    clock: FakeClock,
) -> None:
    stand_in.add(refusal(), refusal())  # Claude Code continues once after a safety stop
    use_claude(monkeypatch, world, stand_in, claude)
    add_plan(world, clock, ["t1"])

    lines = run_arc(world, clock, once=True)

    record = attempt(world, "t1", "001")
    assert record["outcome"] == "refused" and record["class"] == "model"
    assert any(line.startswith("t1 refused (model) -> retry at") or "retry at" in line
               for line in lines), lines  # fmt: skip
    assert record["session_id"] and task(world, "t1").session_id is None
    clock.advance(11)
    run_arc(world, clock, once=True)
    intent = json.loads(
        (ArcStore(world.repo).attempt_dir("t1", "002") / "attempt.json").read_text()
    )
    assert intent["resume_session_id"] is None
    assert attempt(world, "t1", "002")["session_id"] != record["session_id"]


@pytest.mark.parametrize("output_format", ["json", "stream-json"])
def test_a_lost_session_makes_the_next_attempt_start_fresh(
    monkeypatch: pytest.MonkeyPatch,
    world: GitWorld,
    stand_in: AnthropicStandIn,
    claude: NpmCli,
    clock: FakeClock,
    output_format: str,
) -> None:
    use_claude(monkeypatch, world, stand_in, claude, output_format=output_format)
    store = add_plan(world, clock, ["t1"])
    with store.task_lock("t1"):
        lost = store.load_task("t1")
        lost.session_id = "0b7c3f43-1111-4222-8333-444455556666"  # Claude Code has no such
        store.save_task(lost)

    run_arc(world, clock, once=True)

    record = attempt(world, "t1", "001")
    assert record["outcome"] == "failed"
    assert task(world, "t1").session_id is None  # not resumed again
    clock.advance(11)
    run_arc(world, clock, once=True)
    assert attempt(world, "t1", "002")["session_id"] not in (None, lost.session_id)


def test_a_silent_busy_bash_call_is_not_a_stall(
    monkeypatch: pytest.MonkeyPatch,
    world: GitWorld,
    stand_in: AnthropicStandIn,
    claude: NpmCli,
    clock: FakeClock,
) -> None:
    # 6 s of work that prints nothing, with stall_secs 3: Claude Code is silent all along.
    busy = 'python3 -c "import time; t = time.time()\nwhile time.time() - t < 6: pass"'
    stand_in.add(bash(busy, timeout_ms=60_000), text("Worked."))
    use_claude(monkeypatch, world, stand_in, claude, stall_secs=3.0)
    path = world.repo / ".radian" / "arc.toml"
    path.write_text(path.read_text().replace("Bash(git add:*)", "Bash(python3:*),Bash(git add:*)"))
    add_plan(world, clock, ["t1"])

    run_arc(world, clock, once=True)

    record = attempt(world, "t1", "001")
    assert record["wrapper_class"] is None and record["outcome"] == "completed"


def test_a_hang_is_a_stall_and_its_session_is_kept(
    monkeypatch: pytest.MonkeyPatch,
    world: GitWorld,
    stand_in: AnthropicStandIn,
    claude: NpmCli,
    clock: FakeClock,
) -> None:
    stand_in.add(hang())  # the stream opens and never says a word
    use_claude(monkeypatch, world, stand_in, claude, stall_secs=3.0)
    add_plan(world, clock, ["t1"])

    lines = run_arc(world, clock, once=True)

    record = attempt(world, "t1", "001")
    assert record["wrapper_class"] == "stall" and record["class"] == "stall", lines
    # the id Claude Code printed in its first system/init line: the retry resumes it
    assert record["session_id"] and task(world, "t1").session_id == record["session_id"]


@pytest.mark.parametrize(
    ("logged_in", "message"),
    [
        (False, "Not logged in · Please run /login"),
        (True, "Invalid API key · Fix external API key"),
    ],
)
def test_an_authentication_failure_stops_retrying(
    monkeypatch: pytest.MonkeyPatch,
    world: GitWorld,
    stand_in: AnthropicStandIn,
    claude: NpmCli,
    clock: FakeClock,
    logged_in: bool,
    message: str,
) -> None:
    stand_in.add(replace(error(401, "authentication_error", "invalid x-api-key"), sticky=True))
    use_claude(monkeypatch, world, stand_in, claude, output_format="json", logged_in=logged_in)
    add_plan(world, clock, ["t1"])

    lines = run_arc(world, clock, once=True)

    record = attempt(world, "t1", "001")
    assert record["outcome"] == "poisoned" and record["next_state"] == "failed.irrecoverable"
    assert record["model_error"] == {"kind": "authentication", "retry_after_secs": None,
                                     "message": message}  # fmt: skip
    assert str(task(world, "t1").state) == "failed.irrecoverable", lines
    assert (
        f"t1 failed (model, poisoned) -> failed.irrecoverable: the worker cannot authenticate "
        f"({message}); log it in, then radian arc rework t1"
    ) in lines
