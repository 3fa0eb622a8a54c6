"""The Agent: an agent's configuration and a handle on its record, nothing more.

`chat`, `confirm` and `answer` lock the session in the record, load it, advance its
run until it waits for a person or ends, commit, and return a `Reply`. Nothing of a
run is kept in this object between calls, so any process holding the same agent.yaml
can take the next step of a session another process started.

A run whose process stopped mid-way (found `running` or `rolling_back` under the lock)
is resumed by the next `chat`, `confirm`, `answer`, `pending` or `resume` on its
session, in whichever process makes it (see `resume.resume`).

Sessions: a user's sessions are theirs by construction. Each user has a default session,
and `session=` names one of the user's own: the record's id is made from the user and the
name (`session_id`), so no name reaches another user's session, and the one error for a
session that is not the user's is `NotYourSession`. Turns and names are bounded
(`stalwart.limits`): past a limit, `InputRefused`, and nothing changes.

A turn the selector cannot read goes to the agent's model when agent.yaml says
`on_unread: model`; the model is loaded with the agent (a missing extra, key or
provider is a `ModelConfigError` here, not at the first turn), and its tool calls
become the run's steps (see `model_loop.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from . import limits, selector, texts
from ._engine import answers, ending, resume, rollback, runs
from ._engine.calls import recorded_undo
from ._engine.context import DEFAULT_MAX_MODEL_CALLS, RunContext
from ._engine.failures import Failed, failure_of
from .backoff import UNDO_BACKOFF, Backoff
from .clock import Clock, SystemClock
from .config import AgentConfig, confirms, load_agent
from .errors import (
    AnswerError,
    ModelConfigError,
    NotYourSession,
    QuestionPending,
    RewindRefused,
    RunStateError,
    SessionBusy,
    StaleAnswer,
    StalwartError,
    ToolUnavailable,
    UndoUnavailable,
)
from .labels import shown_call
from .models import DEFAULT_PRICES, BackoffPolicy, Model, ModelProgress, load_model
from .policy import operator_token
from .policy.check import Check
from .record import Store, open_store
from .record.ledger import Ledger
from .record.memory import Message, read_next, rewind
from .record.schema import MODEL_KIND, CallRow, RunRow, replace_row
from .record.sessions import session_id
from .record.usage import SessionUsage, session_usage
from .replies import Ended, Reply, Waiting
from .selector import Grammar, Reading
from .states import ASKING, ENDED, INTERRUPTED, State
from .steps import PlannedStep
from .tools import ToolSpec
from .verify.lints import Lint, lint_agent

Reader = Callable[[str, Sequence[ToolSpec]], Reading]  # (turn, tools) -> its reading


@dataclass(frozen=True)
class RecordedCall:
    """One call as the record keeps it: never rewound."""

    call_id: str
    run: str
    step: int
    kind: str  # "read", "write", "undo" or "probe" (a write's probe, asked when in doubt)
    tool: str
    args: dict[str, Any]
    status: str  # a record.schema.CallStatus: "ran", "failed", "in_doubt", "happened", ...
    result: Any
    error: str | None
    key: str | None
    allowed: str | None  # what the check allowed, recorded before the send
    undoes: str | None  # on an undo: the call it undoes
    undone_by: str | None  # on a write: the undo that undid it
    undone_by_tool: str | None
    tries: int  # sends made, each recorded before it was sent
    # When: recorded (in flight, before its first send; a declined or refused call when it
    # was recorded), and when its outcome was recorded (None while in flight), as the
    # record's clock read them (seconds since the epoch, UTC).
    recorded: float = 0.0
    finished: float | None = None
    # The person's answers about this call: its confirmation (approve or skip), its
    # outcome (happened / did not happen), and on an undo, its stuck answers.
    answers: tuple[RecordedAnswer, ...] = ()


@dataclass(frozen=True)
class RecordedAnswer:
    """One answer a person gave to a question of a run, as the record keeps it: never
    rewound. `by` is who answered (the session's user), `at` when, `asked` when the
    question was asked (seconds since the epoch, UTC); `reason` is the person's own why
    (a skip's or a cancel all's), None when they gave none; `call` the recorded call the
    question was about once there was one (a confirmation's call is recorded after it)."""

    run: str
    step: int
    kind: str  # "confirm", "outcome" or "undo"
    tool: str
    question: str  # the question's id
    text: str  # the question as the person was shown it
    answer: str
    by: str | None
    at: float
    asked: float | None
    reason: str | None
    call: str | None


@dataclass(frozen=True)
class OperatorPlan:
    """What an operator may do to a session's latest run now, read from the record without
    its lock (`Agent.operator_plan`): whether an undo or an ending would be taken, and what
    the undo would send, in the order it would send it: (the write, as shown; its undo's
    tool), latest write first. A run that moves meanwhile is checked again by the action."""

    run: str | None
    state: str | None
    can_undo: bool
    can_end: bool
    undos: tuple[tuple[str, str], ...] = ()


class Agent:
    """An agent: its tools, its rulebook, its record, and (on_unread: model) its model.

    `model=` gives the agent a Model built elsewhere (a test's, on a local server or a
    script); otherwise, with `on_unread: model`, the agent.yaml's `model:` is loaded now,
    with its `prices:`, waiting out rate limits on the agent's clock. With `on_unread:
    refuse` the model is named but never loaded, so no key is needed.
    `max_model_calls` caps the asks of the model in one run; `model_backoff` is how the
    loaded model waits out rate limits and overloads (`BackoffPolicy()` by default), and
    `undo_backoff` how a failing undo is retried (three more tries, up to 1, 2, 4 s).
    `grammar` is the language the agent's turns are written in, for where a model's
    arguments came from (by default, the grammars of the agent's `languages:`, English
    alone unless agent.yaml says more; give it with a `reader=` of another language).
    `on_progress` is told each streamed answer's text so far (agent.yaml `stream: true`),
    as a `ModelProgress` naming its session, run and ask: what a web page shows while a
    long answer comes.
    """

    def __init__(
        self,
        config: AgentConfig,
        *,
        store: Store | None = None,
        clock: Clock | None = None,
        reader: Reader | None = None,
        undo_backoff: Backoff | None = None,
        model: Model | None = None,
        max_model_calls: int = DEFAULT_MAX_MODEL_CALLS,
        grammar: Grammar | None = None,
        on_progress: Callable[[ModelProgress], None] | None = None,
        model_backoff: BackoffPolicy | None = None,
    ) -> None:
        if isinstance(max_model_calls, bool) or not isinstance(max_model_calls, int):
            raise ValueError(f"max_model_calls must be a whole number; got {max_model_calls!r}")
        if max_model_calls < 1:
            raise ValueError(f"max_model_calls must be 1 or more; got {max_model_calls!r}")
        self.config = config
        self.clock: Clock = clock or SystemClock()
        self._owns_model = model is None
        self._model_backoff = model_backoff
        self.model: Model | None = model if model is not None else self._load_model()
        self.store: Store = store if store is not None else open_store(config.record)
        self._reader = reader
        self._context = RunContext(
            name=config.name,
            tools=config.tools,
            check=Check(config.tools, config.rulebook),
            confirms=confirms,
            undo_backoff=undo_backoff or UNDO_BACKOFF,
            grammars=(grammar,) if grammar is not None else selector.grammars(config.languages),
            model=self.model,
            max_model_calls=max_model_calls,
            instructions=config.instructions,
            on_progress=on_progress,
            other_agents_tools=frozenset(
                name
                for other in config.project.agents.values()
                if other.name != config.name
                for name in other.tools
            ),
        )

    def _load_model(self) -> Model | None:
        """The agent.yaml's model, loaded when a turn may need it; else None (no key needed)."""
        if self.config.on_unread != "model":
            return None
        if self.config.model is None:
            raise ModelConfigError(texts.model_missing(self.config.name))
        prices = DEFAULT_PRICES.updated(self.config.prices) if self.config.prices else None
        return load_model(
            self.config.model.raw,
            clock=self.clock,
            price_table=prices,
            options=self.config.model_options,
            backoff=self._model_backoff,
        )

    @classmethod
    def from_file(cls, path: str | Path, agent: str | None = None, **options: Any) -> Agent:
        """The agent an agent.yaml describes (name it when the file has several)."""
        return cls(load_agent(path, agent), **options)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        return self.config.tools

    @property
    def lints(self) -> list[Lint]:
        """What registration says about this agent's writes (see `stalwart.lints`)."""
        return list(lint_agent(self.config))

    def explain(self, turn: str) -> selector.Explanation:
        """How the selector reads `turn` over this agent's tools, clause by clause: each
        clause's tool and each argument with the words it came from, or why it is not read
        (`selector.explain_turn`). It runs nothing, asks nothing and records nothing.
        `InputRefused` past `stalwart.limits`, as `chat`."""
        limits.check_turn(turn)
        tools = list(self.config.tools.values())
        return selector.explain_turn(turn, tools, self.config.languages)

    # --- a person's turn and answers ---

    def chat(self, turn: str, *, user: str, session: str | None = None) -> Reply:
        """Read a turn into steps and run them until a person is asked or the run ends.

        A turn the selector cannot read goes to the model with `on_unread: model`: its
        tool calls are the run's steps, confirmed, keyed, recorded and undone like any.
        """
        reading = self._read(turn)
        unread = not reading.read
        to_model = unread and self.config.on_unread == "model"
        resumed: list[RunRow] = []
        with self._session(user, session, resumed=resumed) as ledger:
            latest = ledger.latest_run()
            if latest is not None and latest.state in INTERRUPTED:
                raise _left_for_another_worker(latest)
            if latest is not None and latest.state in ASKING:
                question = (latest.question or {}).get("text", "")
                raise QuestionPending(texts.question_pending(ledger.session.session, question))
            if to_model:
                run = runs.start_model(ledger, self._context, turn)
            elif unread:
                run = runs.start_unread(ledger, turn, reading.unread_clause, reading.reason)
            else:
                steps = [
                    PlannedStep(step.tool, dict(step.args), step.clause) for step in reading.steps
                ]
                run = runs.start(ledger, self._context, turn, steps)
            return _with_earlier(_reply(ledger, run), resumed)

    def answer(
        self,
        user: str,
        answer: str,
        *,
        question: Waiting | str | None = None,
        session: str | None = None,
        reason: str | None = None,
    ) -> Reply:
        """Answer the question that waits for the person in the session.

        Without `question`, the answer is for whatever question waits now: for a caller
        that shows each question as it is asked and takes its answer at once, one at a
        time, in one process (a script, a test, the chapter's example). `AnswerError`
        when nothing waits.

        With `question` (the Waiting the person was shown, or its id), the answer is taken
        only if that very question still waits; otherwise `StaleAnswer` (code
        `stale_answer`), and nothing changes. Name the question wherever an answer can be
        repeated, delayed or reordered (a web page, a JSON API, a queue, several workers):
        a double click, an HTTP retry or two workers racing then answer a question once,
        never the one after it. The interface and `stalwart chat` always name it.

        `reason` is the person's own why, recorded with the answer (who, when, why:
        `answers`, and each call's in `record`): a skip's reason is the declined call's
        result, what a model reads of it; a cancel all's is kept with the run's failure.
        Past `stalwart.limits` it is `InputRefused`, and nothing changes.
        """
        expected = None if question is None else _question_id(question)
        return self._answer(user, answer, session, expected, only_confirm=False, reason=reason)

    def confirm(
        self,
        user: str,
        answer: str,
        *,
        question: Waiting | str | None = None,
        session: str | None = None,
        reason: str | None = None,
    ) -> Reply:
        """`answer`, for a confirmation only (approve, skip, cancel all): without
        `question`, the confirmation that waits now; with it, only that one; `reason` as
        `answer` takes it."""
        expected = None if question is None else _question_id(question)
        return self._answer(user, answer, session, expected, only_confirm=True, reason=reason)

    def answer_current(
        self, user: str, answer: str, *, session: str | None = None, reason: str | None = None
    ) -> Reply:
        """`answer` without `question`: whatever question waits now."""
        return self._answer(user, answer, session, None, only_confirm=False, reason=reason)

    def confirm_current(
        self, user: str, answer: str, *, session: str | None = None, reason: str | None = None
    ) -> Reply:
        """`confirm` without `question`: whatever confirmation waits now."""
        return self._answer(user, answer, session, None, only_confirm=True, reason=reason)

    def pending(self, user: str, *, session: str | None = None) -> Reply | None:
        """Where the session's latest run stands, as a Reply; None for a new session.

        A run its process left mid-way is resumed first (this needs the session's lock).
        """
        ledger = self._peek(user, session)
        run = ledger.latest_run() if ledger else None
        if ledger is None or run is None:
            return None
        if run.state not in INTERRUPTED:
            return _reply(ledger, run)
        try:
            # Never waits: a worker advancing the session holds its lock, and pending
            # says where the run stands instead of blocking behind that worker's call.
            return self._resume_now(user, session)
        except SessionBusy:
            return replace(_reply(ledger, run), text=texts.BUSY_ELSEWHERE)

    def resume(self, user: str, *, session: str | None = None) -> Reply | None:
        """Take up the session's run if its process stopped mid-way; where it now stands.

        None for a session never recorded. A run that was not left mid-way is unchanged.
        """
        if self._peek(user, session) is None:
            return None
        with self._session(user, session) as ledger:
            run = ledger.latest_run()
            return _reply(ledger, run) if run is not None else None

    def _resume_now(self, user: str, session: str | None) -> Reply | None:
        """`resume`, or SessionBusy at once when another worker holds the session."""
        with self._session(user, session, wait=False) as ledger:
            run = ledger.latest_run()
            return _reply(ledger, run) if run is not None else None

    def resume_all(self) -> list[tuple[str, Reply]]:
        """Resume every run of this agent left mid-way, in any session: (session, reply)."""
        resumed: list[tuple[str, Reply]] = []
        for sid in self.store.sessions_with_runs_in([s.value for s in INTERRUPTED]):
            try:
                resumed.extend(self._resume_one(sid))
            except SessionBusy:
                # Another worker holds it now: skipped, the rest go on.
                seen = self.store.load(sid)
                if seen is None or seen.session.agent != self.name or not seen.runs:
                    continue
                state = seen.runs[-1].state
                resumed.append((sid, Reply(text=texts.BUSY_ELSEWHERE, session=sid, state=state)))
        return resumed

    def _resume_one(self, sid: str) -> list[tuple[str, Reply]]:
        """Resume one session's run if it was left mid-way; SessionBusy at once if another
        worker holds the session."""
        with self.store.lock(sid, wait=False, clock=self.clock) as lease:
            record = self.store.load(sid)
            if record is None or record.session.agent != self.name:
                return []
            ledger = Ledger(self.store, self.clock, record, new=False, lease=lease)
            run = ledger.latest_run()
            if run is None or run.state not in INTERRUPTED:
                return []  # another worker took it up first
            run = resume.resume(ledger, self._context, run)
            return [(sid, _reply(ledger, run))]

    # --- what is recorded and what the model reads ---

    def memory(self, user: str, *, session: str | None = None) -> list[Message]:
        """What the model would read next: the session's messages, less the rewound."""
        ledger = self._peek(user, session)
        return read_next(ledger.messages) if ledger else []

    def record(self, user: str, *, session: str | None = None) -> list[RecordedCall]:
        """Every call of the session, every undo and every outcome; never rewound.

        The asks of a model are kept in the record too; `usage` reads them.
        """
        ledger = self._peek(user, session)
        if ledger is None:
            return []
        return recorded_calls(ledger.calls, ledger.runs)

    def answers(self, user: str, *, session: str | None = None) -> list[RecordedAnswer]:
        """Every answer a person gave in the session, in order: who, when, to which
        question, and why when they said (a cancel all's too, which no call carries)."""
        ledger = self._peek(user, session)
        return recorded_answers(ledger.runs) if ledger is not None else []

    def name_session(self, user: str, title: str, *, session: str | None = None) -> str:
        """Give the user's session a name a person reads (`SessionRow.title`) instead of its
        first turn; the name as kept. `InputRefused` past `stalwart.limits` (a name of up to
        200 characters), changing nothing."""
        title = limits.check_name("a session's title", title).strip()
        with self._session(user, session) as ledger:
            ledger.put_session(replace_row(ledger.session, title=title))
            ledger.commit()
        return title

    def usage(self, session: str) -> SessionUsage:
        """The tokens and cost of every ask of the model in a session, per run and in total.

        Read from the record (no lock, no model); AnswerError for a session this agent
        never recorded.
        """
        return session_usage(self.store, session, self.name)

    def rewind(self, user: str, *, session: str | None = None) -> bool:
        """Take the latest run's messages out of memory; refused while an undo remains.

        Returns False when there was nothing left to rewind (a failed run rewinds
        itself once its rollback is over).
        """
        with self._session(user, session) as ledger:
            pending = [run for run in ledger.runs if run.state in _PENDING_COMPENSATION]
            if pending:
                remaining = len(rollback.writes_to_undo(ledger, self._context, pending[-1]))
                raise RewindRefused(texts.rewind_refused(ledger.session.session, remaining))
            run = ledger.latest_run()
            if run is None or run.state == State.WAITING:
                return False
            done = rewind(ledger, run, run.reply or "")
            ledger.commit()
            return done

    def undone_by_hand(self, user: str, call: str, *, session: str | None = None) -> Reply:
        """Say that a write the session's latest run left to be undone by hand was undone
        by hand; `call` is the write's id (`RecordedCall.call_id`, from `record`).

        An abandoned rollback and an operator's ending leave the writes still to undo to a
        person ("still to be undone by hand: ..."). Each one the person undoes is said
        here, as the `done by hand` answer says it of a stuck undo: its undo is recorded
        `by_hand` (never sent) and the write as undone by it, and the run's reply, said
        again, lists it as undone. So an operator's undo of the run (`operator_undo`)
        undoes only what the record says is still to be undone, never a write twice.
        Another run's write, a call the run did not leave to a person, or one said already
        raises `AnswerError`, changing nothing.
        """
        with self._session(user, session) as ledger:
            sid, run = ledger.session.session, ledger.latest_run()
            if run is None:
                raise AnswerError(texts.operator_nothing_to_undo(sid))
            if run.state not in _LEFT_TO_A_PERSON:
                raise AnswerError(texts.by_hand_not_left(sid, run.run_id, run.state))
            left = {w.call_id: w for w in rollback.writes_to_undo(ledger, self._context, run)}
            if call not in left:
                raise AnswerError(texts.by_hand_no_such_write(sid, run.run_id, call))
            return _reply(ledger, answers.undone_by_hand(ledger, self._context, run, left[call]))

    # --- the operator ---

    def operator_undo(self, session: str, *, token: str | None) -> Reply:
        """Undo the session's last run from outside it, with the operator token.

        The token is checked first (`check_operator_token`); a wrong or missing one, or
        none set, raises `OperatorTokenError` and changes nothing. The run's writes that
        are not undone yet are undone last first, checked as in any rollback, and the
        run's memory is rewound when nothing remains. The run must have ended (a run
        waiting on a question is answered instead).
        """
        self.check_operator_token(token)
        with self._operator_run(session, texts.operator_nothing_to_undo(session)) as (ledger, run):
            if run.state in INTERRUPTED:
                run = resume.resume(ledger, self._context, run)
            if run.state in INTERRUPTED:
                raise _left_for_another_worker(run)
            if run.state in ASKING:
                question = (run.question or {}).get("text", "")
                raise AnswerError(texts.operator_run_busy(session, run.run_id, run.state, question))
            if run.state == State.ENDED_BY_OPERATOR:
                raise AnswerError(texts.operator_ended_left_to_person(session, run.run_id))
            if not rollback.writes_to_undo(ledger, self._context, run):
                raise AnswerError(texts.operator_nothing_left(session, run.run_id))
            run = resume.operator_undo(ledger, self._context, run)
            return _reply(ledger, run)

    def operator_end(
        self, session: str, *, token: str | None, reason: str, by: str | None = None
    ) -> Reply:
        """End the session's latest run from outside it, with the operator token: a run
        that cannot go on (stuck on an undo that keeps failing, waiting on a question
        nobody will answer, left mid-way by a worker lacking a tool, or in flight with an
        outcome that could not be recorded).

        The token is checked first (`check_operator_token`), then `reason` (why, said in
        the reply) and `by` (who, None for an operator who gives no name) against
        `stalwart.limits` (`InputRefused`); either refusal changes nothing. Nothing is
        sent forward and nothing sent before is sent again: a step waiting for its
        confirmation is not run, a call in flight is not re-sent (a write's outcome is left
        in doubt, for a person), and the run's writes are undone last first with undos
        never tried before, as far as they can be now; the rest is left for a person to
        undo by hand (see `_engine/ending.py`). Memory is rewound as a failed run's; the
        run's one reply says who ended it and why, what was undone and what is left to do
        by hand, and `Reply.ended` is who, when and why, as recorded. A run that has ended
        already, or none, raises `AnswerError`, changing nothing.
        """
        self.check_operator_token(token)
        limits.check_reason(reason)
        if by is not None:
            limits.check_name("an operator's name", by)
        nothing = texts.operator_nothing_to_end(session)
        with self._operator_run(session, nothing, take_over=True) as (ledger, run):
            if run.state == State.ENDING:
                # An ending its process left mid-way: finished, as it was asked.
                run = resume.resume(ledger, self._context, run)
                return _taken_over(ledger, _reply(ledger, run))
            if run.state in ENDED:
                raise AnswerError(texts.operator_run_ended(session, run.run_id, run.state))
            run = ending.end(ledger, self._context, run, by=by, reason=reason)
            return _taken_over(ledger, _reply(ledger, run))

    def operator_plan(self, session: str) -> OperatorPlan:
        """What `operator_undo` and `operator_end` would do to the session's latest run now
        (no token, no lock: what an operator's page offers, and shows before the token is
        asked). `AnswerError` for a session this agent never recorded."""
        record = self.store.load(session)
        if record is None or record.session.agent != self.name:
            raise AnswerError(texts.operator_nothing_to_undo(session))
        ledger = Ledger(self.store, self.clock, record, new=False)
        run = ledger.latest_run()
        if run is None:
            return OperatorPlan(run=None, state=None, can_undo=False, can_end=False)
        writes = rollback.writes_to_undo(ledger, self._context, run)
        undos = tuple(
            (
                shown_call(self.tools, write.tool, write.args),
                declared.tool if (declared := recorded_undo(self._context, write)) else "",
            )
            for write in reversed(writes)
        )
        undoable = run.state in ENDED and run.state != State.ENDED_BY_OPERATOR
        return OperatorPlan(
            run=run.run_id,
            state=run.state,
            can_undo=undoable and bool(writes),
            can_end=run.state not in ENDED,
            undos=undos,
        )

    @contextmanager
    def _operator_run(
        self, session: str, nothing: str, *, take_over: bool = False
    ) -> Iterator[tuple[Ledger, RunRow]]:
        """Any session's latest run of this agent, under the session's lock, for an operator
        (a run its process left mid-way is not resumed here); AnswerError(`nothing`) when
        the session has none. `take_over`: when a worker that hangs keeps the lock, the
        session is taken without it once that worker's lease has expired, fencing it
        (`Store.take_over`)."""
        locked = self.store.take_over if take_over else self.store.lock
        with locked(session, clock=self.clock) as lease:
            record = self.store.load(session)
            if record is None or record.session.agent != self.name or not record.runs:
                raise AnswerError(nothing)
            ledger = Ledger(self.store, self.clock, record, new=False, lease=lease)
            run = ledger.latest_run()
            assert run is not None
            yield ledger, run

    def check_operator_token(self, token: object) -> None:
        """Every operator check: returns when `token` is the operator's, else raises
        `OperatorTokenError` (code `operator_token`).

        The token is hashed with the salt and scrypt parameters of the verifier that
        agent.yaml's `operator_token:` names and compared in constant time; the token is
        never kept. No verifier set, a token that is empty, too long or cannot be encoded
        as UTF-8: each is refused the same way, and nothing changes.
        """
        operator_token.check_token(self.config.operator_token, token)

    def set_operator_token(self, token: str) -> Path:
        """Set (or rotate) the operator token: its verifier written where agent.yaml says.

        `OperatorTokenError` for a token that cannot be set (empty, spaces around it,
        fewer than 16 or more than 1024 characters, not encodable as UTF-8).
        """
        operator_token.write_verifier(self.config.operator_token, token)
        return self.config.operator_token

    def close(self) -> None:
        self.store.close()
        self.config.project.close()  # its mcp: servers
        if self.model is not None and self._owns_model:
            self.model.close()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- inside ---

    def _answer(
        self,
        user: str,
        answer: str,
        session: str | None,
        expected: str | None,
        *,
        only_confirm: bool,
        reason: str | None = None,
    ) -> Reply:
        given = answer.strip().lower() if isinstance(answer, str) else answer
        reason = limits.check_answer_reason(reason)
        with self._session(user, session) as ledger:
            run = ledger.latest_run()
            if run is not None and run.state in INTERRUPTED:
                raise _left_for_another_worker(run)
            waits = run is not None and run.state in ASKING and run.question is not None
            if not waits:
                if expected is not None:
                    raise StaleAnswer(texts.question_gone(expected, None))
                raise AnswerError(texts.nothing_waiting(ledger.session.session))
            assert run is not None and run.question is not None
            waiting = Waiting.from_record(run.question)
            if expected is not None and expected != waiting.id:
                raise StaleAnswer(texts.question_gone(expected, waiting))
            if only_confirm and waiting.kind != "confirm":
                raise AnswerError(texts.not_a_confirmation(waiting.kind))
            if given not in waiting.answers:
                raise AnswerError(texts.not_an_answer(str(answer), waiting.answers))
            run = answers.answer(
                ledger, self._context, run, given, by=user, reason=reason, question=waiting
            )
            return _reply(ledger, run)

    def _read(self, turn: str) -> Reading:
        limits.check_turn(turn)
        tools = list(self.config.tools.values())
        if self._reader is None:  # the selector, in the agent's languages (agent.yaml)
            reading = selector.read_turn(turn, tools, self.config.languages)
        else:
            reading = self._reader(turn, tools)
        limits.check_steps(len(reading.steps))
        return reading

    def session_id(self, user: str, session: str | None = None) -> str:
        """The record's id of `user`'s session (`Reply.session`): the user's default
        session for None, else the one named `session` among the user's own.

        Names are scoped to the user, so no name reaches another user's session. An id is
        what `usage` and `operator_undo` take. `InputRefused` for a name past the limits.
        """
        limits.check_name("a user's name", user)
        if session is not None:
            limits.check_name("a session's name", session)
        return session_id(user, session)

    @contextmanager
    def _session(
        self,
        user: str,
        session: str | None,
        *,
        resumed: list[RunRow] | None = None,
        wait: bool = True,
    ) -> Iterator[Ledger]:
        """The session's ledger, under its lock, once it is sure the session is the user's.

        A run found mid-way here was left so by a process that stopped (a live one would
        hold the lock): it is resumed before anything else, and added to `resumed`.
        """
        sid = self.session_id(user, session)
        with self.store.lock(sid, wait=wait, clock=self.clock) as lease:
            ledger = Ledger.open(self.store, self.clock, sid, user, self.name, lease)
            if ledger.session.user != user or ledger.session.agent != self.name:
                raise NotYourSession(texts.not_your_session(user, sid))
            latest = ledger.latest_run()
            if latest is not None and latest.state in INTERRUPTED:
                taken_up = resume.resume(ledger, self._context, latest)
                if resumed is not None:
                    resumed.append(taken_up)
            yield ledger

    def _peek(self, user: str, session: str | None) -> Ledger | None:
        """The session as committed, read without its lock (reads need none)."""
        sid = self.session_id(user, session)
        record = self.store.load(sid)
        if record is None:
            return None
        if record.session.user != user or record.session.agent != self.name:
            raise NotYourSession(texts.not_your_session(user, sid))
        return Ledger(self.store, self.clock, record, new=False)


def _left_for_another_worker(run: RunRow) -> StalwartError:
    """What a call meets in a run this worker left for another (resumed, it still stands
    mid-way): its catalogue lacks the tool of the call left in flight (`ToolUnavailable`),
    or the undo the rollback needs next (`UndoUnavailable`). The reply says which. A guarded
    run left running is its framework's to take up again (`stalwart.guarded`)."""
    if run.framework is not None and run.state == State.RUNNING:
        return RunStateError(texts.guarded_run_left(run.session, run.run_id))
    if run.state == State.RUNNING:
        return ToolUnavailable(run.reply or "")
    return UndoUnavailable(run.reply or "")


def recorded_answers(runs_: Sequence[RunRow]) -> list[RecordedAnswer]:
    """Every answer of a session's runs, in the order given (`RunRow.answers`)."""
    return [
        RecordedAnswer(
            run=run.run_id,
            step=int(given.get("step", 0)),
            kind=str(given.get("kind", "")),
            tool=str(given.get("tool", "")),
            question=str(given.get("question", "")),
            text=str(given.get("text", "")),
            answer=str(given.get("answer", "")),
            by=given.get("by"),
            at=float(given.get("at", run.updated)),
            asked=given.get("asked"),
            reason=given.get("reason"),
            call=given.get("call"),
        )
        for run in runs_
        for given in run.answers or []
    ]


def _answers_of(call: CallRow, found: Sequence[RecordedAnswer]) -> tuple[RecordedAnswer, ...]:
    """The answers about `call`: a confirmation of its step (a read or a write), or a
    question that named it (its outcome; an undo's stuck answers)."""
    return tuple(
        given
        for given in found
        if given.call == call.call_id
        or (
            given.call is None
            and given.kind == "confirm"
            and given.run == call.run_id
            and given.step == call.step
            and call.kind in ("read", "write")
        )
    )


def recorded_calls(calls: Sequence[CallRow], runs_: Sequence[RunRow] = ()) -> list[RecordedCall]:
    """A session's calls as `Agent.record` gives them: every call but the model's asks,
    each with the answers given about it (`runs_`: the session's runs)."""
    tools_by_id = {call.call_id: call.tool for call in calls}
    found = recorded_answers(runs_)
    return [
        RecordedCall(
            call_id=call.call_id,
            run=call.run_id,
            step=call.step,
            kind=call.kind,
            tool=call.tool,
            args=call.args,
            status=call.status,
            result=call.result,
            error=call.error,
            key=call.key,
            allowed=call.allowed,
            undoes=call.undoes,
            undone_by=call.undone_by,
            undone_by_tool=tools_by_id.get(call.undone_by or ""),
            tries=call.tries,
            recorded=call.created,
            finished=call.finished,
            answers=_answers_of(call, found),
        )
        for call in calls
        if call.kind != MODEL_KIND
    ]


_PENDING_COMPENSATION = frozenset({State.ROLLING_BACK, State.STUCK})
# Ended runs whose writes still to undo were left to a person, to undo by hand.
_LEFT_TO_A_PERSON = frozenset({State.ABANDONED, State.ENDED_BY_OPERATOR})


def _question_id(question: Waiting | str) -> str:
    """The id an answer names: a Waiting's, or an id given as it is."""
    if isinstance(question, Waiting):
        return question.id
    if isinstance(question, str) and question:
        return question
    raise AnswerError(texts.question_not_named(question))


def _with_earlier(reply: Reply, resumed: list[RunRow]) -> Reply:
    """A new turn's reply, after the reply of a run its process left mid-way that this call
    finished: that reply was never given, and the chapter's person gets it, once."""
    earlier = tuple(
        run.reply for run in resumed if run.state in ENDED and run.reply and run.run_id != reply.run
    )
    if not earlier:
        return reply
    return replace(reply, text="\n\n".join([*earlier, reply.text]), earlier=earlier)


def _reply(ledger: Ledger, run: RunRow) -> Reply:
    if run.state in ASKING and run.question is not None:
        waiting = Waiting.from_record(run.question)
        return _new_reply(
            text=run.reply if run.state == State.STUCK and run.reply else waiting.text,
            waiting=[waiting],
            session=ledger.session.session,
            run=run.run_id,
            state=run.state,
            earlier=(),
            ended=None,
            detail=reply_detail(run),
            framework=_framework(run),
        )
    return _new_reply(
        text=run.reply or "",
        waiting=[],
        session=ledger.session.session,
        run=run.run_id,
        state=run.state,
        earlier=(),
        ended=_ended(run),
        detail=reply_detail(run),
        framework=_framework(run),
    )


def _new_reply(**fields: Any) -> Reply:
    """A Reply of every field, given in the class's order: built as the record builds its
    rows, without the frozen `__init__`'s `object.__setattr__` for each of its nine fields
    (a reply for every call; `Reply` has no `__post_init__` to skip)."""
    reply = object.__new__(Reply)
    reply.__dict__.update(fields)
    return reply


def _framework(run: RunRow) -> str | None:
    """The framework of a guarded run (`Reply.framework`), None for stalwart's own."""
    name = (run.framework or {}).get("name")
    return name if isinstance(name, str) else None


def reply_detail(run: RunRow) -> str | None:
    """The line under a run's reply: what the tool it stopped at said (`Reply.detail`)."""
    if run.failure is None:  # nothing failed (every reply of a run that goes well)
        return None
    cause = failure_of(run.failure).cause
    return cause.tool_said if isinstance(cause, Failed) else None


def _taken_over(ledger: Ledger, reply: Reply) -> Reply:
    """The operator's reply, saying so when the session was taken from a worker that hangs
    (the run's own reply, as recorded, does not)."""
    if ledger.lease is None or not ledger.lease.taken_over:
        return reply
    return replace(reply, text=f"{reply.text} {texts.OPERATOR_TOOK_SESSION}")


def _ended(run: RunRow) -> Ended | None:
    """Who ended the run, when and why, for a run an operator ended."""
    if run.state != State.ENDED_BY_OPERATOR:
        return None
    ended = failure_of(run.failure).ended
    assert ended is not None  # an operator's ending is kept on the run it ended
    return Ended(by=ended.by, at=float(ended.at), reason=ended.reason)
