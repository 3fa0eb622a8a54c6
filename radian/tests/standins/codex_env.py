"""The environment and config the real Codex CLI runs in against the Responses stand-in.

CODEX_HOME is a temporary folder whose config.toml names a model provider at the stand-in
(`wire_api = "responses"`, no env_key, so no key is needed) with Codex's own retries off, so an
error reaches its output at once. HOME is a temporary folder too.
"""

from __future__ import annotations

import os
from pathlib import Path

CHECKED_VERSION = "0.171.0"  # the @openai/codex these tests were checked against
MODEL = "gpt-5-codex"


def codex_env(base_url: str, home: Path, *, retries: int = 0) -> dict[str, str]:
    codex_home = home / "codex-home"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "{MODEL}"\n'
        'model_provider = "standin"\n'
        "[model_providers.standin]\n"
        'name = "standin"\n'
        f'base_url = "{base_url}/v1"\n'
        'wire_api = "responses"\n'
        f"request_max_retries = {retries}\n"
        f"stream_max_retries = {retries}\n"
        "[analytics]\nenabled = false\n"
    )
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TZ": "UTC",
        "CODEX_HOME": str(codex_home),
    }
