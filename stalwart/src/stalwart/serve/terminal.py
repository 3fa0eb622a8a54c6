"""`stalwart chat`: the person's page in a terminal, usable over ssh.

Type a turn; each question is answered with one key (the keys are data, below); a slow
tool's progress is printed as the run records it. The run advances in this process,
on the agent's record, exactly as through the web pages (any worker can take the next
step, so a session started here can be answered on the page and back).
"""

from __future__ import annotations

import datetime
import os
import sys
import termios
import tty
from collections.abc import Callable, Mapping

from ..agent import Agent
from ..errors import StaleAnswer, StalwartError
from ..replies import Reply, Waiting
from ..texts import (
    ABANDON,
    APPROVE,
    CANCEL_ALL,
    DID_NOT_HAPPEN,
    DONE_BY_HAND,
    HAPPENED,
    RETRY,
    SKIP,
    chat_probe,
    framework_goes_on,
    framework_still_running,
)
from ..texts import serve as texts

# The key for each answer, by the kind of question.
KEYS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "confirm": (("a", APPROVE), ("s", SKIP), ("c", CANCEL_ALL)),
    "outcome": (("h", HAPPENED), ("n", DID_NOT_HAPPEN)),
    "undo": (("r", RETRY), ("d", DONE_BY_HAND), ("x", ABANDON)),
}


# The answers a person may give a reason for (asked for on a line of its own).
REASONED = frozenset({SKIP, CANCEL_ALL})

# After an answer lets a guarded run (`stalwart.guarded`) go on, its framework's application
# goes on with it, not chat: chat looks at the record every FRAMEWORK_LOOK_SECS (the agent's
# clock) for the run's next question or its reply, for FRAMEWORK_WAIT_SECS at most.
FRAMEWORK_LOOK_SECS = 0.25
FRAMEWORK_WAIT_SECS = 60.0


def read_key() -> str:
    """One key from the terminal, without Enter and without echo.

    The terminal's mode is changed at once and nothing typed is thrown away (click's
    getchar flushes what was typed ahead, losing a key pressed as the question appeared).
    """
    fd = sys.stdin.fileno()
    if not os.isatty(fd):
        return sys.stdin.read(1) or "\x04"
    before = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd, termios.TCSANOW)
        return os.read(fd, 4).decode("utf-8", "replace")[:1] or "\x04"
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, before)


def keys_for(waiting: Waiting) -> tuple[tuple[str, str], ...]:
    return KEYS.get(waiting.kind, tuple((a[0], a) for a in waiting.answers))


def chat(
    agent: Agent,
    user: str,
    session: str | None,
    *,
    read_line: Callable[[str], str],
    read_key: Callable[[], str],
    write: Callable[[str], None],
) -> None:
    """The loop: read a turn, show the reply, answer each question with a key."""
    write(texts.CHAT_WELCOME)
    try:
        try:
            reply = agent.pending(user, session=session)
            if reply is not None and reply.waiting:
                _answer_all(agent, user, session, reply, read_key, write, read_line)
        except StalwartError as error:
            write(f"{error.code}: {error}")
        while True:
            turn = read_line(texts.CHAT_PROMPT)
            if not turn.strip():
                return
            try:
                reply = agent.chat(turn, user=user, session=session)
                _answer_all(agent, user, session, reply, read_key, write, read_line)
            except StalwartError as error:
                write(f"{error.code}: {error}")
    except EOFError:
        return


def _answer_all(
    agent: Agent,
    user: str,
    session: str | None,
    reply: Reply,
    read_key: Callable[[], str],
    write: Callable[[str], None],
    read_line: Callable[[str], str] | None = None,
) -> Reply:
    while reply.waiting:
        waiting = reply.waiting[0]
        _show(reply, write)
        if waiting.kind == "outcome":
            _evidence(agent, user, session, waiting, write)
            if waiting.evidence is not None:
                write(chat_probe(waiting.evidence.text))
        keys = keys_for(waiting)
        write(texts.chat_keys(keys))
        chosen = dict(keys)
        key = read_key().lower()
        while key not in chosen:
            if key in ("\x03", "\x04"):  # Ctrl-C, Ctrl-D: leave the question waiting
                raise EOFError
            write(texts.chat_key_unknown(key, keys))
            key = read_key().lower()
        write(f"> {chosen[key]}")
        reason = None
        if chosen[key] in REASONED and read_line is not None:
            reason = read_line(texts.CHAT_REASON_PROMPT).strip() or None
        try:
            reply = agent.answer(
                user, chosen[key], session=session, question=waiting, reason=reason
            )
            if reply.state == "running" and reply.framework is not None:
                reply = _framework_goes_on(agent, user, session, reply, write)
                if reply.state == "running":
                    return reply  # said so; its application has not gone on yet
        except StaleAnswer as error:
            # Answered elsewhere meanwhile (another terminal, the page): nothing changed.
            # The question waiting now is shown and asked afresh, never answered by this key.
            write(f"{error.code}: {error}")
            now = agent.pending(user, session=session)
            if now is None:
                raise
            reply = now
    _show(reply, write)
    return reply


def _framework_goes_on(
    agent: Agent, user: str, session: str | None, reply: Reply, write: Callable[[str], None]
) -> Reply:
    """A guarded run an answer let go on: its framework's application goes on with it (its
    driver's `serve_answers`). Where the run stands once it moved on: its next question, or
    its reply; `reply` as it was when it did not move on within FRAMEWORK_WAIT_SECS."""
    framework = reply.framework or ""
    write(framework_goes_on(framework))
    sid = agent.session_id(user, session)
    waited = 0.0
    while waited < FRAMEWORK_WAIT_SECS:
        agent.clock.sleep(FRAMEWORK_LOOK_SECS)
        waited += FRAMEWORK_LOOK_SECS
        record = agent.store.load(sid)  # read, no lock: the application's worker holds it
        latest = record.runs[-1] if record is not None and record.runs else None
        if latest is None or latest.run_id != reply.run or latest.state != "running":
            now = agent.pending(user, session=session)
            return now if now is not None else reply
    write(framework_still_running(framework, FRAMEWORK_WAIT_SECS))
    return reply


def _evidence(
    agent: Agent, user: str, session: str | None, waiting: Waiting, write: Callable[[str], None]
) -> None:
    """Under an outcome question: the key the write was sent under, when, and its tries."""
    for call in agent.record(user, session=session):
        if call.call_id == waiting.call:
            at = datetime.datetime.fromtimestamp(call.recorded, tz=datetime.UTC)
            sent = texts.shown_time(at.strftime("%Y-%m-%d %H:%M:%S"))
            write(texts.chat_evidence(call.key, sent, call.tries))


def _show(reply: Reply, write: Callable[[str], None]) -> None:
    """The reply, and under it what the tool it stopped at said, if anything."""
    write(reply.text)
    if reply.detail:
        write(reply.detail)
