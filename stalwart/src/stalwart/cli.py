"""The `stalwart` command: a thin layer over the library.

`stalwart lint agent.yaml` prints the registration lints, one per line, and exits 0
even when there are some (a lint fails nothing). A file that cannot be loaded exits 2
with the ConfigError's message on stderr.
"""

from __future__ import annotations

from pathlib import Path

import click

from stalwart.config import load_agent, load_project
from stalwart.errors import ConfigError
from stalwart.lints import lint_agent, lint_project

EXIT_BAD_CONFIG = 2


@click.group()
def main() -> None:
    """stalwart: an agent runtime whose every write is confirmed, keyed, recorded and undoable."""


@main.command()
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--agent", "agent_name", default=None, help="Lint only this agent of the file.")
def lint(config: Path, agent_name: str | None) -> None:
    """Print what recovery needs from each write of CONFIG (agent.yaml) and is missing."""
    try:
        if agent_name is None:
            lints = lint_project(load_project(config))
        else:
            lints = lint_agent(load_agent(config, agent_name))
    except ConfigError as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_BAD_CONFIG) from None
    for found in lints:
        click.echo(str(found))
