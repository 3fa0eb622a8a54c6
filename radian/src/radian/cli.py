"""`radian`: the command line. A thin layer over radian.arc.commands, loop and show.

Exit codes: 0 done; 1 refused (an unknown task or plan, a state that does not allow the
command, a name in use, another run active); 2 bad usage or configuration (options,
.radian/arc.toml, worker.exec_args, a plan file); 3 `run` or `start` moved a task to
failed.*; 130 interrupted by Ctrl-C, 143 stopped by SIGTERM (workers stopped, every file whole).
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

# Only what every command's set-up needs is imported here (click, the texts, the states, the
# errors); each command imports its own modules when it runs, so `radian arc status` does not
# pay for pydantic and the loop, nor `radian arc --help` for any of them.
from radian.arc import texts
from radian.arc.clock import Clock, clock_from_environment
from radian.arc.errors import ArcError, UsageError
from radian.arc.record_format import FIX_LEVELS
from radian.arc.states import State
from radian.arc.worker.presets import WORKER_NAMES

if TYPE_CHECKING:
    from radian.arc.config import ArcConfig
    from radian.arc.events import Event
    from radian.arc.hooks import Hooks
    from radian.arc.listing import Selection
    from radian.arc.loop import Loop, RunReport, Verifier
    from radian.arc.records import Switch
    from radian.arc.results import CommandResult
    from radian.arc.status import Readable
    from radian.arc.store_protocol import Store

# 1 (refused) and 2 (bad usage or configuration) are the exit_code of the ArcError raised
# (radian.arc.errors); these two are the run's own.
EXIT_TASK_FAILED = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT; SIGTERM gives 128 + 15 = 143


# The version of every JSON document and JSON line the CLI prints (--json); a change that
# removes or renames a key, or changes what a value means, raises it. 2: a command's document
# has its typed "result"; a line of `run` is its event's kind ("claimed", "retry", ...) with
# "state", "attempt_id" and "plan", where 1 had "event": "line".
JSON_FORMAT_VERSION = 2


class Context:
    def __init__(self, repo: Path) -> None:
        self.repo_root = repo
        self._store: Store | None = None
        self.clock: Clock = clock_from_environment()
        self.as_json = False  # set by --json
        self.hooks: Hooks | None = None  # [[hooks]], set up with the loop of run or start

    @property
    def store(self) -> Store:
        """The repository's store (radian.arc.store_open), opened at its first use: a
        ConfigError when the one configured cannot be opened."""
        if self._store is None:
            from radian.arc.store_open import open_store

            self._store = open_store(self.repo_root)
        return self._store

    def reader(self) -> Readable[Any]:
        """What a command that only reads every plan and task reads: the files read plainly
        (no typed record loaded) when they are the store (radian.arc.store_open)."""
        if self._store is not None:
            return self._store
        from radian.arc.store_open import open_reader

        return open_reader(self.repo_root)

    def config(self) -> ArcConfig:
        from radian.arc.config import load_config

        return load_config(self.repo_root)


def find_repo_root(start: Path) -> Path:
    """The nearest folder upwards holding .git (or .radian); `start` when there is none."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists() or (folder / ".radian").is_dir():
            return folder
    return start


def make_verifier(store: Store, config: ArcConfig, clock: Clock) -> Verifier:
    """GATE's verifier when it is installed and [gate] is configured; else NoVerifier."""
    from radian.arc.loop import NoVerifier

    if config.gate is None:
        return NoVerifier()
    try:
        from radian.arc.gate import GateVerifier
    except ImportError:
        return NoVerifier()
    verifier: Verifier = GateVerifier(store, config, clock)
    return verifier


def _current() -> Context | None:
    return click.get_current_context().find_object(Context)


def _as_json() -> bool:
    context = _current()
    return context is not None and context.as_json


def _json_out(document: dict[str, Any]) -> None:
    """One JSON document (or JSON line) on stdout, with the format version and the command."""
    command = " ".join(click.get_current_context().command_path.split()[1:])
    stamped = {"format_version": JSON_FORMAT_VERSION, "command": command, **document}
    click.echo(json.dumps(stamped, allow_nan=False))


def _emit(result: CommandResult) -> None:
    """A command's typed result: its lines, or with --json its document."""
    if _as_json():
        _json_out({"ok": True, "lines": result.lines(), "result": result.document()})
        return
    for line in result.lines():
        click.echo(line)


_T = TypeVar("_T")


def _guard(action: Callable[[], _T]) -> _T:
    try:
        return action()
    except ArcError as error:
        if _as_json():
            _json_out({"ok": False, "exit_code": error.exit_code, "error": str(error)})
        else:
            click.echo(str(error), err=True)
        raise SystemExit(error.exit_code) from None
    except KeyboardInterrupt:
        # A command stopped half-way has undone or finished its write (each is atomic, a
        # plan load all or nothing): the README's exit code for Ctrl-C.
        raise SystemExit(EXIT_INTERRUPTED) from None


def _set_json(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.ensure_object(Context).as_json = True


def json_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """--json on a command: its result as one JSON document (JSON lines for run and start),
    each with "format_version"; a refusal as {"ok": false, "exit_code", "error"}."""
    return click.option(
        "--json",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_set_json,
        help="Print JSON (with a format_version) instead of text.",
    )(command)


def _switch(value: str) -> bool:
    return value == "on"


ON_OFF = click.Choice(["on", "off"])
# A path, read once every option is checked: click.File would open it first and leave it
# open when a later option is refused.
BRIEF_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


def _read_brief(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise click.BadParameter(str(error), param_hint="'--brief'") from None


FIX_LEVEL = click.Choice(FIX_LEVELS)


class _Commands(click.Group):
    """radian's commands; those in `LAZY` are imported when they are looked up (to run one,
    or for `radian --help`), not at every start of `radian`."""

    LAZY: dict[str, tuple[str, str]] = {"worker": ("radian.worker.main", "worker_command")}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.LAZY and cmd_name not in self.commands:
            module, name = self.LAZY[cmd_name]
            self.add_command(getattr(importlib.import_module(module), name), cmd_name)
        return super().get_command(ctx, cmd_name)


@click.group(cls=_Commands)
@click.version_option(package_name="radian", prog_name="radian")
def main() -> None:
    """radian: supervise coding agents."""


@main.group()
@click.option(
    "--repo",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="RADIAN_ARC_REPO",
    show_envvar=True,
    help="The repository (default: the one holding the current directory).",
)
@click.pass_context
def arc(ctx: click.Context, repo: Path | None) -> None:
    """arc: work through a plan of tasks on a git repository."""
    ctx.obj = Context(find_repo_root(repo or Path(os.getcwd())))


pass_context = click.make_pass_decorator(Context)


@arc.command()
@click.option(
    "--worker",
    type=click.Choice(WORKER_NAMES),
    default=None,
    help="Write exec_args for this coding agent (radian/docs/worker.md).",
)
@json_option
@pass_context
def init(context: Context, worker: str | None) -> None:
    """Write a commented default .radian/arc.toml."""
    from radian.arc import commands

    _emit(commands.init(context.repo_root, worker))


@arc.group()
def plan() -> None:
    """Add, load and switch plans."""


@plan.command("add")
@click.argument("name")
@click.option("--auto", type=ON_OFF, default="on", show_default=True)
@click.option("--max-cost-usd", type=float, default=None)
@click.option("--merge-main", type=ON_OFF, default="on", show_default=True)
@click.option("--auto-rework", type=int, default=1, show_default=True)
@click.option("--fix-level", type=FIX_LEVEL, default=None)
@json_option
@pass_context
def plan_add(
    context: Context,
    name: str,
    auto: str,
    max_cost_usd: float | None,
    merge_main: str,
    auto_rework: int,
    fix_level: str | None,
) -> None:
    """Add an empty plan."""
    from radian.arc import commands

    _emit(
        _guard(
            lambda: commands.add_plan(
                context.store,
                name,
                auto="on" if auto == "on" else "off",
                max_cost_usd=max_cost_usd,
                merge_main=_switch(merge_main),
                auto_rework=auto_rework,
                fix_level=fix_level,
            )
        )
    )


@plan.command("load")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@json_option
@pass_context
def plan_load(context: Context, file: Path) -> None:
    """Add a plan and its tasks from one TOML file."""
    from radian.arc import commands

    _emit(_guard(lambda: commands.load_plan_file(context.store, context.clock, file)))


@plan.command("auto")
@click.argument("name")
@click.argument("value", type=ON_OFF)
@json_option
@pass_context
def plan_auto(context: Context, name: str, value: str) -> None:
    """Turn a plan's auto on or off."""
    from radian.arc import commands

    auto: Switch = "on" if value == "on" else "off"
    _emit(_guard(lambda: commands.set_plan_auto(context.store, name, auto)))


@arc.group()
def store() -> None:
    """Where arc keeps its records (radian/docs/hosts.md)."""


@store.command("migrate")
@json_option
@pass_context
def store_migrate(context: Context) -> None:
    """Move this repository's files under .radian/arc/ into the PostgreSQL store configured."""
    from radian.arc.store import ArcStore
    from radian.arc.store_migrate import migrate

    _emit(_guard(lambda: migrate(ArcStore(context.repo_root), context.store)))


@arc.group()
def task() -> None:
    """Add tasks to a plan."""


@task.command("add")
@click.argument("plan_name", metavar="PLAN")
@click.argument("name", metavar="TASK")
@click.option("--brief", "brief_file", required=True, type=BRIEF_FILE)
@click.option("--max-attempts", type=int, default=None)
@click.option("--max-cost-usd", type=float, default=None)
@click.option("--fix-level", type=FIX_LEVEL, default=None)
@json_option
@pass_context
def task_add(
    context: Context,
    plan_name: str,
    name: str,
    brief_file: Path,
    max_attempts: int | None,
    max_cost_usd: float | None,
    fix_level: str | None,
) -> None:
    """Add a task with its brief to a plan."""
    from radian.arc import commands

    text = _read_brief(brief_file)
    _emit(
        _guard(
            lambda: commands.add_task(
                context.store,
                context.clock,
                plan_name,
                name,
                text,
                max_attempts=max_attempts,
                max_cost_usd=max_cost_usd,
                fix_level=fix_level,
            )
        )
    )


@arc.command()
@click.argument("plan_name", metavar="PLAN")
@json_option
@pass_context
def confirm(context: Context, plan_name: str) -> None:
    """Confirm a plan: its tasks may be claimed from now on."""
    from radian.arc import commands

    _emit(_guard(lambda: commands.confirm(context.store, context.config(), plan_name)))


def _loop(context: Context) -> Loop:
    from radian.arc.hooks import Hooks, unfinished_tasks
    from radian.arc.loop import Loop

    config = context.config()
    loop = Loop(
        context.store,
        config,
        context.clock,
        verifier=make_verifier(context.store, config, context.clock),
        echo=_ignore if context.as_json else click.echo,
        on_event=_run_event if context.as_json else None,
    )
    if config.hooks:
        context.hooks = Hooks(
            config.hooks,
            context.store.repo_root,
            context.clock,
            plan_of=lambda task: getattr(context.store.try_load_task(task), "plan", None),
            unfinished=lambda plan: unfinished_tasks(context.store, plan),
        )
        loop.on_event = _both(loop.on_event, context.hooks)
    return loop


def _both(
    first: Callable[[Event], None] | None, then: Callable[[Event], None]
) -> Callable[[Event], None]:
    def both(event: Event) -> None:
        if first is not None:
            first(event)
        then(event)

    return both


def _ignore(_line: str) -> None:
    return None


def _run_event(event: Event) -> None:
    """An event of `run` or `start` as a JSON line."""
    _json_out(event.document())


def _finish(report: RunReport, *, with_report: bool = False) -> None:
    """The end of `run` or `start`: the hooks' last runs, `run`'s report, the exit code."""
    from radian.arc.report import build_report, report_text

    context = click.get_current_context().find_object(Context)
    if context is not None and context.hooks is not None:
        context.hooks.close()
    # The report covers the tasks the run's events named; a run that did nothing says nothing.
    tasks = [event.task for event in report.events if event.task is not None]
    ended = build_report(context.store, tasks) if with_report and context and tasks else None
    if ended is not None and not _as_json():
        for line in report_text(ended):
            click.echo(line)
    code = 0
    if report.interrupted:
        code = 128 + (report.stopped_by or signal.SIGINT)
    elif report.failed:
        code = EXIT_TASK_FAILED
    if _as_json():
        end = {"event": "end", "exit_code": code, "failed": report.failed,
               "interrupted": report.interrupted}  # fmt: skip
        _json_out(end if ended is None else {**end, "report": ended.document()})
    if code:
        raise SystemExit(code)


def _stop_on_sigterm() -> None:
    """SIGTERM (systemd's stop, `kill`) stops `run` and `start` the way Ctrl-C does."""
    from radian.arc.loop import Terminated

    def terminated(_signum: int, _frame: object) -> None:
        raise Terminated()

    signal.signal(signal.SIGTERM, terminated)


@arc.command()
@click.option("--once", is_flag=True, help="One pass: claim, wait for those attempts, return.")
@json_option
@pass_context
def run(context: Context, once: bool) -> None:
    """Run the plans' ready tasks until nothing is ready, running or waiting."""
    _stop_on_sigterm()
    if context.as_json or not sys.stdout.isatty():
        _finish(_guard(lambda: _loop(context).run(once=once)), with_report=True)
        return
    from radian.arc.progress import LiveView

    loop = _guard(lambda: _loop(context))
    with LiveView(loop) as view:  # on a terminal: the workers, refreshed in place
        loop.echo = view.echo
        report = _guard(lambda: loop.run(once=once))
    _finish(report, with_report=True)


@arc.command()
@click.argument("name", metavar="TASK")
@json_option
@pass_context
def start(context: Context, name: str) -> None:
    """Claim one task now (even one waiting on its retry) and run its attempt."""
    _stop_on_sigterm()
    _finish(_guard(lambda: _loop(context).start(name)))


@arc.command()
@click.option(
    "--wait", "wait_secs", type=float, default=60.0, show_default=True,
    help="Seconds to wait for the run to stop (0: do not wait).",
)  # fmt: skip
@json_option
@pass_context
def stop(context: Context, wait_secs: float) -> None:
    """Stop this repository's radian arc run as SIGTERM does: no retry used."""
    from radian.arc.stopping import stop_run

    stopped = _guard(lambda: stop_run(context.store, wait_secs=wait_secs))
    _emit(stopped)
    if not stopped.stopped and wait_secs > 0:
        raise SystemExit(1)


@arc.command("show")
@click.argument("name", metavar="TASK", required=False)
@click.option(
    "--brief", "brief", is_flag=True, help="Print the brief the task's next attempt is sent."
)
@click.option("--plan", "plan_name", metavar="PLAN", help="Only this plan's tasks.")
@click.option(
    "--state", type=click.Choice([str(state) for state in State]), help="Only tasks in this state."
)
@click.option("--limit", type=click.IntRange(min=1), help="At most this many tasks (a page).")
@click.option(
    "--page", type=click.IntRange(min=1), help="Which page of --limit tasks (from 1).", default=None
)
@json_option
@pass_context
def show_command(
    context: Context,
    name: str | None,
    brief: bool,
    plan_name: str | None,
    state: str | None,
    limit: int | None,
    page: int | None,
) -> None:
    """Show a task, or every plan and task (or those of --plan, in --state, a page at a time)."""
    from radian.arc import show
    from radian.arc.listing import Selection

    config = _guard(context.config)
    selection = Selection(plan_name, state, limit, page or 1)
    if page is not None and limit is None:
        raise click.UsageError(texts.SHOW_PAGE_NEEDS_LIMIT)
    if selection.narrowed and (name is not None or brief):
        raise click.UsageError(texts.SHOW_SELECTION_NEEDS_NO_TASK)
    if brief:
        if name is None:
            raise click.UsageError(texts.SHOW_BRIEF_NEEDS_TASK)
        document = _guard(lambda: show.next_brief_document(context.store, config, name))
        lines = [document["brief"].rstrip("\n")]
    elif selection.narrowed:
        document = _guard(lambda: _selected(context, config, selection))
        lines = show.overview_text(document)
        if not any(plan["tasks"] for plan in document["plans"]):
            lines = [texts.SHOW_NO_TASK_MATCHES]
        if limit is not None:
            page_of = document["page"]
            lines.append(texts.show_page(page_of["page"], page_of["pages"], page_of["matching"]))
    elif name is None:
        document = show.overview_document(context.store, config)
        lines = show.overview_text(document)
    else:
        document = _guard(lambda: show.one_task_document(context.store, config, name))
        lines = show.task_text(document)
    if context.as_json:
        stamped = {"format_version": JSON_FORMAT_VERSION, **document}
        click.echo(json.dumps(stamped, indent=2, allow_nan=False))
    else:
        for line in lines:
            click.echo(line)


def _selected(context: Context, config: ArcConfig, selection: Selection) -> dict[str, Any]:
    from radian.arc import show
    from radian.arc.listing import selected_document

    store = context.store
    plans = store.plans()
    if selection.plan is not None and all(plan.name != selection.plan for plan in plans):
        store.load_plan(selection.plan)  # the NotFoundError or DamagedFile that says why
    return selected_document(plans, store.try_load_task,
                             lambda task: show.task_document(store, config, task),
                             store.damaged, selection)  # fmt: skip


@arc.command("status")
@click.option("--plan", "plan_name", metavar="PLAN", help="Only this plan.")
@click.option(
    "--state", type=click.Choice([str(state) for state in State]), help="Only tasks in this state."
)
@json_option
@pass_context
def status_command(context: Context, plan_name: str | None, state: str | None) -> None:
    """Counts by state, cost and budget left per plan, the last hour's rate, what waits on you."""
    from radian.arc import status

    reader = _guard(context.reader)
    found = _guard(lambda: status.fleet_status(reader, context.clock, plan=plan_name,
                                               state=state))  # fmt: skip
    if context.as_json:
        document = {"format_version": JSON_FORMAT_VERSION, **found.document()}
        click.echo(json.dumps(document, indent=2, allow_nan=False))
    else:
        for line in status.status_text(found):
            click.echo(line)


@arc.command("doctor")
@json_option
@pass_context
def doctor_command(context: Context) -> None:
    """Reconcile each plan's running cost with its tasks' own files."""
    from radian.arc.doctor import doctor

    found = _guard(lambda: doctor(context.store))
    if context.as_json:
        click.echo(json.dumps({"format_version": JSON_FORMAT_VERSION, **found.document()},
                              indent=2, allow_nan=False))  # fmt: skip
    else:
        for line in found.lines():
            click.echo(line)


@arc.command("report")
@click.option("--plan", "plan_name", metavar="PLAN", help="Only this plan.")
@json_option
@pass_context
def report_command(context: Context, plan_name: str | None) -> None:
    """What was done, what failed and why, cost per task and in total."""
    from radian.arc.report import build_report, report_text

    found = _guard(lambda: build_report(context.store, plan=plan_name))
    if context.as_json:
        click.echo(json.dumps({"format_version": JSON_FORMAT_VERSION, **found.document()},
                              indent=2, allow_nan=False))  # fmt: skip
    else:
        for line in report_text(found):
            click.echo(line)


@arc.command("serve")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address to listen on (any other than 127.0.0.1 needs a token).",
)
@click.option("--port", default=8780, show_default=True, type=int, help="The port (0: any free).")
@click.option(
    "--token",
    default=None,
    envvar=texts.SERVE_TOKEN_ENV,
    show_envvar=True,
    help="Every request must carry it (Authorization: Bearer, or /?token= once).",
)
@json_option
@pass_context
def serve_command(context: Context, host: str, port: int, token: str | None) -> None:
    """Serve a read-only web page of the fleet, live, and its JSON API (/api/v1)."""
    from urllib.parse import urlsplit

    from radian.arc.serve.access import check_token

    token = token or None
    _guard(lambda: check_token(host, token))
    try:
        from radian.arc.serve.fleet import Fleet
        from radian.arc.serve.server import run_server
    except ImportError as missing:
        needs = UsageError(texts.serve_needs_extra(str(missing)))
        _guard(lambda: _raise(needs))
        return
    fleet = Fleet(context.store, context.clock, _guard(context.config))

    def announce(url: str) -> None:
        line = texts.served_at(url, str(context.repo_root), token=token is not None)
        if context.as_json:
            result = {"kind": "serving", "url": url, "host": host, "port": urlsplit(url).port,
                      "token": token is not None}  # fmt: skip
            _json_out({"ok": True, "lines": [line], "result": result})
        else:
            click.echo(line)

    _guard(lambda: run_server(fleet, host=host, port=port, token=token, announce=announce))


def _raise(error: Exception) -> None:
    raise error


@arc.command()
@click.argument("name", metavar="TASK")
@json_option
@pass_context
def cancel(context: Context, name: str) -> None:
    """Cancel a task (stopping its worker): failed.cancelled."""
    from radian.arc import commands

    _emit(_guard(lambda: commands.cancel(context.store, context.clock, name)))


@arc.command()
@click.argument("name", metavar="TASK")
@click.option("--brief", "brief_file", required=True, type=BRIEF_FILE)
@json_option
@pass_context
def rework(context: Context, name: str, brief_file: Any) -> None:
    """Append a "## Rework <n>" to the task's brief; the task is ready, its retries fresh."""
    from radian.arc import commands

    text = _read_brief(brief_file)
    _emit(_guard(lambda: commands.rework(context.store, context.clock, name, text)))


@arc.command()
@click.argument("name", metavar="TASK")
@json_option
@pass_context
def reverify(context: Context, name: str) -> None:
    """Run a task's gate again now, without a worker (ignores the automatic guards)."""
    from radian.arc.gate import reverify_by_hand

    _emit(_guard(lambda: reverify_by_hand(context.store, context.config(), context.clock, name)))


@arc.command("reset-budget")
@click.argument("name", metavar="TASK")
@json_option
@pass_context
def reset_budget(context: Context, name: str) -> None:
    """Set a paused task's cost_usd to 0 and make it ready."""
    from radian.arc import commands

    _emit(_guard(lambda: commands.reset_budget(context.store, context.clock, name)))


@arc.command()
@click.option("--branches", is_flag=True, help="Also delete the local arc/<task> branches.")
@click.option(
    "--remote-branches",
    is_flag=True,
    help="Also delete integrated tasks' arc/<task> branches on the remote.",
)
@json_option
@pass_context
def gc(context: Context, branches: bool, remote_branches: bool) -> None:
    """Remove the worktrees of integrated, failed and unknown tasks, and stale gate ones."""
    from radian.arc.cleanup import Policy
    from radian.arc.cleanup import gc as collect
    from radian.arc.store import ArcStore

    local = cast(ArcStore, context.store)  # cleanup reads only this host's folders
    policy = _guard(lambda: Policy.of(context.config(), worktrees=True, branches=branches,
                                      remote_branches=remote_branches))  # fmt: skip
    _emit(_guard(lambda: collect(local, policy=policy)))
