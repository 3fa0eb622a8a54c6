"""`.radian/arc.toml`: arc's configuration, typed and validated.

Every error names the file, the key path and what was expected. The models cover every
section (GATE reads [gate]); `DEFAULT_CONFIG` is what `radian arc init` writes.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from radian.arc.errors import ConfigError
from radian.arc.layout import CONFIG_PATH as CONFIG_PATH  # where it is: radian.arc.layout
from radian.arc.record_format import FixLevel
from radian.arc.texts import not_utf8, not_valid_toml, unreadable_config

ModelT = TypeVar("ModelT", bound=BaseModel)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CommandConfig(_Section):
    run: str = Field(min_length=1)
    timeout_secs: float = Field(default=600, gt=0)


class RepositoryConfig(_Section):
    main_branch: str = Field(default="main", min_length=1)
    remote: str = Field(default="origin", min_length=1)


class IntegrationConfig(_Section):
    target_branch: str | None = None
    commands: list[CommandConfig] = Field(default_factory=list)


class LimitsConfig(_Section):
    max_attempts: int = Field(default=3, ge=0)
    max_cost_usd: float | None = Field(default=None, ge=0)
    max_conflict_rework: int = Field(default=3, ge=0)
    max_auto_reverify: int = Field(default=2, ge=0)
    parallel: int = Field(default=2, ge=1)


class PriceConfig(_Section):
    """USD per million tokens (radian.arc.worker.formats.prices)."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)


class PermissionsConfig(_Section):
    """An ACP worker's permission policy: what arc answers to session/request_permission
    (radian/docs/acp.md). Anything naming a path outside the worktree is always refused."""

    edits: Literal["allow", "refuse"] = "allow"
    commands: Literal["allow", "refuse"] = "allow"


# `kind = "radian"`: the radian worker over ACP, `exec_args` defaulting to this program.
RADIAN_WORKER_ARGS = ("radian", "worker")


class WorkerConfig(_Section):
    # "command": a program that prints a Result; "acp": an agent speaking the Agent Client
    # Protocol over stdio; "radian": radian's own ACP agent (`radian worker`).
    kind: Literal["command", "acp", "radian"] = "command"
    exec_args: list[str] = Field(default_factory=list)
    # What {resume_args} expands to when resuming ({session_id} filled in): Claude Code's
    # `--resume <id>`; Codex's `resume <id>` subcommand.
    resume_args: list[str] = Field(default_factory=lambda: ["--resume", "{session_id}"])
    model: str | None = None  # prices a worker that reports tokens, not money (Codex)
    prices: dict[str, PriceConfig] = Field(default_factory=dict)
    permissions: PermissionsConfig = Field(default_factory=PermissionsConfig)
    stall_secs: float = Field(default=300, gt=0)
    wall_time_secs: float = Field(default=3600, gt=0)
    session: Literal["resume", "fresh"] = "resume"
    term_grace_secs: float = Field(default=10, ge=0)

    @property
    def speaks_acp(self) -> bool:
        return self.kind in ("acp", "radian")

    @property
    def agent_args(self) -> list[str]:
        """The worker's program and arguments as configured (the radian worker's default
        when `kind = "radian"` leaves exec_args empty)."""
        if self.kind == "radian" and not self.exec_args:
            return list(RADIAN_WORKER_ARGS)
        return list(self.exec_args)


class MutationConfig(_Section):
    min_killed: float = Field(default=0.0, ge=0, le=1)
    timeout_secs: float = Field(default=900, gt=0)
    paths_to_mutate: list[str] | None = None


class ReviewConfig(_Section):
    exec_args: list[str] = Field(default_factory=list)
    timeout_secs: float = Field(default=900, gt=0)


class GateConfig(_Section):
    stages: list[Literal["commands", "mutation", "review"]] = Field(default_factory=list)
    commands: list[CommandConfig] = Field(default_factory=list)
    fix_level: FixLevel = "major"
    mutation: MutationConfig = Field(default_factory=MutationConfig)
    review: ReviewConfig = Field(default_factory=ReviewConfig)

    @field_validator("stages")
    @classmethod
    def _stages_once_each(cls, stages: list[str]) -> list[str]:
        if len(set(stages)) != len(stages):
            raise ValueError("each stage at most once")
        return stages


class CleanupConfig(_Section):
    """What `run` removes when a task is integrated or failed, and `gc` later (radian.arc.cleanup
    says what the policy never removes)."""

    worktrees: bool = True  # remove a task's worktree once it is integrated or failed
    branches: bool = False  # also delete its local branch arc/<task> (the remote keeps it)
    remote_branches: bool = False  # and an integrated task's arc/<task> on the remote
    # Whatever those say, integrated tasks' branches (local and remote) beyond the newest
    # this many are pruned by `run` and `gc`: each kept one made every fetch and push slower.
    keep_integrated_branches: int = Field(default=100, ge=0)


HookEventName = Literal[
    "integrated", "failed", "paused_budget", "rework_pending", "model_wait", "plan_done"
]
HOOK_EVENTS: tuple[HookEventName, ...] = (
    "integrated", "failed", "paused_budget", "rework_pending", "model_wait", "plan_done"
)  # fmt: skip


class HookConfig(_Section):
    """One `[[hooks]]` entry: a command run on the events it names (radian.arc.hooks)."""

    run: str = Field(min_length=1)
    events: list[HookEventName] = Field(default_factory=lambda: list(HOOK_EVENTS), min_length=1)
    timeout_secs: float = Field(default=10, gt=0)


class HostsConfig(_Section):
    """Many hosts on one remote without a shared store (radian/docs/hosts.md)."""

    # This host's name in its claims, as another host's refusal prints it; default
    # "<hostname>:<repository path>". Two hosts must never share one.
    name: str | None = Field(default=None, min_length=1)
    # Mark each task this host takes on the remote (refs/arc-claims/<task>), so a second
    # host on the same remote refuses it; off only for a remote that refuses such refs.
    claim_refs: bool = True


class StoreConfig(_Section):
    """Where arc keeps its records (radian/docs/hosts.md): the files under .radian/arc/ (no
    url, the default), or a PostgreSQL database many hosts share. RADIAN_ARC_STORE, when
    set, is used instead."""

    url: str | None = Field(default=None, pattern=r"^(postgresql|postgres)://")
    # How long an attempt's lease lasts without a heartbeat (its host's loop renews it every
    # pass): a host dead this long loses its attempts to the others (radian/docs/hosts.md).
    lease_secs: float = Field(default=60, gt=0)


class ArcConfig(_Section):
    repository: RepositoryConfig = Field(default_factory=RepositoryConfig)
    integration: IntegrationConfig = Field(default_factory=IntegrationConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    worker: WorkerConfig = Field(default_factory=WorkerConfig)
    gate: GateConfig | None = None
    cleanup: CleanupConfig = Field(default_factory=CleanupConfig)
    hosts: HostsConfig = Field(default_factory=HostsConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)
    hooks: list[HookConfig] = Field(default_factory=list)

    @property
    def target_branch(self) -> str:
        return self.integration.target_branch or self.repository.main_branch


DEFAULT_CONFIG = """\
# radian arc configuration. Every key is optional; the values shown are the defaults.

[repository]
main_branch = "main"          # the branch tasks start from
remote = "origin"             # where workers push their task branches

[integration]
# target_branch = "main"      # where finished tasks are integrated; default: main_branch
# commands = [{ run = "make test", timeout_secs = 600 }]

[limits]
max_attempts = 3              # retries a task may use (retries, not attempts)
# max_cost_usd = 5.0          # a task's budget in USD; default: none
max_conflict_rework = 3       # conflict reworks arc writes in a row
max_auto_reverify = 2         # automatic reverifies of one task
parallel = 2                  # attempts running at once

[worker]
kind = "command"
# The worker's command line. Placeholders: {brief_file} {session_id} {worktree} {task}
# {attempt_id} {resume_args} (radian/docs/worker.md). radian arc start, run and confirm
# refuse a program that does not exist or is not executable, and an unknown placeholder.
exec_args = ["my-agent", "--brief", "{brief_file}"]
stall_secs = 300              # no output and no work for this long: stopped (stall)
wall_time_secs = 3600         # an attempt may run this long (wall_time)
session = "resume"            # "resume" the previous attempt's session, or start "fresh"
term_grace_secs = 10          # SIGTERM, then SIGKILL after this long

[cleanup]
worktrees = true              # remove a task's worktree once it is integrated or failed
branches = false              # also delete its local branch arc/<task> (the remote keeps it)
remote_branches = false       # and an integrated task's arc/<task> on the remote (never a
                              # failed task's: a rework continues from it)
keep_integrated_branches = 100  # integrated tasks' branches beyond the newest 100 are pruned

# The verification stages and the integration: radian/docs/gate.md. Without [gate], a task
# that delivered waits in review.verifying.
# [gate]
# stages = ["commands", "mutation", "review"]
# commands = [{ run = "make test", timeout_secs = 600 }]
# fix_level = "major"

# Many hosts on one remote (radian/docs/hosts.md): each task this host takes is marked on the
# remote (refs/arc-claims/<task>), so a second host refuses it rather than run it again.
# [hosts]
# name = "build-1"            # this host in its claims; default: <hostname>:<repository path>
# claim_refs = true           # false only for a remote that refuses such refs (one host only)

# arc's records in PostgreSQL instead of the files under .radian/arc/ (radian/docs/hosts.md);
# RADIAN_ARC_STORE, when set, is used instead. `radian arc store migrate` moves the files in.
# [store]
# url = "postgresql://arc@db.example/arc"
# lease_secs = 60             # a host silent this long loses its attempts to the others
"""


def load_config(repo_root: Path) -> ArcConfig:
    """The repository's configuration; defaults when `.radian/arc.toml` does not exist."""
    path = Path(repo_root) / CONFIG_PATH
    if not path.is_file():
        return ArcConfig()
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(not_utf8(str(CONFIG_PATH), error)) from None
    except OSError as error:
        raise ConfigError(unreadable_config(str(CONFIG_PATH), error.strerror)) from None
    return parse_config(text, str(CONFIG_PATH))


def parse_config(text: str, file_label: str) -> ArcConfig:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(not_valid_toml(file_label, error)) from None
    return validate_model(ArcConfig, data, file_label)


def validate_model(model: type[ModelT], data: Any, file_label: str) -> ModelT:
    """`model` from `data`, or a ConfigError naming the file, the key path and the problem."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise ConfigError(describe_validation_error(error, file_label)) from None


def describe_validation_error(error: ValidationError, file_label: str) -> str:
    lines = []
    for problem in error.errors():
        key_path = ".".join(str(part) for part in problem["loc"]) or "(top level)"
        if problem["type"] == "extra_forbidden":
            lines.append(f"{file_label}: {key_path}: unknown key")
            continue
        got = problem.get("input")
        expected = problem["msg"]
        if problem["type"] == "missing":
            lines.append(f"{file_label}: {key_path}: required, missing")
        else:
            lines.append(
                f"{file_label}: {key_path}: expected {_lower_first(expected)}, got {got!r}"
            )
    return "\n".join(lines)


def _lower_first(text: str) -> str:
    text = text.removeprefix("Value error, ").removeprefix("Input should be ")
    return text[:1].lower() + text[1:]
