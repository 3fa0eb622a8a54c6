"""Many hosts on one remote without a shared store: each task is taken by one host, on the
remote, before that host claims it (radian/docs/hosts.md).

The files under `.radian/arc/` are one host's. A second clone of the same repository, with
the same plan loaded and confirmed, knows nothing of them; so before a host first claims a
task it takes the task on the remote: the ref `refs/arc-claims/<task>` names that host
(radian.arc.git.take_claim: created only where it does not exist, a compare-and-swap on the
remote). A task the remote says another host took is refused here, with that host's name,
and never run or integrated a second time; one this host took (in this run or an earlier one)
is this host's for good. The remote's answer is a `Decision`, data the loop acts on; a store
that keeps claims itself (PostgreSQL, later) gives the same decisions without refs.

Not taken yet because the remote cannot be reached: the claim is made with the attempt, and
its wrapper takes the ref after its own fetch, before the worker starts (an outage is then
the remote wait it always was).

The claims of integrated tasks are archived, so the remote's refs stay bounded (every push
reads all of them: with 3,000 claim refs a push cost 125 ms of CPU, 50 ms once the remote
packed them, against 25 ms with none): `run`'s clean-up, in the batch that prunes an
integrated task's branches, (1) writes the task with its claim into ONE archive ref,
`refs/arc-archive/claims` (a commit whose tree holds a file per task, leased on the archive
it read and done again when another host's write came first), and only then (2) deletes the
task's claim ref, leased on the claim it archived (radian.arc.git.archive_claims). A host
taking a task (3) creates its claim ref as always, only where none exists, and AFTER that
create succeeds (4) fetches the archive ref alone; an archived task is the archived claim's:
the host deletes the ref it just made and is refused as by the claim ref before
(radian.arc.git.take_claim).

Why no second host can run an archived task: the remote applies ref updates one at a time.
Its create (3) succeeds only where no claim ref exists, so after the delete (2), which comes
after the archive write (1); its archive read (4) comes after its create, so after (1): it
sees the task. A create before the delete is refused by the ref itself, and its host reads
the claim there (or, the ref gone by the time it reads, creates again and reads the archive).
A claim a host holds from an earlier run is checked against the archive the same way.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from radian.arc import git
from radian.arc.clock import Clock, format_utc
from radian.arc.config import ArcConfig
from radian.arc.logs import logger

log = logger(__name__)

DecisionKind = Literal["ours", "elsewhere", "refused", "unreachable"]


@dataclass(frozen=True)
class Decision:
    """What this host may do with a task it is about to claim.

    ours: it holds the task (just taken, or taken earlier); elsewhere: `holder` (its host,
    plan, claimed_at) has it; refused: the remote refused the claim ref itself (`detail`);
    unreachable: the remote could not be asked (`detail`): the attempt's wrapper takes the
    claim (`claim`) once its own fetch has reached the remote."""

    kind: DecisionKind
    holder: dict[str, Any] | None = None
    detail: str | None = None
    claim: dict[str, Any] | None = None
    ref: str | None = None  # where the claim is kept, as a refusal names it

    @property
    def may_claim(self) -> bool:
        return self.kind in ("ours", "unreachable")

    @property
    def host(self) -> str:
        return str((self.holder or {}).get("host") or "an unknown host")


class TaskClaims(Protocol):
    """Who may run a task, across hosts: asked before this host's first claim of a task."""

    host: str
    where: str  # where the claims are kept, as a refusal names it

    def take(self, task: str, plan: str) -> Decision: ...


def default_host_name(repo_root: Path) -> str:
    """`<hostname>:<repository path>`: two clones on one machine are two hosts."""
    return f"{socket.gethostname()}:{Path(repo_root).resolve()}"


def host_name(config: ArcConfig, repo_root: Path) -> str:
    return config.hosts.name or default_host_name(repo_root)


class RemoteClaims:
    """Claims kept as refs on the repository's remote (`refs/arc-claims/<task>`)."""

    def __init__(self, repo_root: Path, remote: str, host: str, clock: Clock) -> None:
        self.repo_root = Path(repo_root)
        self.remote = remote
        self.host = host
        self.clock = clock
        self.where = remote

    def record(self, task: str, plan: str) -> dict[str, Any]:
        """The claim this host writes for `task`."""
        return {"host": self.host, "task": task, "plan": plan,
                "claimed_at": format_utc(self.clock.now())}  # fmt: skip

    def take(self, task: str, plan: str) -> Decision:
        claim, ref = self.record(task, plan), git.claim_ref(task)
        try:
            answer = git.take_claim(self.repo_root, self.remote, task, claim)
        except git.GitError as error:
            log.warning("%s: the claim on %s waits for the attempt: %s", task, self.remote, error)
            return Decision("unreachable", detail=str(error), claim=claim, ref=ref)
        if answer.ours:
            return Decision("ours", holder=answer.holder, ref=ref)
        if answer.refused is not None:
            log.warning("%s: %s refused the claim %s: %s", task, self.remote, ref, answer.refused)
            return Decision("refused", detail=answer.refused, ref=ref)
        log.info("%s: claimed by host %s on %s", task, (answer.holder or {}).get("host"),
                 self.remote)  # fmt: skip
        return Decision("elsewhere", holder=answer.holder, ref=answer.ref or ref)


def task_claims(repo_root: Path, config: ArcConfig, clock: Clock) -> TaskClaims | None:
    """The claims `run` and `start` ask before a claim; None when [hosts] claim_refs is off."""
    if not config.hosts.claim_refs:
        return None
    return RemoteClaims(repo_root, config.repository.remote, host_name(config, repo_root), clock)
