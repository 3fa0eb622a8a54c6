"""arc as an ACP client: one attempt's prompt turn with an agent that speaks the Agent Client
Protocol over stdio.

    python -m radian.arc.worker.acp [--session-id ID] [--edits allow|refuse]
        [--commands allow|refuse] -- <agent program> [args...]

The wrapper starts this in the task's worktree, in place of a command worker, with the brief
on stdin; everything the wrapper guarantees (the worktree lock, stall, wall time, cancel, the
delivery check) holds unchanged. The client starts the agent, `initialize`s it, opens the
session (`session/load` of the previous attempt's session when the agent can load one, else
`session/new`), sends the brief as one `session/prompt`, writes every `session/update` into
the attempt's log (stderr, so it counts as activity, never as the Result), answers
`session/request_permission` by the policy, serves `fs/*` and `terminal/*` inside the
worktree only, and sends `session/cancel` when the wrapper stops the attempt (SIGTERM).

When the turn ends by itself it prints one Result in radian's format on stdout:
the outcome from the stop reason (stop_reasons.py), the session id, the cost and its scope
(`cost_scope`: "process" for the radian worker's `_meta.radian.cost_usd`, the prompt turn's
own fee; "session_total" for the cumulative cost of an agent's `usage_update`), and the model
error from `_meta.radian.error` (text, no kind: the ordinary retry rules apply). A JSON-RPC
error or an agent that dies prints no Result: the attempt is terminated. A turn stopped from
outside prints no Result either, only a progress line (the session, and what the turn cost so
far), so its spend counts and the next attempt resumes the session.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.metadata
import json
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import acp
from acp import schema

from radian.arc.worker.acp import permissions, stop_reasons, texts
from radian.arc.worker.acp.terminals import Terminals

# How long the agent has to end its turn after session/cancel before the client gives up on
# it; the wrapper's own grace period and SIGKILL come after.
CANCEL_WAIT_SECS = 3.0
UPDATE_TEXT_LIMIT = 200


class ArcClient:
    """The client side: what arc does for the agent, all of it inside one worktree."""

    def __init__(self, worktree: Path, policy: permissions.Policy, note: Callable[[str], None]):
        self.worktree = worktree.resolve()
        self.policy = policy
        self.note = note
        self.terminals = Terminals(note)
        self.session_cost_usd: float | None = None

    def on_connect(self, conn: Any) -> None:
        pass

    async def request_permission(
        self,
        session_id: str,
        tool_call: schema.ToolCallUpdate,
        options: list[schema.PermissionOption],
        **kwargs: Any,
    ) -> schema.RequestPermissionResponse:
        locations = [location.path for location in tool_call.locations or []]
        decision = permissions.decide(
            tool_call.kind, locations, tool_call.raw_input, self.worktree, self.policy
        )
        offered = [{"kind": option.kind, "option_id": option.option_id} for option in options]
        chosen = permissions.choose_option(offered, decision.allowed)
        self.note(
            texts.LOG_PERMISSION.format(
                title=tool_call.title or tool_call.tool_call_id,
                kind=tool_call.kind,
                verdict="allowed" if decision.allowed else "refused",
                reason=decision.reason,
            )
        )
        outcome: schema.AllowedOutcome | schema.DeniedOutcome
        if chosen is None:
            outcome = schema.DeniedOutcome(outcome="cancelled")
        else:
            outcome = schema.AllowedOutcome(outcome="selected", option_id=chosen)
        return schema.RequestPermissionResponse(outcome=outcome)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        kind = getattr(update, "session_update", type(update).__name__)
        cost = update.cost if isinstance(update, schema.UsageUpdate) else None
        if cost is not None and cost.currency.upper() == "USD":
            self.session_cost_usd = cost.amount
        self.note(texts.LOG_UPDATE.format(kind=kind, text=_summary(update)))

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> schema.ReadTextFileResponse:
        target = self._inside_or_refuse("fs/read_text_file", path)
        self.note(texts.LOG_FS.format(method="fs/read_text_file", path=path))
        try:
            text = target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise acp.RequestError.internal_error({"path": path, "error": str(error)}) from None
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start : start + limit if limit is not None else None])
        return schema.ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> schema.WriteTextFileResponse | None:
        target = self._inside_or_refuse("fs/write_text_file", path)
        if self.policy.edits != "allow":
            raise acp.RequestError.invalid_params(
                {"path": path, "error": texts.POLICY_SAYS.format(what="edits", verdict="refuse")}
            )
        self.note(texts.LOG_FS.format(method="fs/write_text_file", path=path))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return schema.WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[schema.EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> schema.CreateTerminalResponse:
        if self.policy.commands != "allow":
            raise acp.RequestError.invalid_params({"error": texts.COMMANDS_REFUSED_ERROR})
        folder = self._inside_or_refuse("terminal/create", cwd) if cwd else self.worktree
        variables = {variable.name: variable.value for variable in env or []}
        terminal_id = await self.terminals.create(
            command, args or [], variables, folder, output_byte_limit
        )
        self.note(
            texts.LOG_TERMINAL.format(
                terminal_id=terminal_id, command=" ".join([command, *(args or [])])
            )
        )
        return schema.CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.TerminalOutputResponse:
        terminal = self._terminal(terminal_id)
        status = self.terminals.exit_status(terminal_id)
        return schema.TerminalOutputResponse(
            output=terminal.text(),
            truncated=terminal.truncated,
            exit_status=None
            if status is None
            else schema.TerminalExitStatus(exit_code=status.exit_code, signal=status.signal),
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.WaitForTerminalExitResponse:
        self._terminal(terminal_id)
        status = await self.terminals.wait(terminal_id)
        self.note(
            texts.LOG_TERMINAL_EXIT.format(
                terminal_id=terminal_id, status=status.signal or status.exit_code
            )
        )
        return schema.WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.KillTerminalResponse | None:
        self._terminal(terminal_id)
        self.terminals.kill(terminal_id)
        return schema.KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.ReleaseTerminalResponse | None:
        self._terminal(terminal_id)
        await self.terminals.release(terminal_id)
        return schema.ReleaseTerminalResponse()

    async def create_elicitation(
        self, message: str, mode: Any, **kwargs: Any
    ) -> schema.CreateElicitationResponse:
        # Nobody is at arc's end of the pipe to answer a question: the agent must go on alone.
        raise acp.RequestError.method_not_found("elicitation/create")

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        return None

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def _inside_or_refuse(self, method: str, path: str) -> Path:
        if not permissions.inside(path, self.worktree):
            self.note(texts.LOG_FS_REFUSED.format(method=method, path=path))
            raise acp.RequestError.invalid_params(
                {"path": path, "error": texts.OUTSIDE_WORKTREE_ERROR.format(path=path)}
            )
        candidate = Path(path)
        return (candidate if candidate.is_absolute() else self.worktree / candidate).resolve()

    def _terminal(self, terminal_id: str) -> Any:
        try:
            return self.terminals.get(terminal_id)
        except LookupError:
            raise acp.RequestError.invalid_params({"terminalId": terminal_id}) from None


def result_line(
    *,
    stop_reason: str,
    meta: dict[str, Any] | None,
    session_id: str,
    session_cost_usd: float | None,
) -> dict[str, Any]:
    """The Result (radian's format) for a prompt turn that ended by itself."""
    radian = (meta or {}).get("radian")
    radian = radian if isinstance(radian, dict) else {}
    error = radian.get("error")
    error_text = error if isinstance(error, str) and error else None
    result: dict[str, Any] = {
        "type": "result",
        "outcome": stop_reasons.outcome_of(stop_reason, model_error=error_text),
        "session_id": session_id,
        "stop_reason": stop_reason,
    }
    fee = radian.get("cost_usd")
    if isinstance(fee, int | float) and not isinstance(fee, bool):
        result.update(cost_usd=float(fee), cost_scope="process")
    elif session_cost_usd is not None:
        result.update(cost_usd=session_cost_usd, cost_scope="session_total")
    else:
        result["cost_unknown"] = texts.NO_COST
    if error_text is not None:
        result["model_error"] = {"kind": None, "message": error_text}
    return result


def progress_line(
    *, meta: dict[str, Any] | None, session_id: str, session_cost_usd: float | None
) -> dict[str, Any]:
    """A progress line (radian's format) for a turn stopped from outside: its session and
    what it cost so far, in the same scope a Result would give (radian_result.py)."""
    radian = (meta or {}).get("radian")
    fee = radian.get("cost_usd") if isinstance(radian, dict) else None
    line: dict[str, Any] = {"type": "progress", "session_id": session_id}
    if isinstance(fee, int | float) and not isinstance(fee, bool):
        line.update(cost_usd=float(fee), cost_scope="process")
    elif session_cost_usd is not None:
        line.update(cost_usd=session_cost_usd, cost_scope="session_total")
    return line


async def run_turn(
    agent_args: Sequence[str],
    brief: str,
    resume_session_id: str | None,
    policy: permissions.Policy,
    worktree: Path,
    note: Callable[[str], None],
    stop: asyncio.Event,
) -> dict[str, Any] | None:
    """Runs one prompt turn; its Result, or None when there is none to print (the agent
    failed, died, or the turn was stopped from outside)."""
    client = ArcClient(worktree, policy, note)
    program, *args = agent_args
    try:
        # The agent gets the wrapper's whole environment (the SDK would trim it to a few
        # variables, dropping RADIAN_ARC_* and the provider's settings), and its stderr goes
        # to the attempt's log with ours.
        async with acp.spawn_agent_process(
            client,
            program,
            *args,
            cwd=worktree,
            env=dict(os.environ),
            transport_kwargs={"stderr": None},
        ) as (conn, process):
            note(texts.LOG_STARTED.format(program=program, pid=process.pid))
            try:
                return await _converse(conn, client, brief, resume_session_id, note, stop)
            except acp.RequestError as error:
                note(texts.LOG_RPC_ERROR.format(error=error))
                return None
            finally:
                await client.terminals.close()
    except (OSError, ConnectionError) as error:
        note(texts.LOG_RPC_ERROR.format(error=error))
        return None


async def _converse(
    conn: Any,
    client: ArcClient,
    brief: str,
    resume_session_id: str | None,
    note: Callable[[str], None],
    stop: asyncio.Event,
) -> dict[str, Any] | None:
    init = await conn.initialize(
        protocol_version=acp.PROTOCOL_VERSION,
        client_capabilities=schema.ClientCapabilities(
            fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True),
            terminal=True,
        ),
        client_info=schema.Implementation(name="radian-arc", version=_version()),
    )
    session_id = await _open_session(conn, init, client.worktree, resume_session_id, note)
    note(texts.LOG_PROMPT.format(chars=len(brief)))
    turn = asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=[acp.text_block(brief)]))
    stopped = asyncio.ensure_future(stop.wait())
    await asyncio.wait({turn, stopped}, return_when=asyncio.FIRST_COMPLETED)
    if not turn.done():
        note(texts.LOG_CANCEL)
        with contextlib.suppress(Exception):
            await conn.cancel(session_id=session_id)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(turn, CANCEL_WAIT_SECS)
        finished = turn.done() and not turn.cancelled() and turn.exception() is None
        ended = turn.result() if finished else None
        turn.cancel()
        # No Result: the wrapper's class (cancelled, stall, wall_time, arc's own stop) decides
        # the attempt. What the turn spent so far and its session are reported all the same,
        # so arc counts the spend and the next attempt resumes the session.
        print(json.dumps(progress_line(
            meta=ended.field_meta if ended is not None else None,
            session_id=session_id,
            session_cost_usd=client.session_cost_usd,
        )), flush=True)  # fmt: skip
        return None
    stopped.cancel()
    if stop.is_set():
        return None
    response: schema.PromptResponse = turn.result()
    note(texts.LOG_STOP.format(stop_reason=response.stop_reason))
    return result_line(
        stop_reason=response.stop_reason,
        meta=response.field_meta,
        session_id=session_id,
        session_cost_usd=client.session_cost_usd,
    )


async def _open_session(
    conn: Any,
    init: schema.InitializeResponse,
    worktree: Path,
    resume_session_id: str | None,
    note: Callable[[str], None],
) -> str:
    capabilities = init.agent_capabilities
    if resume_session_id:
        if capabilities is not None and capabilities.load_session:
            note(texts.LOG_SESSION_LOAD.format(session_id=resume_session_id))
            try:
                await conn.load_session(
                    cwd=str(worktree), session_id=resume_session_id, mcp_servers=[]
                )
                return resume_session_id
            except acp.RequestError as error:
                note(texts.LOG_LOAD_FAILED.format(session_id=resume_session_id, error=error))
        else:
            note(texts.LOG_NO_LOAD.format(session_id=resume_session_id))
    created = await conn.new_session(cwd=str(worktree), mcp_servers=[])
    note(texts.LOG_SESSION_NEW.format(session_id=created.session_id))
    return str(created.session_id)


def _summary(update: Any) -> str:
    content = getattr(update, "content", None)
    text = getattr(content, "text", None)
    if isinstance(text, str):
        summary = text
    else:
        title = getattr(update, "title", None)
        status = getattr(update, "status", None)
        summary = " ".join(str(part) for part in (title, status) if part) or ""
    summary = summary.replace("\n", " ")
    return summary[:UPDATE_TEXT_LIMIT]


def _version() -> str:
    try:
        return importlib.metadata.version("radian")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m radian.arc.worker.acp", usage=texts.USAGE)
    parser.add_argument("--session-id", default="")
    parser.add_argument("--edits", choices=("allow", "refuse"), default="allow")
    parser.add_argument("--commands", choices=("allow", "refuse"), default="allow")
    parser.add_argument("agent", nargs="+")
    return parser.parse_args(list(argv))


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_args(sys.argv[1:] if argv is None else argv)
    brief = sys.stdin.read()

    def note(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    async def run() -> dict[str, Any] | None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        return await run_turn(
            options.agent,
            brief,
            options.session_id or None,
            permissions.Policy(edits=options.edits, commands=options.commands),
            Path.cwd(),
            note,
            stop,
        )

    result = asyncio.run(run())
    if result is None:
        return 1
    print(json.dumps(result), flush=True)
    return 0
