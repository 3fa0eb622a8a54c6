"""The `stalwart` command: a thin layer over the library.

- `stalwart lint agent.yaml` prints the registration lints, one per line, and exits 0
  even when there are some (a lint fails nothing).
- `stalwart verify agent.yaml` makes the checks before launch (`verify/`): one finding
  per line, with its code, agent and witness route, or `--json`; it exits 1 on any
  finding (unlike lint), 0 when there is none.
- `stalwart resume agent.yaml` resumes every run its process left mid-way (a call or an
  undo in flight), in every session of the file's agents, and prints one line per
  session: `<session>: <state>: <reply or question>`, or one line saying there was
  nothing to resume.
- `stalwart operator-token set agent.yaml` sets (or rotates) the operator token: it
  keeps a verifier of it (a salted scrypt hash) in the file agent.yaml's
  `operator_token:` names, never the token.
- `stalwart operator-undo agent.yaml SESSION` undoes the session's last run with the
  operator token, checked against that verifier.
- `stalwart operator-end agent.yaml SESSION --reason WHY` ends the session's run that
  cannot go on, with the operator token (`--by NAME` says who, by default the login name
  running it; `--json` prints the reply and the ending as JSON).

  Neither takes the token as an argument (a command line is visible to every user of the
  machine and kept in shell histories). On a terminal it is asked for without echo (twice
  by `set`); with no terminal it is the first line of stdin; `--token-env NAME` reads it
  from that environment variable instead (none of them takes it as an argument).
- `stalwart usage agent.yaml SESSION` prints the tokens and cost of every ask of the
  model in the session: one line per run that asked one, and a total. It reads the
  record only: no model is loaded and no key is needed.

- `stalwart serve agent.yaml` serves the person's pages and the JSON API (the `serve`
  extra; see docs/serving.md), on 127.0.0.1:8000 unless `--host`/`--port` say otherwise,
  and prints the address and the agent it serves; on stderr it logs each request, how many
  runs left mid-way it resumed, and, stopped while runs advance, what it waits for. An
  address it cannot listen on (a port in use) exits 2 with one line on stderr.
- `stalwart chat agent.yaml --user U` is the same in a terminal: turns typed, questions
  answered with single keys.
- `stalwart users set USERS_FILE NAME` adds a user of the login form, or changes their
  password (read without echo, or from stdin with `--password-stdin`).
- `stalwart explain agent.yaml "TURN"` prints how the selector reads the turn over the
  agent's tools: each clause, the tool it reads as and each argument with the words it
  came from, or why the clause is not read; then whether the turn is read. `--json` too.
  It runs nothing, asks nothing and opens no record; it exits 0 when the turn is read and
  1 when it is not (a turn past the limits exits 2).

A file that cannot be loaded exits 2 with the ConfigError's message on stderr; a wrong,
missing or refused operator token exits 3 (with a terminal or without), and an undo that
cannot be made exits 4, each with its message on stderr and nothing changed; so does a
run `operator-end` cannot end (none, ended already, busy in another worker now, or a
reason refused). `usage` of a session the record does not hold for that agent exits 4.
"""

from __future__ import annotations

import getpass
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from stalwart import limits, logs, texts
from stalwart.agent import Agent
from stalwart.backoff import UNDO_BACKOFF
from stalwart.clock import SystemClock
from stalwart.config import (
    ALLOW_OUTSIDE_ENV,
    AgentConfig,
    load_agent,
    load_project,
    pick_agent,
    unload_tool_modules,
)
from stalwart.errors import (
    AddressUnavailable,
    AnswerError,
    ConfigError,
    InputRefused,
    OperatorTokenError,
    SessionBusy,
)
from stalwart.policy.operator_token import write_verifier
from stalwart.record import open_store
from stalwart.record.usage import session_usage
from stalwart.selector import explain_turn
from stalwart.texts import resumed_line, verify_passed, verify_unreached
from stalwart.verify import (
    DEFAULT_MAX_STEPS,
    Report,
    check_turns,
    verify_agent,
    verify_project,
)
from stalwart.verify.lints import lint_agent, lint_project

EXIT_FINDINGS = 1  # `verify` found something
EXIT_BAD_CONFIG = 2
EXIT_BAD_TOKEN = 3
EXIT_NOT_UNDONE = 4
EXIT_NOT_ENDED = 4  # `operator-end` of a run it cannot end
EXIT_NO_SESSION = 4  # `usage` of a session the record does not hold for the agent
EXIT_NO_ADDRESS = 2  # `serve` cannot listen where it was asked to (a port in use)
EXIT_NOT_READ = 1  # `explain` of a turn the selector does not read

_CONFIG = click.argument("config", type=click.Path(dir_okay=False, path_type=Path))


@click.group()
@click.version_option(package_name="stalwart", prog_name="stalwart")
@click.option(
    "--allow-outside-project",
    is_flag=True,
    envvar=ALLOW_OUTSIDE_ENV,
    show_envvar=True,
    help="Let agent.yaml name files (rulebook, record, ...) outside its own folder.",
)
def main(allow_outside_project: bool) -> None:
    """stalwart: an agent runtime whose every write is confirmed, keyed, recorded and undoable."""
    logs.warnings_to_stderr()
    if allow_outside_project:
        os.environ[ALLOW_OUTSIDE_ENV] = "1"  # read by every load, here and in serve's workers


@main.command()
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--agent", "agent_name", default=None, help="Lint only this agent of the file.")
def lint(config: Path, agent_name: str | None) -> None:
    """Print what recovery needs from each write of CONFIG (agent.yaml) and is missing."""
    try:
        project = load_project(config)
    except ConfigError as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_BAD_CONFIG) from None
    # Loading imports (runs) the tools' modules; once linted, they and the project's folder
    # leave the process, so nothing of the project shadows a module imported after.
    try:
        if agent_name is None:
            lints = lint_project(project)
        else:
            lints = lint_agent(pick_agent(project, agent_name))
    except ConfigError as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_BAD_CONFIG) from None
    finally:
        unload_tool_modules(project)
        project.close()
    for found in lints:
        click.echo(str(found))


@main.command()
@_CONFIG
@click.option("--agent", "agent_name", default=None, help="Verify only this agent of the file.")
@click.option(
    "--max-steps",
    type=click.IntRange(min=2),
    default=DEFAULT_MAX_STEPS,
    show_default=True,
    help="The longest route explored.",
)
@click.option(
    "--turns",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Sample turns and how each must read (see docs/verify.md).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def verify(
    config: Path, agent_name: str | None, max_steps: int, turns: Path | None, as_json: bool
) -> None:
    """Check CONFIG (agent.yaml) before launch; exit 1 on any finding."""
    try:
        project = load_project(config)
        if agent_name is None:
            report = verify_project(project, max_steps=max_steps)
            agents = len(project.agents)
        else:
            report = verify_agent(load_agent(config, agent_name), max_steps=max_steps)
            agents = 1
        if turns is not None:
            report = report.with_turns(*check_turns(project, turns))
    except ConfigError as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_BAD_CONFIG) from None
    _print_report(report, agents, as_json)
    if not report.passed:
        raise SystemExit(EXIT_FINDINGS)


def _print_report(report: Report, agents: int, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
        return
    for finding in report.findings:
        click.echo(str(finding))
    for agent, tool in report.unreached:
        click.echo(verify_unreached(agent, tool, report.max_steps), err=True)
    if report.passed:
        click.echo(verify_passed(agents, report.max_steps))


@main.command()
@_CONFIG
@click.option("--agent", "agent_name", default=None, help="Resume only this agent's runs.")
def resume(config: Path, agent_name: str | None) -> None:
    """Resume every run of CONFIG's agents that a stopped process left mid-way."""
    with _agents(config, agent_name) as agents:
        resumed = 0
        for agent in agents:
            for session, reply in agent.resume_all():
                said = reply.text
                if not said and reply.framework is not None and reply.state == "running":
                    said = texts.framework_goes_on(reply.framework)  # its app goes on with it
                click.echo(resumed_line(session, reply.state, said))
                resumed += 1
        if not resumed:
            click.echo(texts.nothing_to_resume([agent.name for agent in agents]))


_TOKEN_ENV = click.option(
    "--token-env",
    default=None,
    metavar="NAME",
    help="Read the operator token from this environment variable, not from the terminal "
    "(asked without echo) or stdin (its first line).",
)


@main.command("operator-undo")
@_CONFIG
@click.argument("session")
@click.option("--agent", "agent_name", default=None, help="The agent of the session.")
@_TOKEN_ENV
def operator_undo(
    config: Path, session: str, agent_name: str | None, token_env: str | None
) -> None:
    """Undo SESSION's last run from outside it, with the operator token."""
    with _agents(config, agent_name, one=True) as agents:
        [agent] = agents
        try:
            token = _read_token(token_env, repeat=False)
            reply = agent.operator_undo(session, token=token)
        except OperatorTokenError as error:
            click.echo(str(error), err=True)
            raise SystemExit(EXIT_BAD_TOKEN) from None
        except AnswerError as error:
            click.echo(str(error), err=True)
            raise SystemExit(EXIT_NOT_UNDONE) from None
    click.echo(reply.text)


@main.command("operator-end")
@_CONFIG
@click.argument("session")
@click.option("--reason", required=True, help="Why it is ended: recorded, and said in its reply.")
@click.option("--by", "by", default=None, metavar="NAME",
              help="Who ends it, as recorded (default: the login name running this).")  # fmt: skip
@click.option("--agent", "agent_name", default=None, help="The agent of the session.")
@_TOKEN_ENV
@click.option("--json", "as_json", is_flag=True, help="Print the reply and the ending as JSON.")
def operator_end(
    config: Path,
    session: str,
    reason: str,
    by: str | None,
    agent_name: str | None,
    token_env: str | None,
    as_json: bool,
) -> None:
    """End SESSION's run that cannot go on, with the operator token: nothing more is sent,
    what can be undone now is undone, and the rest is left for a person to do by hand."""
    with _agents(config, agent_name, one=True) as agents:
        [agent] = agents
        try:
            token = _read_token(token_env, repeat=False)
            who = by if by is not None else _login_name()
            reply = agent.operator_end(session, token=token, reason=reason, by=who)
        except OperatorTokenError as error:
            click.echo(str(error), err=True)
            raise SystemExit(EXIT_BAD_TOKEN) from None
        except (AnswerError, InputRefused, SessionBusy) as error:
            click.echo(str(error), err=True)
            raise SystemExit(EXIT_NOT_ENDED) from None
    if not as_json:
        click.echo(reply.text)
        return
    ended = reply.ended
    shown = {
        "session": reply.session,
        "run": reply.run,
        "state": reply.state,
        "text": reply.text,
        "ended": None
        if ended is None
        else {"by": ended.by, "at": ended.at, "reason": ended.reason},
    }
    click.echo(json.dumps(shown, indent=2, ensure_ascii=False))


def _login_name() -> str | None:
    """Who runs this command, as the system names them; None when it cannot say."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return None


@main.group("operator-token")
def operator_token() -> None:
    """The operator token: only a verifier of it is kept, never the token."""


@operator_token.command("set")
@_CONFIG
@_TOKEN_ENV
def operator_token_set(config: Path, token_env: str | None) -> None:
    """Set (or rotate) the operator token of CONFIG's agents."""
    try:
        project = load_project(config)
    except ConfigError as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_BAD_CONFIG) from None
    try:
        token = _read_token(token_env, repeat=True)
        write_verifier(project.operator_token, token)
    except OperatorTokenError as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_BAD_TOKEN) from None
    click.echo(texts.operator_token_set(str(project.operator_token)))


def _read_token(token_env: str | None, *, repeat: bool) -> str:
    """The operator token: from the variable named, the terminal (no echo) or stdin's first
    line. Bytes that are not UTF-8 are kept as lone surrogates, so the check refuses them
    as a token, cleanly."""
    if token_env is not None:
        value = os.environ.get(token_env)
        if not value:
            raise OperatorTokenError(texts.operator_token_env_unset(token_env))
        return value
    if sys.stdin is not None and sys.stdin.isatty():
        first: str = click.prompt(
            "Operator token", hide_input=True, err=True, default="", show_default=False
        )
        if repeat:
            again: str = click.prompt(
                "The same token again", hide_input=True, err=True, default="", show_default=False
            )
            if again != first:
                raise OperatorTokenError(texts.operator_tokens_differ())
        return first
    if sys.stdin is None:
        return ""
    line = sys.stdin.buffer.readline()
    return line.removesuffix(b"\n").removesuffix(b"\r").decode("utf-8", "surrogateescape")


@main.command()
@_CONFIG
@click.argument("session")
@click.option("--agent", "agent_name", default=None, help="The agent of the session.")
def usage(config: Path, session: str, agent_name: str | None) -> None:
    """Print the model's tokens and cost in SESSION: per run, and a total."""
    try:
        agent_config = load_agent(config, agent_name)
    except ConfigError as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_BAD_CONFIG) from None
    store = open_store(agent_config.record)
    try:
        found = session_usage(store, session, agent_config.name)
    except AnswerError as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_NO_SESSION) from None
    finally:
        store.close()
    for line in found.lines():
        click.echo(line)


@contextmanager
def _agents(config: Path, agent_name: str | None, *, one: bool = False) -> Iterator[list[Agent]]:
    """The file's agents (the one named; with `one`, the only one), closed after."""
    try:
        if agent_name is not None or one:
            configs: list[AgentConfig] = [load_agent(config, agent_name)]
        else:
            configs = list(load_project(config).agents.values())
    except ConfigError as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_BAD_CONFIG) from None
    agents = [Agent(found) for found in configs]
    try:
        yield agents
    finally:
        for agent in agents:
            agent.close()


@main.command()
@_CONFIG
@click.option("--agent", "agent_name", default=None, help="The agent to serve.")
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", default=8000, show_default=True, type=int, help="The port (0: any free).")
@click.option("--workers", default=1, show_default=True, type=int,
              help="Worker processes (several need a PostgreSQL record).")  # fmt: skip
@click.option("--run-threads", default=64, show_default=True, type=int,
              help="Threads that advance runs, per worker.")  # fmt: skip
def serve(
    config: Path, agent_name: str | None, host: str, port: int, workers: int, run_threads: int
) -> None:
    """Serve CONFIG's agent: the person's pages, the inbox, the operator, the JSON API."""
    try:
        from stalwart.serve.server import run_server
    except ImportError as missing:
        click.echo(f"stalwart serve needs the serve extra: pip install 'stalwart[serve]' "
                   f"({missing})", err=True)  # fmt: skip
        raise SystemExit(EXIT_BAD_CONFIG) from None
    try:
        agent_config = load_agent(config, agent_name)
    except ConfigError as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_BAD_CONFIG) from None
    logs.serve_to_stderr()  # a line per request, what it resumed, what a stop waits for
    try:
        run_server(agent_config, host=host, port=port, workers=workers,
                   run_threads=run_threads, announce=click.echo)  # fmt: skip
    except AddressUnavailable as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_NO_ADDRESS) from None


@main.command()
@_CONFIG
@click.option("--user", required=True, help="Who is chatting (the session's owner).")
@click.option("--session", default=None, help="The session (default: the user's own).")
@click.option("--agent", "agent_name", default=None, help="The agent to chat with.")
def chat(config: Path, user: str, session: str | None, agent_name: str | None) -> None:
    """Chat with CONFIG's agent in this terminal; answer each question with one key."""
    from stalwart.serve.progress import Board, ObservedStore, ProgressClock
    from stalwart.serve.terminal import chat as chat_loop
    from stalwart.serve.terminal import read_key

    try:
        agent_config = load_agent(config, agent_name)
    except ConfigError as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_BAD_CONFIG) from None
    board = Board(listener=lambda line: click.echo(click.style(f"  … {line}", dim=True)))
    backoff = UNDO_BACKOFF
    store = ObservedStore(open_store(agent_config.record), board, backoff.tries, agent_config.tools)
    with Agent(agent_config, store=store, clock=ProgressClock(SystemClock(), board),
               undo_backoff=backoff) as agent:  # fmt: skip
        chat_loop(agent, user, session, read_line=lambda prompt: input(prompt),
                  read_key=read_key, write=click.echo)  # fmt: skip


@main.group()
def users() -> None:
    """The users file of `stalwart serve`'s login form (scrypt verifiers, never passwords)."""


@users.command("set")
@click.argument("users_file", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("name")
@click.option("--password-stdin", is_flag=True, help="Read the password from stdin.")
def users_set(users_file: Path, name: str, password_stdin: bool) -> None:
    """Add NAME to USERS_FILE, or change their password."""
    from stalwart.serve.users import Users

    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True, err=True)
    try:
        Users(users_file).set(name, password)
    except ValueError as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_BAD_CONFIG) from None


@main.command()
@_CONFIG
@click.argument("turn")
@click.option("--agent", "agent_name", default=None, help="The agent whose tools read it.")
@click.option("--json", "as_json", is_flag=True, help="Print the explanation as JSON.")
def explain(config: Path, turn: str, agent_name: str | None, as_json: bool) -> None:
    """How TURN is read over CONFIG's tools, clause by clause; runs nothing."""
    try:
        agent = load_agent(config, agent_name)
    except ConfigError as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_BAD_CONFIG) from None
    tools = list(agent.tools.values())
    try:
        explanation = explain_turn(limits.check_turn(turn), tools, agent.languages)
    except InputRefused as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_BAD_CONFIG) from None
    if as_json:
        click.echo(json.dumps(explanation.to_json(), indent=2, ensure_ascii=False))
    else:
        for line in explanation.lines():
            click.echo(line)
    if not explanation.reading.read:
        raise SystemExit(EXIT_NOT_READ)
