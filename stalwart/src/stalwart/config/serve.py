"""The `serve:` block of agent.yaml: what `stalwart serve` needs beside the agents.

    serve:
      users: ./users.txt                  # the login form's users file (hashed passwords)
      auth_header: X-Forwarded-User       # trust a reverse proxy's user header instead
      secret_env: STALWART_SECRET         # the cookie-signing secret's variable
      question_hook: https://chat.example/hook   # POSTed to when a question appears
      resume_every_secs: 5                # how often a worker looks for runs left mid-way

Every key may be left out. Relative paths resolve from the yaml's folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class RawServe(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    users: str | None = None
    auth_header: str | None = Field(default=None, pattern=r"^[A-Za-z0-9-]+$")
    secret_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    question_hook: str | None = Field(default=None, pattern=r"^https?://")
    resume_every_secs: float = Field(default=5.0, gt=0)


@dataclass(frozen=True)
class ServeConfig:
    """The `serve:` block, typed; `users` is an absolute path or None (the default file)."""

    users: Path | None = None
    auth_header: str | None = None
    secret_env: str | None = None
    question_hook: str | None = None
    resume_every_secs: float = 5.0


def serve_config(raw: RawServe | None, folder: Path) -> ServeConfig:
    if raw is None:
        return ServeConfig()
    return ServeConfig(
        users=(folder / raw.users).resolve() if raw.users else None,
        auth_header=raw.auth_header,
        secret_env=raw.secret_env,
        question_hook=raw.question_hook,
        resume_every_secs=raw.resume_every_secs,
    )
