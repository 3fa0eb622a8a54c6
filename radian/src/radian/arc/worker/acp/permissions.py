"""What an ACP agent may do: arc's answer to session/request_permission, and the worktree
fence around fs/* and terminal/*.

The policy is `[worker.permissions]` in arc.toml: file edits and commands inside the task's
worktree are allowed by default; anything that names a path outside the worktree is refused,
whatever the policy says.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from radian.arc.worker.acp import texts

Verdict = Literal["allow", "refuse"]

# ACP's tool kinds grouped by what the policy decides for them.
EDIT_KINDS = frozenset({"edit", "delete", "move"})
COMMAND_KINDS = frozenset({"execute"})

ALLOW_KINDS = ("allow_once", "allow_always")
REJECT_KINDS = ("reject_once", "reject_always")


@dataclass(frozen=True)
class Policy:
    edits: Verdict = "allow"
    commands: Verdict = "allow"


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str


def inside(path: str | os.PathLike[str], worktree: Path, *, cwd: Path | None = None) -> bool:
    """Whether `path` (relative paths from cwd, else the worktree) is the worktree or in it,
    after symlinks are resolved, so a link in the worktree cannot lead outside it."""
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = (cwd or worktree) / candidate
    return candidate.resolve().is_relative_to(worktree.resolve())


def decide(
    kind: str | None,
    locations: Sequence[str],
    raw_input: Any,
    worktree: Path,
    policy: Policy,
) -> Decision:
    """The answer to one permission request: its tool kind, the paths it names, its input."""
    outside = [path for path in _paths(locations, raw_input) if not inside(path, worktree)]
    if outside:
        return Decision(False, texts.OUTSIDE_WORKTREE.format(path=outside[0]))
    if kind in EDIT_KINDS:
        return Decision(
            policy.edits == "allow", texts.POLICY_SAYS.format(what="edits", verdict=policy.edits)
        )
    if kind in COMMAND_KINDS:
        return Decision(
            policy.commands == "allow",
            texts.POLICY_SAYS.format(what="commands", verdict=policy.commands),
        )
    return Decision(True, texts.INSIDE_WORKTREE)


def choose_option(options: Iterable[Mapping[str, str]], allowed: bool) -> str | None:
    """The option id to answer with (once, in preference to always); None when the agent
    offered none of that kind, which is answered as cancelled."""
    wanted = ALLOW_KINDS if allowed else REJECT_KINDS
    by_kind = {option["kind"]: option["option_id"] for option in options}
    return next((by_kind[kind] for kind in wanted if kind in by_kind), None)


def _paths(locations: Sequence[str], raw_input: Any) -> list[str]:
    """Every path a request names: its locations, and the path-like keys of its input."""
    paths = list(locations)
    if isinstance(raw_input, Mapping):
        for key in ("path", "file_path", "filePath", "cwd", "notebook_path", "target"):
            value = raw_input.get(key)
            if isinstance(value, str) and value:
                paths.append(value)
    return paths
