"""Every line arc prints for a person, in one place.

The chapter fixes `<task> worker model unavailable -> retry at <UTC time>`; the other lines
follow its shape: `<task> <what happened> -> <where the task goes>`. UTC times read
2026-11-30T07:15:00Z (radian.arc.clock.UTC_FORMAT).
"""

from __future__ import annotations


def _money(value: float) -> str:
    return f"${value:.2f}"


# -- refusals -----------------------------------------------------------------------------
def illegal_transition(task: str, from_state: str, to_state: str) -> str:
    return f"{task}: cannot move from {from_state} to {to_state}"


def bad_name(kind: str, name: str) -> str:
    return (
        f"{kind} name {name!r} is not allowed: use 1 to 64 letters, digits, '.', '_' or '-', "
        "starting with a letter or a digit"
    )


def bad_fix_level(level: str, levels: tuple[str, ...]) -> str:
    return f"fix_level {level!r} is not a level: use one of {', '.join(levels)}"


def no_such_plan(plan: str) -> str:
    return f"no plan named {plan!r}"


def no_such_task(task: str) -> str:
    return f"no task named {task!r}"


def damaged_file(path: str, problem: str) -> str:
    return (
        f"{path}: {problem}; nothing runs this task until the file is repaired: restore it "
        "from a backup, or remove the task's folder and its name from its plan's file"
    )


def missing_file() -> str:
    return "the file is missing"


def unreadable(reason: str) -> str:
    return f"cannot be read ({reason})"


def not_json(reason: str) -> str:
    return f"not valid JSON ({reason})"


def too_deep() -> str:
    return "nested too deeply to be a record of arc's"


def wrong_fields(problems: str) -> str:
    return f"not a record arc can read ({problems})"


def loaded_not_object() -> str:
    return "expected an object with the objects task and tasks"


def wrong_name(kind: str, name: str) -> str:
    return f"names another {kind} ({name!r})"


def newer_format(version: int, ours: int) -> str:
    return f"written by a newer radian (format {version}; this one reads up to {ours})"


def quarantined(name: str, problem: str) -> str:
    return f"{name} quarantined: {problem}"


def plan_exists(plan: str) -> str:
    return f"a plan named {plan!r} already exists"


def task_exists(task: str, plan: str) -> str:
    return f"a task named {task!r} already exists (in plan {plan!r})"


def negative_option(option: str) -> str:
    return f"{option} must be a number, 0 or more"


def empty_brief(task: str) -> str:
    return f"the brief of task {task!r} is empty"


def empty_rework_brief() -> str:
    return "the rework brief is empty"


def unreadable_file(label: str, reason: str | None) -> str:
    return f"{label}: cannot be read: {reason}"


def not_utf8(label: str, error: UnicodeDecodeError) -> str:
    return f"{label}: not UTF-8 text (byte {error.start}: {error.reason})"


def unreadable_config(label: str, reason: str | None) -> str:
    return f"{label}: cannot be read: {reason}"


def not_valid_toml(label: str, error: Exception) -> str:
    return f"{label}: not valid TOML: {error}"


def duplicate_task_names(label: str, names: list[str]) -> str:
    return f"{label}: task names appear twice: {', '.join(names)}"


def unreadable_brief_file(label: str, index: int, brief_file: str, path: str) -> str:
    return (
        f"{label}: task.{index}.brief_file: expected a readable file, "
        f"got {brief_file!r} ({path} cannot be read)"
    )


def bad_exec_args(problems: list[str]) -> str:
    return "worker.exec_args in .radian/arc.toml is refused:\n" + "\n".join(
        f"  {problem}" for problem in problems
    )


def not_confirmed(plan: str) -> str:
    return f"plan {plan!r} is not confirmed: radian arc confirm {plan}"


def cannot_start(task: str, state: str) -> str:
    return f"{task} is {state}: only a todo.ready or todo.retry_wait task can start"


def cannot_cancel(task: str, state: str) -> str:
    return f"{task} is {state}: there is nothing to cancel"


def cannot_rework(task: str, state: str) -> str:
    return f"{task} is {state}: a rework needs a task that is not running, paused or done"


def cannot_reset_budget(task: str, state: str) -> str:
    return f"{task} is {state}: reset-budget applies to a todo.paused_budget task"


def no_run_to_stop() -> str:
    return "no radian arc run is working on this repository"


def run_not_named() -> str:
    return "a radian arc run holds this repository's run lock but left no process id to stop"


def run_stopped(pid: int) -> str:
    return f"radian arc run (process {pid}) stopped: its attempts are interrupted, no retry used"


def run_told_to_stop(pid: int, waited_secs: float) -> str:
    if waited_secs <= 0:
        return f"radian arc run (process {pid}) told to stop"
    return f"radian arc run (process {pid}) told to stop; still stopping after {waited_secs:g} s"


def run_already_active() -> str:
    return "another radian arc run is working on this repository"


def config_written(path: str) -> str:
    return f"wrote {path}"


def config_kept(path: str) -> str:
    return f"{path} exists; left as it is"


def plan_added(plan: str) -> str:
    return f"plan {plan} added (not confirmed)"


def plan_loaded(plan: str, tasks: int) -> str:
    return f"plan {plan} loaded with {tasks} task(s) (not confirmed)"


def plan_confirmed(plan: str) -> str:
    return f"plan {plan} confirmed"


def task_added(task: str, plan: str) -> str:
    return f"{task} added to plan {plan}: todo.ready"


# `radian arc status`
STATUS_NO_PLANS = "no plans"
STATUS_PAUSED_BUDGET = "its budget is used up: radian arc reset-budget <task>"
STATUS_REWORK_PENDING = "waits for a rework: radian arc rework <task> --brief FILE"

# the report at the end of `radian arc run`, and `radian arc report`
REPORT_NOTHING = "report: no task"
REPORT_CANCELLED = "cancelled"


def report_heading(integrated: int, failed: int, other: int, cost: str) -> str:
    return (
        f"report: {integrated} integrated, {failed} failed, {other} not finished; "
        f"cost {cost} in total"
    )


# `radian arc doctor`
DOCTOR_NO_PLANS = "no plans"


def doctor_cost(plan: str, kept: float | None, counted: float, fixed: bool) -> str:
    if not fixed:
        return f"plan {plan}: running cost ${counted:.4f} matches its tasks"
    was = "none" if kept is None else f"${kept:.4f}"
    return f"plan {plan}: running cost was {was}, its tasks say ${counted:.4f}: set to that"


# `radian arc show --brief` without a task
SHOW_BRIEF_NEEDS_TASK = "--brief shows one task's brief: radian arc show --brief <task>"

# `radian arc show --page` without --limit, and the options a task's own show takes none of
SHOW_PAGE_NEEDS_LIMIT = (
    "--page counts pages of --limit tasks: radian arc show --limit <n> --page <k>"
)
SHOW_SELECTION_NEEDS_NO_TASK = (
    "--plan, --state, --limit and --page narrow the listing: give no task"
)


def show_page(page: int, pages: int, matching: int) -> str:
    """The last line of a paged `radian arc show --limit N`."""
    return f"page {page} of {pages} ({matching} tasks)"


# `radian arc show --plan/--state` when no task matches
SHOW_NO_TASK_MATCHES = "no task matches"

# every "## Rework <n>" section of a brief starts so (radian.arc.brief appends them)
REWORK_PREFIX = "## Rework "


def rework_heading(number: int) -> str:
    return f"{REWORK_PREFIX}{number}"


# -- the loop's lines ---------------------------------------------------------------------
def moved(task: str, from_state: str, to_state: str) -> str:
    return f"{task} {from_state} -> {to_state}"


def claimed(task: str, from_state: str, attempt_id: str) -> str:
    return f"{task} {from_state} -> doing.working (attempt {attempt_id})"


def delivered(task: str, head_sha: str | None) -> str:
    return f"{task} completed -> review.verifying (head {(head_sha or '?')[:12]})"


def delivery_failed(task: str, reason: str) -> str:
    return f"{task} delivery check failed -> review.rework_pending: {reason}"


def poisoned(task: str) -> str:
    return f"{task} failed (model, poisoned) -> failed.irrecoverable"


def poisoned_authentication(task: str, message: str) -> str:
    """A worker that cannot log in: no retry can change that (radian/docs/worker.md)."""
    return (
        f"{task} failed (model, poisoned) -> failed.irrecoverable: the worker cannot "
        f"authenticate ({message}); log it in, then radian arc rework {task}"
    )


def retry_at(task: str, failure_class: str, when: str) -> str:
    return f"{task} failed ({failure_class}) -> retry at {when}"


def remote_unreachable(task: str, when: str) -> str:
    return f"{task} remote unreachable -> retry at {when} (no retry used)"


def model_unavailable(task: str, when: str) -> str:
    return f"{task} worker model unavailable -> retry at {when}"


def exhausted(task: str, failure_class: str, retry_count: int, limit: int) -> str:
    return (
        f"{task} failed ({failure_class}) -> failed.exhausted "
        f"(retry_count {retry_count} of max_attempts {limit})"
    )


def paused_budget(task: str, failure_class: str, scope: str, spent: float, limit: float) -> str:
    return (
        f"{task} failed ({failure_class}) -> todo.paused_budget "
        f"({scope} budget: {_money(spent)} of {_money(limit)} used)"
    )


def interrupted_ready(task: str) -> str:
    """An attempt arc stopped itself (Ctrl-C, SIGTERM): our row of the table, no retry."""
    return f"{task} interrupted -> todo.ready (no retry used)"


def interrupted_paused_budget(task: str, scope: str, spent: float, limit: float) -> str:
    return (
        f"{task} interrupted -> todo.paused_budget "
        f"({scope} budget: {_money(spent)} of {_money(limit)} used)"
    )


def plan_auto_off(plan: str) -> str:
    return f"plan {plan} auto -> off (plan budget used up)"


def cancelled(task: str, from_state: str) -> str:
    return f"{task} cancelled -> failed.cancelled (was {from_state})"


def ended_after_cancel(task: str, attempt_id: str) -> str:
    return f"{task} attempt {attempt_id} ended after cancel"


def ended_unwatched(task: str, attempt_id: str) -> str:
    return f"{task} attempt {attempt_id} ended while no run watched it -> its end applied now"


def infrastructure_reason(task: str, attempt_id: str, reason: str) -> str:
    """Printed after the line of an infrastructure retry (or remote wait): why."""
    return f"{task} attempt {attempt_id} (infrastructure): {reason}"


def unknown_outcome_reason(outcome: str) -> str:
    return f"the worker reported the outcome {outcome!r}, which this build does not know"


def gone_reason() -> str:
    """A terminated attempt whose worker nobody saw end (its run died, and the worker too)."""
    return "its run ended and its worker is gone, with no Result"


def wrapper_broke_reason(error: str) -> str:
    return f"the attempt's wrapper could not be run: {error}"


def claimed_elsewhere(task: str, host: str, where: str, ref: str, since: str) -> str:
    """Another host on the same remote took the task first (radian/docs/hosts.md)."""
    return f"{task} claimed by host {host} on {where} ({ref}, since {since}) -> not run here"


def claim_refused(task: str, where: str, ref: str, detail: str) -> str:
    return (
        f"{task} claim {ref} refused by {where} -> not run here: {detail}; with "
        "[hosts] claim_refs = false arc runs without claims (one host per remote only)"
    )


def start_claimed_elsewhere(task: str, host: str, where: str, ref: str) -> str:
    return f"{task} is claimed by host {host} on {where} ({ref}): only that host runs it"


def adopted(task: str, attempt_id: str) -> str:
    """A run found an attempt whose run died and whose worker still runs: it watches it."""
    return (
        f"{task} attempt {attempt_id} still running after its run ended -> adopted "
        "(its Result is read when it ends)"
    )


def left_no_result(task: str, attempt_id: str) -> str:
    return f"{task} attempt {attempt_id} has no live worker and no Result -> terminated"


def reworked(task: str, number: int) -> str:
    return f"{task} rework {number} -> todo.ready"


def budget_reset(task: str) -> str:
    return f"{task} budget reset -> todo.ready"


def stopping_workers(count: int) -> str:
    return f"stopping {count} worker(s): waiting for them to end (Ctrl-C again to kill them now)"


# The live view's columns (radian.arc.progress), left to right.
PROGRESS_COLUMNS = ("task", "attempt", "elapsed", "cost so far", "last activity")


def cost_so_far(value: float) -> str:
    return _money(value)


def progress_title(next_wake: str | None) -> str:
    wake = f"; next wake-up {next_wake}" if next_wake else ""
    return f"radian arc run: workers{wake}"


def interrupted() -> str:
    return "interrupted: workers stopped, every task file written"


def waiting_until(when: str) -> str:
    return f"waiting until {when} for the next retry"


def worktree_removed(task: str) -> str:
    return f"{task} worktree removed"


def branch_removed(task: str, branch: str) -> str:
    return f"{task} branch {branch} removed"


def remote_branch_removed(task: str, branch: str, remote: str) -> str:
    return f"{task} branch {branch} removed from {remote}"


def gate_worktrees_removed(task: str) -> str:
    return f"{task} gate worktrees removed"


def nothing_to_clean() -> str:
    return "nothing to clean up"


def plan_auto(plan: str, auto: str) -> str:
    return f"plan {plan} auto -> {auto}"


# -- radian arc serve: the fleet's web page and its JSON API --------------------------------
SERVE_TOKEN_ENV = "RADIAN_ARC_SERVE_TOKEN"
SERVE_NO_RUNNING = "no attempt is running"
SERVE_NO_FAILURES = "no failures"
SERVE_NOBODY_WAITS = "nothing waits on a person"
SERVE_UNAUTHORIZED = (
    "a token is needed: send Authorization: Bearer <token>, or open /?token=<token> once"
)
SERVE_WRONG_HOST = (
    "this server answers only to 127.0.0.1 and localhost (it was started without a token)"
)


def serve_more_waiting(count: int) -> str:
    return f"and {count} more (all of them: GET /api/v1/state)"


def serve_needs_token(host: str) -> str:
    return (
        f"radian arc serve --host {host} needs a token: give --token or set "
        f"{SERVE_TOKEN_ENV} (only 127.0.0.1 is served without one)"
    )


def serve_needs_extra(missing: str) -> str:
    return f"radian arc serve needs the serve extra: pip install 'radian[serve]' ({missing})"


def _where(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def serve_port_in_use(host: str, port: int) -> str:
    return (
        f"radian arc serve cannot listen on {_where(host, port)}: another program listens "
        "there already; stop it, or choose another --port (0: any free port)"
    )


def serve_cannot_listen(host: str, port: int, reason: str) -> str:
    return f"radian arc serve cannot listen on {_where(host, port)}: {reason}"


def served_at(url: str, repo: str, *, token: bool) -> str:
    """The line `radian arc serve` prints once it listens."""
    needs = "; a token is needed (Authorization: Bearer, or /?token= once)" if token else ""
    return f"radian arc serves {url} (repository {repo}){needs}"


def elapsed(seconds: float | None) -> str:
    """A time span on the fleet's page: 42 s, 7 min, 2 h 05 min."""
    if seconds is None:
        return "-"
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes = whole // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


# -- the store (radian.arc.store_open) ---------------------------------------------------------
def unknown_store_url(source: str, url: str) -> str:
    return f"{source}: {url!r} is no store arc knows: a postgresql://… URL, or none for the files"


def store_needs_psycopg(error: str) -> str:
    return f"the PostgreSQL store needs psycopg: pip install 'radian[postgres]' ({error})"


def store_unreachable(error: str) -> str:
    return f"the PostgreSQL store cannot be reached: {error}"


def migrate_needs_postgres() -> str:
    return (
        "radian arc store migrate moves the files into PostgreSQL: set [store] url in "
        ".radian/arc.toml (or RADIAN_ARC_STORE) to a postgresql://… URL first"
    )


def migrate_plans_there(plans: list[str]) -> str:
    return f"the PostgreSQL store holds these plans already: {', '.join(plans)}; nothing moved"


def store_migrated(plans: int, tasks: int, attempts: int) -> str:
    return (
        f"moved {plans} plan(s), {tasks} task(s) and {attempts} attempt(s) into PostgreSQL; "
        "the files under .radian/arc/ are left as they were"
    )


def lease_lost(task: str, attempt_id: str, host: str) -> str:
    return f"{task} attempt {attempt_id}: its lease is held by host {host} -> not written here"


def lease_taken_over(task: str, attempt_id: str, host: str) -> str:
    return (
        f"{task} attempt {attempt_id} of host {host}: its lease expired and its worker's time is "
        "up -> terminated"
    )
