"""The radian worker's sessions: one JSON file each, under the repository's
`.radian/worker/sessions/`, so any later process (the next attempt) can load one.

The repository is the one the working directory belongs to (its common git dir's parent, so
a worktree's sessions live in the main repository, beside arc's own files); a folder outside
any repository keeps them in its own `.radian/worker/sessions/`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from radian.worker import texts

SESSIONS_DIR = Path(".radian") / "worker" / "sessions"
_SESSION_ID = re.compile(r"^rw-[0-9a-f]{32}$")


@dataclass
class Session:
    session_id: str
    cwd: str
    model: str
    conversation: list[dict[str, Any]] = field(default_factory=list)


def sessions_folder(cwd: Path) -> Path:
    done = subprocess.run(
        ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    root = Path(done.stdout.strip()).parent if done.returncode == 0 else cwd
    return root / SESSIONS_DIR


def new_session(cwd: Path, model: str) -> Session:
    return Session(session_id=f"rw-{uuid.uuid4().hex}", cwd=str(cwd), model=model)


def load_session(folder: Path, session_id: str) -> Session:
    """The stored session; LookupError when there is none by that id (or the id is not one of
    ours, which could name a path)."""
    path = folder / f"{session_id}.json"
    if not _SESSION_ID.match(session_id) or not path.is_file():
        raise LookupError(texts.NO_SUCH_SESSION.format(session_id=session_id, folder=folder))
    data = json.loads(path.read_text(encoding="utf-8"))
    return Session(
        session_id=data["session_id"],
        cwd=data["cwd"],
        model=data["model"],
        conversation=list(data["conversation"]),
    )


def save_session(folder: Path, session: Session) -> None:
    """Written whole or not at all (a temporary file renamed over the old one)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = {
        "session_id": session.session_id,
        "cwd": session.cwd,
        "model": session.model,
        "conversation": session.conversation,
    }
    descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=".session-", suffix=".json")
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        json.dump(data, file)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, folder / f"{session.session_id}.json")
