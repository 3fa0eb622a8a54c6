"""`radian worker`: run the radian worker as an ACP agent on stdin/stdout."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import click

from radian.worker import texts
from radian.worker.limits import DEFAULT_MAX_TOKENS, DEFAULT_MAX_TURNS
from radian.worker.models import load_provider
from radian.worker.pricing import load_prices

DEFAULT_MODEL = "anthropic:claude-sonnet-4-5"
# After SIGTERM (its client's wrapper stopping the attempt) the worker waits this long for the
# client's session/cancel, so the turn ends as a cancel and its session is saved.
TERM_GRACE_SECS = 2.0


def run(
    model: str,
    prices_file: Path | None,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> int:
    # Imported here, not at the top: `radian` imports this module for every `radian arc`
    # command, and acp's schema alone takes seconds to import.
    import acp

    from radian.worker.agent import RadianAgent

    provider = load_provider(model)
    prices = load_prices(prices_file)

    def note(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    agent = RadianAgent(provider, prices, note, max_turns=max_turns, max_tokens=max_tokens)

    async def serve() -> None:
        loop = asyncio.get_running_loop()

        def on_term() -> None:
            note(texts.LOG_TERM.format(secs=TERM_GRACE_SECS))
            loop.call_later(TERM_GRACE_SECS, os._exit, 143)

        loop.add_signal_handler(signal.SIGTERM, on_term)
        await acp.run_agent(agent)

    asyncio.run(serve())
    return 0


@click.command("worker")
@click.option(
    "--model",
    default=None,
    envvar="RADIAN_WORKER_MODEL",
    show_envvar=True,
    help="provider:model, e.g. anthropic:claude-sonnet-4-5 or openai:gpt-5.",
)
@click.option(
    "--prices",
    "prices_file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    envvar="RADIAN_WORKER_PRICES",
    show_envvar=True,
    help="A TOML file of model prices laid over the shipped table.",
)
@click.option(
    "--max-turns",
    default=DEFAULT_MAX_TURNS,
    show_default=True,
    help="Model requests per prompt turn.",
)
@click.option(
    "--max-tokens",
    default=DEFAULT_MAX_TOKENS,
    show_default=True,
    help="Output tokens per model request.",
)
def worker_command(
    model: str | None, prices_file: Path | None, max_turns: int, max_tokens: int
) -> None:
    """The radian worker: radian's coding agent, an ACP agent on stdin/stdout."""
    try:
        code = run(model or DEFAULT_MODEL, prices_file, max_turns, max_tokens)
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    sys.exit(code)
