"""The interface's one object: the agent, its run threads, progress, hook, log and login.

Pages and the JSON API are thin over this, and this is thin over the library: a turn is
`Agent.chat`, an answer `Agent.answer(question=...)`, an operator undo
`Agent.operator_undo`, an operator's ending `Agent.operator_end`, each handed to a run
thread (see `runner.py` for why); reads are `views.snapshot`, one lock-free load of the
record.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import Any

from .. import limits, logs
from ..agent import Agent
from ..backoff import UNDO_BACKOFF, Backoff
from ..clock import Clock, SystemClock
from ..config import AgentConfig
from ..errors import (
    AnswerError,
    NotYourSession,
    OperatorTokenError,
    SessionNotFound,
    StaleAnswer,
    StalwartError,
)
from ..models import Model
from ..record import (
    OperatorLog,
    SessionBusy,
    Store,
    open_operator_log,
    open_store,
    serves_many_workers,
)
from ..record.schema import CallStatus
from ..record.sessions import split_session_id
from ..replies import Reply
from ..states import INTERRUPTED
from ..texts import serve as texts
from . import operator
from .auth import Authenticator, CookieLogin, ProxyHeader, Signer, load_secret
from .hooks import Callback, QuestionHook
from .progress import Board, ObservedStore, ProgressClock
from .runner import DEFAULT_RUN_THREADS, Runner
from .users import Users
from .views import Snapshot, snapshot

log = logging.getLogger(logs.SERVE)

# How long the background resumer waits for a session's lock on PostgreSQL before it
# leaves the session to whoever holds it (a live worker advancing it).
RESUME_LOCK_WAIT_SECS = 1.0


class Service:
    def __init__(
        self,
        config: AgentConfig,
        *,
        authenticator: Authenticator | None = None,
        secret: bytes | None = None,
        on_question: Callback | None = None,
        clock: Clock | None = None,
        undo_backoff: Backoff | None = None,
        model: Model | None = None,
        run_threads: int = DEFAULT_RUN_THREADS,
        poll_secs: float = 1.0,
        resume_every_secs: float | None = None,
        store: Store | None = None,
    ) -> None:
        self.config = config
        serve = config.project.serve
        self.board = Board()
        self.poll_secs = poll_secs
        backoff = undo_backoff or UNDO_BACKOFF
        self.clock = ProgressClock(clock or SystemClock(), self.board)
        observed = ObservedStore(
            store or open_store(config.record), self.board, backoff.tries, config.tools
        )
        self.agent = Agent(
            config, store=observed, clock=self.clock, undo_backoff=backoff, model=model
        )
        self.runner = Runner(self.board, run_threads)
        self.hook = QuestionHook(serve.question_hook, on_question)
        self.operator_log: OperatorLog = open_operator_log(config.record, now=self.clock.now)
        self.signer = Signer(
            secret or load_secret(serve.secret_env, config.source.parent, config.source.stem)
        )
        if authenticator is not None:
            self.auth: Authenticator = authenticator
        elif serve.auth_header:
            self.auth = ProxyHeader(serve.auth_header)
        else:
            users = serve.users or config.source.parent / f"{config.source.stem}.users"
            self.auth = CookieLogin(Users(users), self.signer)
        self._resumer = self._resumer_agent(backoff)
        self._stop = threading.Event()
        every = resume_every_secs if resume_every_secs is not None else serve.resume_every_secs
        self._resume_every = every
        self._thread: threading.Thread | None = None
        self._resumed_once = False

    # --- reads ---

    def snapshot(self, session: str, user: str | None) -> Snapshot:
        return snapshot(self.agent, session, user)

    def operator_snapshot(self, session: str) -> Snapshot:
        """Any user's session, for the operator; the opening is logged either way."""
        try:
            found = self.snapshot(session, None)
        except SessionNotFound as error:
            self.operator_log.add("open record", session, error.code)
            raise
        self.operator_log.add("open record", session, "ok")
        return found

    def progress(self, session: str) -> str | None:
        return self.board.line(session)

    def busy(self, session: str) -> bool:
        return self.runner.busy(session)

    def new_session_id(self, user: str) -> str:
        """A new session of `user`'s: its id is made from the user (see `Agent.session_id`)."""
        return self.agent.session_id(user, f"s-{secrets.token_hex(8)}")

    @staticmethod
    def new_nonce() -> str:
        return secrets.token_hex(8)

    def _name_in(self, user: str, session: str) -> str | None:
        """The name `Agent.chat` takes for `user`'s session of this id; the id of a session
        that is not the user's is refused as one that does not exist."""
        owner, name = split_session_id(session)
        if owner != user:
            raise NotYourSession(texts.session_not_found(session))
        return name

    def name_session(self, user: str, session: str, title: str) -> str:
        """Give the user's session a name (`Agent.name_session`); the name as kept."""
        name = self._name_in(user, session)
        found = self.agent.name_session(user, title, session=name)
        self.board.changed()  # the pages that show it draw it again
        return found

    # --- what moves a run: each handed to a run thread ---

    def turn(self, user: str, session: str, text: str) -> Future[Reply]:
        self.snapshot(session, user)  # NotYourSession for another user's
        name = self._name_in(user, session)
        if not isinstance(text, str) or not text.strip():
            raise AnswerError(texts.EMPTY_TURN)
        return self._advance(session, lambda: self.agent.chat(text, user=user, session=name))

    def answer(
        self, user: str, session: str, question_id: str, answer: str, reason: str | None = None
    ) -> Future[Reply]:
        now = self.snapshot(session, user)
        name = self._name_in(user, session)
        if now.question is None or now.question_id != question_id:
            raise StaleAnswer(texts.stale_answer(now.question.text if now.question else None))
        question = now.question
        given = answer.strip().lower()
        if given not in question.answers:
            raise AnswerError(texts.unknown_answer(answer, question.answers))
        reason = limits.check_answer_reason(reason)  # refused now, before a run thread

        def work() -> Reply:
            try:
                return self.agent.answer(
                    user, given, session=name, question=question, reason=reason
                )
            except AnswerError as error:
                after = self.snapshot(session, user)
                if after.question_id != question_id:
                    waiting = after.question.text if after.question else None
                    raise StaleAnswer(texts.stale_answer(waiting)) from error
                raise

        return self._advance(session, work)

    def operator_undo(self, session: str, token: str) -> Future[Reply]:
        return self._as_operator(
            "undo", session, token, lambda: self.agent.operator_undo(session, token=token)
        )

    def operator_end(self, session: str, token: str, reason: str) -> Future[Reply]:
        """End a run that cannot go on; the web's operator gives no name (`by` None)."""
        return self._as_operator(
            "end",
            session,
            token,
            lambda: self.agent.operator_end(session, token=token, reason=reason),
        )

    def _as_operator(
        self, action: str, session: str, token: str, act: Callable[[], Reply]
    ) -> Future[Reply]:
        """An operator's action on a session: the token checked now, the action handed to
        a run thread (where the library checks the token again), each outcome logged."""
        try:
            operator.check(self.agent, token)
        except OperatorTokenError as error:
            self.operator_log.add(action, session, error.code, str(error))
            raise

        def work() -> Reply:
            try:
                reply = act()
            except StalwartError as error:
                self.operator_log.add(action, session, error.code, str(error))
                raise
            self.operator_log.add(action, session, "ok", reply.text)
            return reply

        return self._advance(session, work)

    def check_operator(self, token: str) -> None:
        try:
            operator.check(self.agent, token)
        except OperatorTokenError as error:
            self.operator_log.add("sign in", None, error.code, str(error))
            raise
        self.operator_log.add("sign in", None, "ok", texts.OPERATOR_SIGNED_IN)

    def _advance(self, session: str, work: Callable[[], Reply]) -> Future[Reply]:
        def job() -> Reply:
            try:
                return work()
            except NotYourSession as error:
                raise SessionNotFound(texts.session_not_found(session)) from error
            finally:
                self._tell(session)

        return self.runner.submit(session, job)

    def _tell(self, session: str) -> None:
        try:
            found = self.snapshot(session, None)
        except SessionNotFound:
            return
        if found.question is not None:
            self.hook.tell(found)

    # --- runs a dead worker left mid-way ---

    def _resumer_agent(self, backoff: Backoff) -> Agent:
        """The agent the resumer uses: on PostgreSQL with a short lock wait of its own."""
        location = self.config.record
        if not serves_many_workers(location):
            return self.agent
        store = ObservedStore(
            open_store(location, lock_wait_secs=RESUME_LOCK_WAIT_SECS),
            self.board,
            backoff.tries,
            self.config.tools,
        )
        return Agent(
            self.config, store=store, clock=self.clock, undo_backoff=backoff, model=self.agent.model
        )

    def resume_left(self) -> list[Future[Reply | None]]:
        """Hand every run left mid-way that this process is not advancing to a run thread.

        Once they are all taken up, the sessions whose run was resumed are logged
        (`texts.serve.resumed_at_start`): at start even when there were none, later (the
        PostgreSQL resumer's rounds) only when there were some."""
        started: list[tuple[str, Future[Reply | None]]] = []
        for session in self.agent.store.sessions_with_runs_in([s.value for s in INTERRUPTED]):
            if self.runner.busy(session):
                continue
            started.append((session, self.runner.submit(session, self._resume_one(session))))
        self._say_resumed(started, at_start=not self._resumed_once)
        self._resumed_once = True
        return [future for _, future in started]

    @staticmethod
    def _say_resumed(started: list[tuple[str, Future[Reply | None]]], *, at_start: bool) -> None:
        if not started:
            if at_start:
                log.info("%s", texts.resumed_at_start([]))
            return
        guard = threading.Lock()
        left = [len(started)]
        resumed: list[str] = []

        def done(session: str, future: Future[Reply | None]) -> None:
            taken = (
                not future.cancelled()
                and future.exception() is None
                and future.result() is not None
            )
            with guard:
                if taken:
                    resumed.append(session)
                left[0] -= 1
                last = left[0] == 0
            if last and (resumed or at_start):
                log.info("%s", texts.resumed_at_start(sorted(resumed)))

        for session, future in started:
            future.add_done_callback(partial(done, session))

    def _resume_one(self, session: str) -> Callable[[], Reply | None]:
        def work() -> Reply | None:
            record = self._resumer.store.load(session)
            if record is None or record.session.agent != self.agent.name:
                return None
            try:
                owner, name = split_session_id(session)
                if owner != record.session.user:
                    return None  # not an id this agent made
                reply = self._resumer.resume(owner, session=name)
            except SessionBusy:
                return None  # a live worker holds it and advances it
            except Exception:
                log.exception("resuming session %s failed", session)
                return None
            finally:
                self._tell(session)
            return reply

        return work

    def start(self) -> None:
        """Resume what was left mid-way now, and (on PostgreSQL) keep looking for more."""
        self.resume_left()
        if self._resumer is self.agent:
            return  # SQLite: one machine's record; runs left are taken up at start and on touch
        self._thread = threading.Thread(target=self._keep_resuming, daemon=True)
        self._thread.start()

    def _keep_resuming(self) -> None:
        while not self._stop.wait(self._resume_every):
            try:
                for future in self.resume_left():
                    future.result()
            except Exception:
                log.exception("the resumer failed; it tries again")

    def close(self) -> None:
        """Stop: the resumer first, then wait for every run this process advances to reach a
        state the record can be taken up from (a send is never cut), saying what it waits for."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        busy = self.runner.busy_sessions()
        if busy:
            log.info("%s", texts.stopping([(session, self._sending(session)) for session in busy]))
        self.runner.shutdown()
        if busy:
            log.info("%s", texts.STOPPED)
        if self._resumer is not self.agent:
            self._resumer.close()
        self.agent.close()
        self.operator_log.close()

    def _sending(self, session: str) -> list[str]:
        """What the session's run is sending now, as the record says (its calls in flight)."""
        try:
            found = self.snapshot(session, None)
        except StalwartError:
            return []
        in_flight = CallStatus.IN_FLIGHT.value
        return [texts.sending(c.tool, c.kind) for c in found.calls if c.status == in_flight]

    def summary(self) -> dict[str, Any]:
        return {"agent": self.agent.name, "record": self.config.record}
