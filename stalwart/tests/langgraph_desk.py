"""The LangGraph desk of the adapter's acceptance tests: the desk of pydantic_ai_desk.py (its
tools, its project, its wire replies) as a LangChain v1 agent, `create_agent` with its model
LangChain's OpenAI chat model on the local wire stand-in (tests/model_wire.py, the client's
retries off), guarded by stalwart, its checkpoints in the record's backend: a SQLite file
beside the record, or the same PostgreSQL database.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_openai import ChatOpenAI
from pydantic_ai_desk import MODEL_TOOLS

import stalwart
from stalwart.adapters.langgraph import StalwartMiddleware


@contextmanager
def checkpointer(folder: Path, record: str) -> Iterator[Any]:
    """A durable checkpointer on the record's backend, closed after."""
    if record.startswith("postgresql"):
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(record) as saver:
            saver.setup()
            yield saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    connection = sqlite3.connect(folder / "checkpoints.sqlite", check_same_thread=False)
    try:
        yield SqliteSaver(connection)
    finally:
        connection.close()


def chat_model(wire_url: str) -> ChatOpenAI:
    return ChatOpenAI(model="m", base_url=wire_url + "/v1", api_key="k", max_retries=0)  # type: ignore[arg-type]


def langgraph_agent(
    desk: stalwart.Agent,
    module: Any,
    wire_url: str,
    saver: Any,
    *,
    tools: Sequence[str] = MODEL_TOOLS,
    middleware: Sequence[Any] = (),
) -> Any:
    """The LangChain agent, guarded by `desk` (its middleware last: innermost)."""
    return create_agent(
        chat_model(wire_url),
        [getattr(module, name) for name in tools],
        middleware=[*middleware, StalwartMiddleware(desk)],
        checkpointer=saver,
    )
