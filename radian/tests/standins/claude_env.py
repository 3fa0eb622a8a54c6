"""The environment the real Claude Code CLI runs in against the Anthropic stand-in.

No key of anyone's: a dummy API key (or a dummy OAuth token, which is what makes Claude Code
track a subscriber's usage limits and print its "You've hit your ... limit" texts and
`rate_limit_event` lines). Telemetry, auto-update and other non-essential traffic are off, so
nothing leaves 127.0.0.1; HOME is a temporary folder, so sessions live there.
"""

from __future__ import annotations

import os
from pathlib import Path

CHECKED_VERSION = "2.1.332"  # the @anthropic-ai/claude-code these tests were checked against
DUMMY_API_KEY = "sk-ant-api03-standin"
DUMMY_OAUTH_TOKEN = "sk-ant-oat01-standin"


def claude_env(
    base_url: str,
    home: Path,
    *,
    oauth: bool = False,
    logged_in: bool = True,
    max_retries: int = 0,
    tz: str = "UTC",
) -> dict[str, str]:
    """`max_retries` 0: Claude Code's own API retries (up to ~3 minutes of backoff) are off, so
    an error reaches its Result at once."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TZ": tz,
        "ANTHROPIC_BASE_URL": base_url,
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": str(max_retries),
    }
    if logged_in:
        env["CLAUDE_CODE_OAUTH_TOKEN" if oauth else "ANTHROPIC_API_KEY"] = (
            DUMMY_OAUTH_TOKEN if oauth else DUMMY_API_KEY
        )
    return env
