"""Capture the real Claude Code CLI's output for each case the adapter handles.

    .venv/bin/python radian/tests/capture_claude_fixtures.py

Runs the CLI installed by `make npm-tools` against the Anthropic stand-in and writes
cli_fixtures/claude-code/<version>/<case>.stdout and .stderr, and manifest.json (the version,
the capture time that reset times are relative to, each case's arguments and exit code).
Run it again after a version bump and check test_claude_code_adapter.py against the new files.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

from capture_cli import capturing  # noqa: E402
from npm_tools import find_cli  # noqa: E402
from standins.anthropic_api import AnthropicStandIn, Reply, bash, error, refusal, text  # noqa: E402
from standins.claude_env import claude_env  # noqa: E402

STREAM = ["--output-format", "stream-json", "--verbose"]
JSON = ["--output-format", "json"]
TOOLS = ["--permission-mode", "default", "--allowedTools", "Bash(git status:*)"]
LOST_SESSION = "0b7c3f43-1111-4222-8333-444455556666"


def limit_headers(claim: str, reset: int) -> dict[str, str]:
    return {
        "anthropic-ratelimit-unified-status": "rejected",
        "anthropic-ratelimit-unified-reset": str(reset),
        "anthropic-ratelimit-unified-representative-claim": claim,
    }


def cases(reset: int) -> dict[str, tuple[list[str], list[Reply], dict[str, object]]]:
    sticky_refusal = replace(refusal(), sticky=True)
    return {
        "success.stream-json": (STREAM + TOOLS, [bash("git status --short"), text("Done.")], {}),
        "success.json": (JSON, [text("Done.")], {}),
        "usage_limit_five_hour.stream-json": (
            STREAM,
            [error(429, "rate_limit_error", "limited", limit_headers("five_hour", reset))],
            {"oauth": True},
        ),
        "usage_limit_five_hour.json": (
            JSON,
            [error(429, "rate_limit_error", "limited", limit_headers("five_hour", reset))],
            {"oauth": True},
        ),
        "usage_limit_weekly.json": (
            JSON,
            [error(429, "rate_limit_error", "limited", limit_headers("seven_day", reset))],
            {"oauth": True, "tz": "America/New_York"},
        ),
        "usage_limit_opus.json": (
            JSON,
            [error(429, "rate_limit_error", "limited", limit_headers("seven_day_opus", reset))],
            {"oauth": True, "tz": "Asia/Kuala_Lumpur"},
        ),
        "usage_limit_sonnet.stream-json": (
            STREAM,
            [error(429, "rate_limit_error", "limited", limit_headers("seven_day_sonnet", reset))],
            {"oauth": True, "tz": "Europe/Warsaw"},
        ),
        "rate_limit.json": (JSON, [error(429, "rate_limit_error", "Rate limited")], {}),
        "overloaded.json": (JSON, [error(529, "overloaded_error", "Overloaded")], {}),
        "overloaded.stream-json": (STREAM, [error(529, "overloaded_error", "Overloaded")], {}),
        "refusal.stream-json": (STREAM, [sticky_refusal], {}),
        "refusal.json": (JSON, [sticky_refusal], {}),
        "lost_session.json": (JSON + ["--resume", LOST_SESSION], [], {}),
        "lost_session.stream-json": (STREAM + ["--resume", LOST_SESSION], [], {}),
        "invalid_key.json": (
            JSON,
            [replace(error(401, "authentication_error", "invalid x-api-key"), sticky=True)],
            {},
        ),
        "not_logged_in.json": (JSON, [], {"logged_in": False}),
        "not_logged_in.stream-json": (STREAM, [], {"logged_in": False}),
    }


def main() -> int:
    cli = find_cli("claude")
    if isinstance(cli, str):
        print(cli, file=sys.stderr)
        return 1
    with capturing(cli, "claude-code", lambda at: at + 2 * 3600 + 17 * 60) as capture:
        for name, (args, replies, options) in cases(capture.reset_at).items():
            with AnthropicStandIn(replies) as stand_in:
                env = claude_env(stand_in.url, capture.home, **options)  # type: ignore[arg-type]
                argv = ["-p", "Say hello.", *args]
                capture.keep(name, capture.run(argv, env), argv=argv, options=options)
        # A resumed session: the second process's total_cost_usd is its own spend only.
        with AnthropicStandIn(
            [text("First.", output_tokens=200), text("Second.", output_tokens=200)]
        ) as s:
            env = claude_env(s.url, capture.home)
            first = capture.run(["-p", "One.", *JSON], env, check=True)
            session = json.loads(first.stdout)["session_id"]
            second = capture.run(["-p", "Two.", *JSON, "--resume", session], env, check=True)
        (capture.out / "resume_first.json.stdout").write_text(first.stdout)
        (capture.out / "resume_second.json.stdout").write_text(second.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
