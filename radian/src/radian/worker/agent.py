"""The radian worker as an ACP agent: sessions, the prompt turn's model loop, cancel."""

from __future__ import annotations

import asyncio
import importlib.metadata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import acp
from acp import schema

from radian.prices import Price
from radian.worker import sessions, texts
from radian.worker.limits import DEFAULT_MAX_TOKENS, DEFAULT_MAX_TURNS
from radian.worker.models import ModelFailure, ModelTurn, Provider
from radian.worker.pricing import Tokens, fee_usd
from radian.worker.tools import TOOLS, ToolRunner

CANCELLED_RESULT = "cancelled: the turn was stopped before this ran"


class RadianAgent:
    """One agent process: any number of sessions, one prompt turn at a time per session."""

    def __init__(
        self,
        provider: Provider,
        prices: dict[str, Price],
        note: Callable[[str], None],
        *,
        max_turns: int = DEFAULT_MAX_TURNS,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        self.provider = provider
        self.prices = prices
        self.note = note
        self.max_turns = max_turns
        self.max_tokens = max_tokens
        self._client: Any = None
        self._sessions: dict[str, tuple[sessions.Session, Path]] = {}
        self._cancels: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Any) -> None:
        self._client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: schema.ClientCapabilities | None = None,
        client_info: schema.Implementation | None = None,
        **kwargs: Any,
    ) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(load_session=True),
            agent_info=schema.Implementation(name="radian-worker", version=_version()),
        )

    async def authenticate(
        self, method_id: str, **kwargs: Any
    ) -> schema.AuthenticateResponse | None:
        return None

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> schema.NewSessionResponse:
        folder = sessions.sessions_folder(Path(cwd))
        session = sessions.new_session(Path(cwd), f"{self.provider.name}:{self.provider.model}")
        sessions.save_session(folder, session)
        self._sessions[session.session_id] = (session, folder)
        return schema.NewSessionResponse(session_id=session.session_id)

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> schema.LoadSessionResponse | None:
        folder = sessions.sessions_folder(Path(cwd))
        try:
            session = sessions.load_session(folder, session_id)
        except LookupError as missing:
            raise acp.RequestError.invalid_params(
                {"sessionId": session_id, "error": str(missing)}
            ) from None
        session.cwd = cwd
        self._sessions[session_id] = (session, folder)
        # The protocol asks a loading agent to replay the conversation to the client.
        for entry in session.conversation:
            if entry["role"] == "user":
                await self._report(session_id, acp.update_user_message_text(entry["text"]))
            elif entry["role"] == "assistant" and entry.get("text"):
                await self._report(session_id, acp.update_agent_message_text(entry["text"]))
        return schema.LoadSessionResponse()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.note(texts.LOG_CANCEL)
        self._cancels.setdefault(session_id, asyncio.Event()).set()

    async def prompt(
        self, session_id: str, prompt: list[Any], **kwargs: Any
    ) -> schema.PromptResponse:
        if session_id not in self._sessions:
            raise acp.RequestError.invalid_params({"sessionId": session_id})
        session, folder = self._sessions[session_id]
        cancel = self._cancels[session_id] = asyncio.Event()
        self.note(texts.LOG_PROMPT.format(session_id=session_id, model=session.model))
        text = "".join(
            block.text for block in prompt if isinstance(getattr(block, "text", None), str)
        )
        session.conversation.append({"role": "user", "text": text})
        runner = ToolRunner(self._client, session_id, Path(session.cwd))
        tokens, error = Tokens(), None
        stop: schema.StopReason = "max_turn_requests"
        try:
            for _ in range(self.max_turns):
                turn = await _unless_cancelled(
                    self.provider.turn(
                        texts.SYSTEM_PROMPT.format(cwd=session.cwd),
                        session.conversation,
                        TOOLS,
                        self.max_tokens,
                    ),
                    cancel,
                )
                if turn is None:
                    stop = "cancelled"
                    break
                tokens += turn.tokens
                ended = await self._take_turn(session, turn, runner, cancel)
                if ended is not None:
                    stop = ended
                    break
            else:
                stop = "max_turn_requests"
        except ModelFailure as failure:
            error = str(failure)
            self.note(texts.LOG_MODEL_ERROR.format(error=error))
            stop = "end_turn"
        finally:
            sessions.save_session(folder, session)
        return schema.PromptResponse(
            stop_reason=stop, field_meta={"radian": self._meta(tokens, error)}
        )

    async def _take_turn(
        self, session: sessions.Session, turn: ModelTurn, runner: ToolRunner, cancel: asyncio.Event
    ) -> schema.StopReason | None:
        """Records the model's turn and runs its tool calls; the prompt turn's stop reason,
        None when the loop goes on."""
        # A tool call cut off by max_tokens may be incomplete: it is never run.
        calls = turn.tool_calls if turn.stop == "tool_use" else []
        session.conversation.append(
            {
                "role": "assistant",
                "text": turn.text,
                "tool_calls": [
                    {"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls
                ],
            }
        )
        if turn.text:
            await self._report(session.session_id, acp.update_agent_message_text(turn.text))
        if not calls:
            return "end_turn" if turn.stop == "tool_use" else turn.stop
        results = []
        for call in calls:
            if cancel.is_set():
                results.append({"id": call.id, "content": CANCELLED_RESULT, "is_error": True})
                continue
            outcome = await runner.run(
                call, lambda update: self._report(session.session_id, update)
            )
            results.append(
                {"id": call.id, "content": outcome.content, "is_error": outcome.is_error}
            )
        session.conversation.append({"role": "tool", "results": results})
        return "cancelled" if cancel.is_set() else None

    def _meta(self, tokens: Tokens, error: str | None) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "tokens": {"input": tokens.input, "output": tokens.output,
                       "cache_read": tokens.cache_read, "cache_write": tokens.cache_write},
        }  # fmt: skip
        price = self.prices.get(self.provider.model)
        if price is None:
            self.note(texts.LOG_NO_PRICE.format(model=self.provider.model))
        else:
            meta["cost_usd"] = fee_usd(price, tokens)
        if error is not None:
            meta["error"] = error
        return meta

    async def _report(self, session_id: str, update: Any) -> None:
        await self._client.session_update(session_id=session_id, update=update)

    # What the protocol offers beyond a coding agent's turn: not offered by this agent.
    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> schema.ListSessionsResponse:
        raise acp.RequestError.method_not_found("session/list")

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> schema.SetSessionModeResponse | None:
        raise acp.RequestError.method_not_found("session/set_mode")

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> schema.SetSessionConfigOptionResponse | None:
        raise acp.RequestError.method_not_found("session/set_config_option")

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> schema.ForkSessionResponse:
        raise acp.RequestError.method_not_found("session/fork")

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> schema.ResumeSessionResponse:
        raise acp.RequestError.method_not_found("session/resume")

    async def close_session(
        self, session_id: str, **kwargs: Any
    ) -> schema.CloseSessionResponse | None:
        self._sessions.pop(session_id, None)
        return schema.CloseSessionResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


async def _unless_cancelled(request: Any, cancel: asyncio.Event) -> ModelTurn | None:
    """The model's turn, or None when the turn is cancelled first (the request is dropped)."""
    asked = asyncio.ensure_future(request)
    cancelled = asyncio.ensure_future(cancel.wait())
    await asyncio.wait({asked, cancelled}, return_when=asyncio.FIRST_COMPLETED)
    if asked.done():
        cancelled.cancel()
        turn: ModelTurn = asked.result()
        return turn
    asked.cancel()
    return None


def _version() -> str:
    try:
        return importlib.metadata.version("radian")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
