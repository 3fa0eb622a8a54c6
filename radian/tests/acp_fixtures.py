"""Fixtures for the ACP worker's tests: scripted stand-ins of the Anthropic Messages API and
OpenAI's Chat Completions on 127.0.0.1, and an arc.toml that runs the radian worker.

A stand-in answers each request with the next step of its script, in its provider's real
wire format (what the official clients parse), and keeps every request it got:
    {"tool": "write_file", "input": {...}}        a tool call
    {"text": "...", "stop": "end_turn"}           an answer (stop: end_turn, refusal, max_tokens)
    {"status": 529, "error": "overloaded_error"}  an HTTP error
    {"hang": true}                                no answer until the server stops
Every reply bills 1,000 input and 100 output tokens: at claude-sonnet-4-5's price
($3 / $15 per million) a reply costs $0.0045, at gpt-5's ($1.25 / $10) $0.00225.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import write_config
from standins.http import Exchange, StandInServer

INPUT_TOKENS, OUTPUT_TOKENS = 1000, 100
REPLY_FEE_USD = {
    "anthropic": (INPUT_TOKENS * 3.0 + OUTPUT_TOKENS * 15.0) / 1_000_000,  # claude-sonnet-4-5
    "openai": (INPUT_TOKENS * 1.25 + OUTPUT_TOKENS * 10.0) / 1_000_000,  # gpt-5
}


class StandIn(StandInServer):
    """The scripted provider: `script` its steps, `requests` every request body it got."""

    def __init__(self, provider: str, script: list[dict[str, Any]] | None = None) -> None:
        super().__init__()
        self.provider = provider
        self.script: list[dict[str, Any]] = list(script or [])
        self.requests: list[dict[str, Any]] = []

    def next_step(self) -> dict[str, Any]:
        return (
            self.script.pop(0)
            if self.script
            else {"text": "nothing left to do", "stop": "end_turn"}
        )

    def tool_results(self) -> list[str]:
        """Every tool result text the model was sent, in order."""
        found: list[str] = []
        for request in self.requests:
            for message in request.get("messages", []):
                if self.provider == "openai" and message.get("role") == "tool":
                    found.append(message["content"])
                if self.provider == "anthropic" and isinstance(message.get("content"), list):
                    found.extend(
                        part["content"]
                        for part in message["content"]
                        if part.get("type") == "tool_result"
                    )
        return list(dict.fromkeys(found))

    def respond(self, exchange: Exchange) -> None:
        self.requests.append(exchange.body or {})
        step = self.next_step()
        if step.get("hang"):
            exchange.no_answer(self.stopping)
        elif "status" in step:
            kind = step.get("error", "api_error")
            body: dict[str, Any] = (
                {"type": "error", "error": {"type": kind, "message": kind}}
                if self.provider == "anthropic"
                else {"error": {"message": kind, "type": kind, "code": kind}}
            )
            exchange.json(step["status"], body)
        else:
            make = _anthropic_body if self.provider == "anthropic" else _openai_body
            exchange.json(200, make(step, len(self.requests)))


def _anthropic_body(step: dict[str, Any], index: int) -> dict[str, Any]:
    if "tool" in step:
        content = [
            {
                "type": "tool_use",
                "id": f"toolu_{index}",
                "name": step["tool"],
                "input": step["input"],
            }
        ]
        stop = "tool_use"
    else:
        content = [{"type": "text", "text": step["text"]}]
        stop = step.get("stop", "end_turn")
    return {
        "id": f"msg_{index}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": content, "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    }  # fmt: skip


def _openai_body(step: dict[str, Any], index: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if "tool" in step:
        function = {"name": step["tool"], "arguments": json.dumps(step["input"])}
        message["tool_calls"] = [{"id": f"call_{index}", "type": "function", "function": function}]
        finish = "tool_calls"
    else:
        message["content"] = step["text"]
        finish = {"end_turn": "stop", "max_tokens": "length", "refusal": "content_filter"}[
            step.get("stop", "end_turn")
        ]
    return {
        "id": f"chatcmpl-{index}", "object": "chat.completion", "created": 0, "model": "gpt-5",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": INPUT_TOKENS, "completion_tokens": OUTPUT_TOKENS,
                  "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS},
    }  # fmt: skip


@pytest.fixture
def stand_in(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[StandIn]:
    """A scripted stand-in of the provider the test is parametrized with (default anthropic),
    with the official clients pointed at it through their environment variables."""
    provider = getattr(request, "param", "anthropic")
    state = StandIn(provider)
    state.start()
    if provider == "anthropic":
        monkeypatch.setenv("ANTHROPIC_BASE_URL", state.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "stand-in-needs-no-key")
    else:
        monkeypatch.setenv("OPENAI_BASE_URL", state.url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "stand-in-needs-no-key")
    try:
        yield state
    finally:
        state.stop()


def radian_worker_config(
    repo: Path, provider: str = "anthropic", **sections: dict[str, Any]
) -> None:
    """arc.toml with `kind = "radian"`: the radian worker, run by this Python. Its limits are
    generous: the worker's start-up (the ACP SDK's schema is large) must never read as a
    stall on a loaded machine; a test of the stall sets its own."""
    model = "anthropic:claude-sonnet-4-5" if provider == "anthropic" else "openai:gpt-5"
    worker = {
        "kind": "radian",
        "stall_secs": 60.0,
        "wall_time_secs": 120.0,
        **sections.pop("worker", {}),
    }
    write_config(
        repo,
        [sys.executable, "-m", "radian.worker", "--model", model],
        worker=worker,
        **sections,
    )


def deliver_script(task: str, file: str = "GREETING.md") -> list[dict[str, Any]]:
    """The model's steps of a task done right: write a file, commit and push it, say so."""
    push = f"git push -q origin HEAD:arc/{task}"
    return [
        {"tool": "write_file", "input": {"path": file, "content": "hello\n"}},
        {
            "tool": "run_command",
            "input": {"command": f"git add -A && git commit -q -m 'Add {file}' && {push}"},
        },
        {"text": "Added the greeting, committed and pushed.", "stop": "end_turn"},
    ]
