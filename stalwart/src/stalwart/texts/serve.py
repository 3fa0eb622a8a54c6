"""Every sentence the interface itself shows (pages, API errors, progress, the terminal).

The run's own sentences (questions, replies, the irreversible warnings) come from
the other modules of `stalwart.texts` untouched; these are the interface's, in the same voice.
"""

from __future__ import annotations

from collections.abc import Sequence

from .questions import visible
from .replies import _outcome

# --- signing in ---

NOT_SIGNED_IN = "Sign in first."
WRONG_PASSWORD = "That user name and password do not match; nobody was signed in."
CSRF_REFUSED = (
    "This form's anti-forgery token is missing or wrong (reload the page and try again); "
    "nothing was changed."
)
OPERATOR_ONLY = "Only an operator signed in with the operator token can see this."
OPERATOR_SIGNED_IN = "Signed in as the operator."


def no_login_form(header: str) -> str:
    return f"This server trusts the reverse proxy's {header} header; sign in there."


# --- sessions and answers ---


def session_not_found(session: str) -> str:
    """The same text for a session that does not exist and one another user owns."""
    return f"There is no session {session!r} of yours."


def stale_answer(waiting: str | None) -> str:
    """A button of a page the run has moved on from: refused, never applied to the next."""
    now = f" Waiting now: {waiting}" if waiting else " Nothing waits for an answer now."
    return (
        "That button answers a question that no longer waits (the run moved on, or another "
        f"tab answered it first); nothing was done.{now}"
    )


def unknown_answer(answer: str, answers: Sequence[str]) -> str:
    return f"{answer!r} is not an answer to this question; the answers are: {', '.join(answers)}."


EMPTY_TURN = "A turn must be a non-empty text."
NOTHING_RECORDED = "Nothing recorded yet: send a turn."
INBOX_EMPTY = "Nothing waits for an answer."
WORKING = "Working…"

# --- times and people ---


def shown_time(utc: str) -> str:
    """A time as a page shows it before its script writes it in the viewer's zone:
    2026-12-03 08:19:40 UTC (`utc`: the ISO text's date and time)."""
    return f"{utc} UTC"


def answered_by(answer: str, by: str | None) -> str:
    """Who gave an answer, as the record tab says it: approve by alice."""
    return f"{answer} by {by}" if by else answer


def answer_reason(reason: str) -> str:
    return f"reason: {reason}"


# The field beside a confirmation's buttons, and what `stalwart chat` asks after skip or
# cancel all: the person's own why, recorded (a skip's is what a model reads of it).
REASON_LABEL = "Reason for skip or cancel all (optional)"
CHAT_REASON_PROMPT = "why (optional; Enter for none)> "


# --- replies a person reads ---

NEW_SESSION_TITLE = "New session"
TITLE_CHARS = 60  # a session called by its first turn: that many characters of it
RAW_REPLY = "Raw reply"
# Above how a refused turn is read, clause by clause (`stalwart explain`), under its reply.
HOW_READ = "How this turn is read"
RENAME = "Name this session"
TITLE_LABEL = "Session name"
RENAME_BUTTON = "Save the name"
SESSION_ID_LABEL = "Session id:"


def session_title(first_turn: str | None) -> str:
    """A session's title when its person gave it none: its first turn, cut."""
    if not first_turn:
        return NEW_SESSION_TITLE
    line = visible(" ".join(first_turn.split()))
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


def done_readable(outcomes: Sequence[tuple[str, object, str, bool]]) -> str:
    """A run that ended well, as the page says it: (label, result, status, tabled) each;
    a result shown as a table below is "<label> returned", the rest as the reply says it."""
    parts = [
        f"{label} returned" if tabled else _outcome(label, result, status)
        for label, result, status, tabled in outcomes
    ]
    if not parts:
        return "Done: there was nothing to run."
    return "Done: " + "; ".join(parts) + "."


# --- the outcome question: what the person can check ---

EVIDENCE_TITLE = "To check with the service before you answer:"
EVIDENCE_KEY = "idempotency key"
EVIDENCE_SENT = "sent"
EVIDENCE_TRIES = "tries"
EVIDENCE_LINK = "this call in the record"


def chat_evidence(key: str | None, sent: str, tries: int) -> str:
    """Under an outcome question in `stalwart chat`: the key it was sent under, and when."""
    return f"  key {key or '(none)'}; sent {sent}; {tries} {'try' if tries == 1 else 'tries'}"


# --- the inbox ---

# What each kind of question is called in the inbox, and each filter of it.
INBOX_KINDS = {"confirm": "confirm", "outcome": "outcome", "undo": "stuck undo"}
INBOX_STATES = {"waiting": "waiting", "answered": "answered", "all": "all"}
INBOX_ALL_KINDS = "every kind"
INBOX_OPEN = "Open the session to answer it"
INBOX_NOTHING_ANSWERED = "Nothing answered yet."


def inbox_filter(what: str, given: str, known: Sequence[str]) -> str:
    return f"{given!r} is no {what} of the inbox; the {what}s are: {', '.join(known)}."


# --- progress, live while a run advances ---

CALL_TRIES = 3  # a read or a retry-safe write: the first try and two more (chapter 34)


def progress_call(tool: str, shown_call: str, try_number: int) -> str:
    if try_number <= 1:
        return f"running {shown_call}"
    return f"running {tool}: try {try_number} of {CALL_TRIES}"


def progress_undo(write: str, undo: str, try_number: int, tries: int) -> str:
    """An undo being sent: the write it undoes named first, as the stuck question names it
    ("Undoing <write> failed after ..."), and the undo as a stopped run's reply gives it."""
    return f"undoing {write} (by {undo}): try {try_number} of {tries}"


def progress_undo_wait(write: str, undo: str, next_try: int, tries: int, seconds: float) -> str:
    """An undo's backoff wait: undoing attach_disk (by detach_disk): try 2 of 4, next in 4 s."""
    return (
        f"undoing {write} (by {undo}): try {next_try} of {tries}, next in {round(seconds, 1):g} s"
    )


def progress_model(model: str) -> str:
    return f"asking the model {model}"


# --- the operator ---

OPERATOR_TOKEN_NEEDED = "Give the operator token again to undo: it is checked on every undo."
OPERATOR_END_TOKEN_NEEDED = (
    "Give the operator token again to end the run: it is checked on every action."
)
OPERATOR_END_REASON = "Why it is ended (recorded, and said in the person's reply):"


OPERATOR_SIGN_OUT = "Sign out as operator"
OPERATOR_UNDO_PLAN = "An undo would send, in this order (latest write first):"
OPERATOR_NO_ACTION = "Nothing to do here now: the run has ended and nothing is left to undo."


def operator_undo_step(write: str, undo: str) -> str:
    """One line of an undo's preview: undo charge_card(order=4411, amount=40.0) by refund_card."""
    return f"undo {write} by {undo}"


def operator_not_undoable(state: str | None) -> str:
    """Why the page offers no undo of a run that has not ended (answer it, or end it)."""
    return f"No undo now: the run is {state or 'not started'}; an undo is for a run that has ended."


def operator_undone(session: str, reply: str) -> str:
    return f"Operator undo of session {session!r}: {reply}"


# --- the terminal (stalwart chat) ---

CHAT_WELCOME = "Type a turn and press Enter; an empty line or Ctrl-D ends the chat."
CHAT_PROMPT = "you> "


def chat_keys(keys: Sequence[tuple[str, str]]) -> str:
    """The single keys a question takes: [a] approve  [s] skip  [c] cancel all."""
    return "  ".join(f"[{key}] {answer}" for key, answer in keys)


def chat_key_unknown(key: str, keys: Sequence[tuple[str, str]]) -> str:
    return f"{key!r} is none of the keys: {chat_keys(keys)}"


# --- stalwart serve: what the server says of itself ---


def served_at(url: str, agent: str, *, workers: int = 1) -> str:
    """The first line `stalwart serve` prints: the address, then what it serves there."""
    more = f", {workers} workers" if workers > 1 else ""
    return f"stalwart serves {url} (agent {agent!r}{more})"


def _where(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def port_in_use(host: str, port: int) -> str:
    return (
        f"stalwart serve cannot listen on {_where(host, port)}: another program listens there "
        "already; stop it, or choose another --port (0: any free port)."
    )


def cannot_listen(host: str, port: int, reason: str) -> str:
    """Any other address the system refuses (a host not this machine's, a privileged port)."""
    return f"stalwart serve cannot listen on {_where(host, port)}: {reason}."


def _runs(count: int) -> str:
    return f"{count} run" if count == 1 else f"{count} runs"


def resumed_at_start(sessions: Sequence[str]) -> str:
    """Said once the runs a stopped server left mid-way are taken up (or that there were none);
    on PostgreSQL also for each later round that took some up."""
    if not sessions:
        return "No run was left mid-way: nothing to resume."
    return f"Resumed {_runs(len(sessions))} left mid-way: {', '.join(sessions)}."


def stopping(waits: Sequence[tuple[str, Sequence[str]]]) -> str:
    """Stopped (SIGTERM, Ctrl-C) while runs are advancing: the server waits for each to reach
    a state the record can be taken up from, never cutting a send. Each wait is a session and
    the tools it is sending now ("undoing X" for an undo), from the record."""
    shown = [f"{session} ({', '.join(tools)})" if tools else session for session, tools in waits]
    return f"Stopping: waiting for {_runs(len(waits))} to finish first: {', '.join(shown)}."


def sending(tool: str, kind: str) -> str:
    """What a run is sending now, as `stopping` names it."""
    return f"undoing {tool}" if kind == "undo" else f"sending {tool}"


STOPPED = "Stopped."
