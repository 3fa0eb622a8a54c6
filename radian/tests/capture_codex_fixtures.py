"""Capture the real Codex CLI's `codex exec --json` output for each case the adapter handles.

    .venv/bin/python radian/tests/capture_codex_fixtures.py

Writes cli_fixtures/codex/<version>/<case>.stdout and .stderr and manifest.json (the
version, the capture time that reset times are relative to, each case's arguments).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

from capture_cli import capturing  # noqa: E402
from npm_tools import find_cli  # noqa: E402
from standins.codex_env import codex_env  # noqa: E402
from standins.openai_responses import Reply, ResponsesStandIn, error, shell, text  # noqa: E402

EXEC = ["exec", "--json", "--skip-git-repo-check"]
LOST_THREAD = "01a230a5-0000-7000-8000-000000000000"


def cases(reset_at: int) -> dict[str, tuple[list[str], list[Reply]]]:
    usage_limit = {
        "error": {
            "type": "usage_limit_reached",
            "message": "You've hit your limit",
            "plan_type": "plus",
            "resets_at": reset_at,
        }
    }
    return {
        "success": (
            EXEC,
            [shell("git status --short"), text("Done.", input_tokens=2000, cached_tokens=500)],
        ),
        "usage_limit": (EXEC, [error(429, usage_limit)]),
        "rate_limit": (
            EXEC,
            [
                error(
                    429, {"error": {"type": "rate_limit_exceeded", "message": "Rate limit reached"}}
                )
            ],
        ),
        "unavailable": (
            EXEC,
            [
                error(
                    503, {"error": {"type": "server_error", "message": "The server is overloaded"}}
                )
            ],
        ),
        "unauthorized": (
            EXEC,
            [
                error(
                    401,
                    {
                        "error": {
                            "type": "invalid_request_error",
                            "code": "invalid_api_key",
                            "message": "Incorrect API key provided",
                        }
                    },
                )
            ],
        ),
        "lost_thread": ([*EXEC, "resume", LOST_THREAD], []),
    }


def main() -> int:
    cli = find_cli("codex")
    if isinstance(cli, str):
        print(cli, file=sys.stderr)
        return 1
    # Codex prints the reset to the minute.
    with capturing(cli, "codex", lambda at: (at // 60 + 97) * 60) as capture:

        def run(args: list[str], replies: list[Reply], name: str) -> str:
            with ResponsesStandIn(replies) as stand_in:
                done = capture.run([*args, "Say hello."], codex_env(stand_in.url, capture.home))
            capture.keep(name, done, argv=args)
            return str(done.stdout)

        for name, (args, replies) in cases(capture.reset_at).items():
            run(args, replies, name)
        first = run(EXEC, [text("First.", input_tokens=1000, output_tokens=100)], "resume_first")
        thread = json.loads(first.splitlines()[0])["thread_id"]
        run(
            [*EXEC, "resume", thread],
            [text("Second.", input_tokens=3000, output_tokens=300)],
            "resume_second",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
