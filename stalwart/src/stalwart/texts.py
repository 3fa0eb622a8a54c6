"""Every sentence a person reads from a run, in one place.

The chapter's sentences (chapter 34) are copied character for character; the rest
are designed in the same voice: short, plain, naming the tool, the step and the cause.
Functions take the facts and return the exact text; nothing else in the runtime
writes a sentence a person reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from ._engine.keys import canonical_json

# --- confirmations (chapter 34, "Irreversible steps"; chapter 35 for the answers) ---

APPROVE = "approve"
SKIP = "skip"
CANCEL_ALL = "cancel all"
CONFIRM_ANSWERS: tuple[str, ...] = (APPROVE, SKIP, CANCEL_ALL)

# --- a write nobody knows the outcome of (chapter 34, "An outcome nobody knows") ---

HAPPENED = "happened"
DID_NOT_HAPPEN = "did not happen"
OUTCOME_ANSWERS: tuple[str, ...] = (HAPPENED, DID_NOT_HAPPEN)

# --- an undo that failed every try (chapter 34, "An undo that fails") ---

RETRY = "retry"
DONE_BY_HAND = "done by hand"
ABANDON = "abandon"
UNDO_ANSWERS: tuple[str, ...] = (RETRY, DONE_BY_HAND, ABANDON)

IRREVERSIBLE_WARNING = "Nothing can undo this step once it runs."
IRREVERSIBLE_IN_ATOMIC_RUN = "Nothing undoes this step, and the steps after it cannot undo it."
# Under the confirmation of an MCP tool whose server hints it is destructive (its word).
DESTRUCTIVE_HINT = "Its MCP server says this tool may destroy or overwrite data."


def call_text(tool: str, args: Mapping[str, Any]) -> str:
    """A call as a person reads it: charge_card(order=4411, amount=40.0).

    Each value shows what the tool will receive: a float parameter's 40.00 is the float
    40.0; a Decimal keeps the digits it was written with (40.00).
    """
    shown = ", ".join(f"{name}={_value_shown(value)}" for name, value in args.items())
    return f"{tool}({shown})"


def shown_value(value: Any) -> str:
    """One argument's value as `call_text` shows it (the interface's argument tables)."""
    return _value_shown(value)


def _value_shown(value: Any) -> str:
    if isinstance(value, Decimal) and value.is_finite():
        return str(value)
    return canonical_json(value)


def confirm_question(
    tool: str,
    args: Mapping[str, Any],
    *,
    irreversible: bool,
    in_atomic_run: bool,
    sources: Mapping[str, str] | None = None,
    destructive: bool = False,
) -> str:
    """The confirmation a write waits on; an irreversible one carries its warning under it,
    a destructive MCP tool its server's hint.

    `sources`, for a step a model chose, says where each argument came from, on a line of
    its own under the question.
    """
    question = f"Run {call_text(tool, args)}?"
    if irreversible and in_atomic_run:
        question += f" {IRREVERSIBLE_IN_ATOMIC_RUN}"
    if sources:
        question += f"\n{provenance_line(sources)}"
    if destructive:
        question += f"\n{DESTRUCTIVE_HINT}"
    if irreversible:
        question += f"\n{IRREVERSIBLE_WARNING}"
    return question


def outcome_question(tool: str, *, stopped: bool) -> str:
    """Did a write in doubt take effect? `stopped`: its process stopped mid-send."""
    why = (
        "It was being sent when the run stopped."
        if stopped
        else "The call was sent and no answer came back."
    )
    return f"Did {tool} take effect? {why}"


def undo_question(undo_tool: str, tries: int, error: str, remaining: int) -> str:
    """The question of a stuck run; `error` as `retry.render_error` renders it."""
    return (
        f"Undoing {undo_tool} failed after {tries} tries ({error}). "
        f"{remaining} step(s) still need undoing."
    )


# --- a run that ends well ---


def done_reply(outcomes: Sequence[tuple[str, Any, str]]) -> str:
    """What each step returned, briefly: (tool, result, status) in the order they came.

    status "declined": the person skipped it; "happened": no answer came back and a
    person said it took effect; anything else: it returned `result`.
    """
    if not outcomes:
        return "Done: there was nothing to run."
    return "Done: " + "; ".join(_outcome(*outcome) for outcome in outcomes) + "."


def _outcome(tool: str, result: Any, status: str) -> str:
    if status == "declined":
        return f"{tool} was skipped"
    if status == "happened":
        return f"{tool} took effect, a person said (no answer came back)"
    return f"{tool} returned {brief(result)}"


def brief(result: Any, limit: int = 120) -> str:
    text = _json_or_repr(result)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- a turn nothing could be read from (on_unread: refuse) ---


def unread_reply(clause: str | None, reason: str | None) -> str:
    """Which clause could not be read; nothing ran and no model was called."""
    said = f'I could not read "{clause}"' if clause else "I could not read this turn"
    because = f" ({reason})" if reason else ""
    return f"{said}{because}, so nothing ran."


# --- a run that stopped (chapter 34, "The failed order") ---


def failed_because(tool: str, error_type: str) -> str:
    return f"{tool} failed ({error_type})"


def cancelled_because(tool: str) -> str:
    return f"you cancelled it at {tool}"


def refused_because(tool: str, reason: str) -> str:
    """`reason` as the check gives it: a clause about the call (rulebook.REFUSAL_TEXTS)."""
    return f"the check refused {tool}, because {reason}"


def did_not_happen_because(tool: str) -> str:
    return f"you said {tool} did not take effect"


def operator_because() -> str:
    return "an operator undid it"


def stopped_reply(
    cause: str,
    undone: Sequence[tuple[str, str | None]],
    not_undoable: Sequence[str],
    not_undone: Sequence[tuple[str, str]],
    abandoned: Sequence[str] = (),
) -> str:
    """The one reply of a failed run, once its rollback is over.

    `undone` is (write, undo) latest first, the undo None when a person undid it by
    hand; `not_undoable` the irreversible writes (and writes that declare no undo), left
    in place; `not_undone` (write, reason) for an undo the check refused or could not
    bind, never sent; `abandoned` the writes still to undo when a person abandoned the
    rollback, latest first.
    """
    text = f"This run stopped: {cause}."
    if undone:
        listed = ", ".join(f"{write} (by {undo or 'hand'})" for write, undo in undone)
        text += f" Undone, latest first: {listed}."
    if not_undoable:
        text += f" Not undoable, and left as they are: {', '.join(not_undoable)}."
    if not_undone:
        listed = ", ".join(f"{write} ({reason})" for write, reason in not_undone)
        text += f" Not undone, and still to be undone by hand: {listed}."
    if abandoned:
        text += f" The rollback was abandoned; still to be undone by hand: {', '.join(abandoned)}."
    if not (undone or not_undoable or not_undone or abandoned):
        text += " Nothing had been written, so nothing needed undoing."
    return text


def stuck_reply(cause: str, undo_tool: str, tries: int, error: str, remaining: int) -> str:
    """A rollback that stopped because an undo failed (chapter 34, "An undo that fails")."""
    return f"This run stopped: {cause}. {undo_question(undo_tool, tries, error, remaining)}"


# --- why an undo was not sent ---


def undo_not_in_catalogue(undo: str) -> str:
    return f"{undo} is not one of this agent's tools"


def undo_unbound(undo: str, argument: str) -> str:
    return f"{undo}: nothing of the step binds {argument}"


def undo_bound_elsewhere(undo: str, argument: str, source: str) -> str:
    return f"{undo}: {argument} does not match {source} of the step it undoes"


def undo_argument_not_bound(undo: str, argument: str) -> str:
    return f"{undo}: {argument} is not bound to the step it undoes"


def undo_of_step_not_run(undo: str) -> str:
    return f"{undo}: the step it undoes did not run"


def undo_already_done(undo: str) -> str:
    return f"{undo}: the step it undoes was undone already"


def undo_refused(undo: str, reason: str) -> str:
    return f"the check refused {undo}, because {reason}"


def undo_result_unseen(undo: str, argument: str) -> str:
    return f"{undo}: {argument} comes from the step's result, which nobody saw"


# --- what the check allowed (recorded before the send) ---


def allowed_call(tool: str) -> str:
    return f"{tool}: allowed by the rulebook"


def allowed_undo(undo: str, write: str, step: int, sources: Mapping[str, str]) -> str:
    bound = ", ".join(f"{name} <- {source}" for name, source in sources.items()) or "no arguments"
    return f"{undo} undoes {write} (step {step}): bound {bound}; allowed by the rulebook"


# --- what the model reads ---

DECLINED_RESULT = "declined: the person skipped this call"


def memory_call(tool: str, args: Mapping[str, Any]) -> str:
    return f"call {call_text(tool, args)}"


def memory_result(result: Any) -> str:
    return brief(result, limit=2000)


def memory_error(error_type: str, message: str) -> str:
    return f"error: {error_type}: {message}" if message else f"error: {error_type}"


def memory_refused(why: str) -> str:
    return f"refused: {why}"


MEMORY_HAPPENED = "no answer came back; a person said the call took effect"
MEMORY_DID_NOT_HAPPEN = "no answer came back; a person said the call took no effect"
MEMORY_UNDONE_BY_HAND = "a person said this was undone by hand"


# --- errors a caller gets for a bad answer or a misplaced turn ---


def nothing_waiting(session: str) -> str:
    return f"Nothing in session {session!r} waits for an answer."


def not_an_answer(answer: str, answers: Sequence[str]) -> str:
    return f"{answer!r} is not an answer to this question; the answers are: {', '.join(answers)}."


def not_a_confirmation(kind: str) -> str:
    return f"The question waiting is of kind {kind!r}, not a confirmation; use answer()."


def question_gone(asked: str, waiting: Any) -> str:
    """A stale answer: `asked` the id it named; `waiting` the Waiting now asked, or None."""
    now = f"Waiting now: {waiting.text!r} (id {waiting.id})." if waiting else "Nothing waits now."
    return f"The question answered ({asked}) no longer waits; nothing was changed. {now}"


def question_not_named(question: object) -> str:
    return (
        f"An answer names the question it answers: question= takes the Waiting shown, or its "
        f"id; got {question!r}."
    )


def not_your_session(user: str, session: str) -> str:
    return f"User {user!r} cannot act on session {session!r}: another user started it."


def question_pending(session: str, question: str) -> str:
    return f"Session {session!r} waits for an answer first: {question}"


def resumed_line(session: str, state: str, text: str) -> str:
    """One line of `stalwart resume`: the session, where its run now stands, its text."""
    return f"{session}: {state}: {' '.join(text.split())}"


# --- the operator (the token itself is never part of any text) ---


def operator_not_configured(path: str) -> str:
    return (
        f"No operator token is set: there is no verifier at {path} "
        "(stalwart operator-token set writes one); nothing was changed."
    )


def operator_verifier_unreadable(path: str, detail: object) -> str:
    return f"The operator token's verifier at {path} cannot be read ({detail}); nothing changed."


def operator_token_wrong() -> str:
    return "The operator token is wrong or missing; nothing was changed."


def operator_token_env_unset(env: str) -> str:
    return f"The variable {env} holds no operator token here; nothing was changed."


def operator_token_empty() -> str:
    return "An operator token cannot be empty; nothing was changed."


def operator_token_unencodable() -> str:
    return (
        "The operator token has characters that cannot be encoded as UTF-8 (such as a lone "
        "surrogate); nothing was changed."
    )


def operator_token_spaces() -> str:
    return "An operator token cannot start or end with a space; nothing was changed."


def operator_token_length(least: int, most: int) -> str:
    return f"An operator token has from {least} to {most} characters; nothing was changed."


def operator_tokens_differ() -> str:
    return "The two tokens differ; nothing was changed."


def operator_token_set(path: str) -> str:
    return f"The operator token is set: its verifier is in {path}; the token is kept nowhere."


def operator_token_env_gone() -> str:
    return (
        "operator_token_env is no longer read: an operator token is checked against its "
        "verifier (operator_token: names the file; run stalwart operator-token set)"
    )


def operator_nothing_to_undo(session: str) -> str:
    return f"Session {session!r} has no run to undo."


def operator_nothing_left(session: str, run: str) -> str:
    return f"Run {run} of session {session!r} has no write left to undo; nothing was changed."


def operator_run_busy(session: str, run: str, state: str, question: str) -> str:
    return (
        f"Session {session!r}'s run {run} is {state} and waits for an answer first: "
        f"{question} Nothing was changed."
    )


# --- the model loop (on_unread: model) ---

# What the model is told about itself; the agent's tools go beside it as JSON schemas.
MODEL_SYSTEM = (
    "You are the agent {agent}. Do what the person asks with your tools. Every write is "
    "shown to the person with its exact arguments and runs only if they approve it. "
    "Take amounts, order numbers and other values from the person's words or from what "
    "a tool returned, never from a guess. When the work is done, answer in plain text."
)


def model_system(agent: str, instructions: str | None) -> str:
    """The system prompt: stalwart's fixed rules first, then the agent's own instructions."""
    rules = MODEL_SYSTEM.format(agent=agent)
    return f"{rules}\n\n{instructions}" if instructions else rules


# Where an argument's value came from, as a confirmation shows it.
SOURCE_TURN = "turn"
SOURCE_MODEL = "model"


def source_step(step: int, tool: str) -> str:
    """The source of a value found in an earlier step's result: step 1 (get_order)."""
    return f"step {step} ({tool})"


def source_shown(source: str) -> str:
    """A source as a person reads it."""
    if source == SOURCE_TURN:
        return "your turn"
    if source == SOURCE_MODEL:
        return "the model alone"
    return source


def provenance_line(sources: Mapping[str, str]) -> str:
    """Under a confirmation of a step a model chose: where each argument came from."""
    listed = ", ".join(f"{name} from {source_shown(source)}" for name, source in sources.items())
    return f"Where the arguments came from: {listed}."


def model_failed_because(model: str, detail: str) -> str:
    return f"the model {model} could not answer ({detail})"


def model_unavailable_detail(attempts: int, last_status: int | None) -> str:
    last = f"HTTP {last_status}" if last_status is not None else "no connection"
    return f"still unavailable after {attempts} tries, last: {last}"


def model_timed_out_detail(timeout: float, tries: int) -> str:
    return f"no answer within {timeout:g} s, on {tries} tries"


def model_rejected_detail(status: int) -> str:
    return f"it refused the request, HTTP {status}"


MODEL_REPLY_UNREADABLE = "its answer could not be read"


def model_cap_because(model: str, calls: int, not_run: Sequence[str] = ()) -> str:
    """The cap: `not_run` are the calls of the last allowed ask, which never run (no ask is
    left to read their results and finish, so a write would be sent only to be undone)."""
    said = f"the model {model} made {calls} calls without finishing"
    if not not_run:
        return said
    return (
        f"{said}; its last answer asked for {', '.join(not_run)}, which did not run, as no "
        "ask was left to finish the run"
    )


def model_refused_because(model: str, said: str | None) -> str:
    """The model declined the turn (Anthropic's `refusal`, OpenAI's `refusal` message)."""
    return f"the model {model} refused this turn" + (f" (it said {brief(said)})" if said else "")


# The provider withheld the answer (OpenAI's `content_filter`).
MODEL_FILTERED = "the provider's content filter withheld its answer"


def model_cut_off_detail(tools: list[str]) -> str:
    """An answer cut off at the token limit while it asked for tool calls: none of them ran
    (the last one's arguments may be cut short: an amount of 4 for 40.00)."""
    return (
        f"its answer was cut off at its max_tokens limit while asking for {', '.join(tools)}, "
        "so none of its calls ran"
    )


def model_truncated_reply(text: str | None) -> str:
    """The model's last word cut off at the token limit: never shown as if complete."""
    if not text:
        return "The model's answer was cut off at its max_tokens limit before it said anything."
    return (
        f"The model's answer was cut off at its max_tokens limit; what it said is not all: {text}…"
    )


MODEL_NO_ANSWER = "The model finished without a word."
MODEL_NOT_RUN = "this call was not run"


# --- why the selector did not read a clause (selector/core.py) ---

NOT_ENGLISH = "the turn is not English; it reads as Portuguese, which is not read yet"
NOTHING_SAID = "the turn says nothing"
NO_TOOL_MATCHES = "no tool matches"
_COUNT_WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}


def tools_match_equally(tools: Sequence[str]) -> str:
    count = _COUNT_WORDS.get(len(tools), str(len(tools)))
    return f"{count} tools match equally: {', '.join(tools)}"


def required_not_given(argument: str, tool: str) -> str:
    return f"required argument {argument} of {tool} is not given"


def value_could_be(value: str, arguments: Sequence[str], tool: str) -> str:
    return f"{value} could be {' or '.join(arguments)} of {tool}"


def value_unclear(argument: str, values: Sequence[str], tool: str) -> str:
    return f"the value of {argument} of {tool} is unclear: {' or '.join(values)}"


def no_argument_for(value: str, tool: str) -> str:
    return f"{tool} has no argument for {value}"


# --- the rulebook's refusals (policy/rulebook.py) ---

# Every reason a refusal can give, in one place. A reason is a clause about the refused
# call ("it", "its <arg>") that never names the tool, so the sentences built on it name
# the tool once: "charge_card is refused: <reason>." and, in a run's reply, "the check
# refused charge_card, because <reason>". `{where}` is "line <n> of <file>".
REFUSAL_TEXTS: Mapping[str, str] = {
    "order": (
        "{where} allows it only after {earlier}, and this session has no {earlier} "
        "that ran and was not undone"
    ),
    "order_same": (
        "{where} allows it only after {earlier} with the same {fields}, and this session "
        "has no {earlier} with {values} that ran and was not undone"
    ),
    "cap_arg": "its {arg} is {value}, and {where} allows {bound} {limit}",
    "cap_total": (
        "its {arg} would total {total} in this session, and {where} allows a total of "
        "{bound} {limit} per session"
    ),
    "cap_calls": (
        "this would be its call {count} in this session, and {where} allows {bound} "
        "{limit} per session"
    ),
    "source": "its {arg} came from {source}, and {where} requires it to come from {allowed}",
    "not_a_number": "its {arg} is {value!r}, not a number, and {where} caps it",
}

# Where an argument may come from, as a refusal names it (`require ... from turn`).
SOURCE_KINDS: Mapping[str, str] = {"turn": "the turn", "step": "an earlier step"}

# A comparison as a refusal says it: "allows at most 500".
BOUNDS: Mapping[str, str] = {
    "<=": "at most",
    "<": "less than",
    ">=": "at least",
    ">": "more than",
}

# --- why the check refused a call: a reason is a clause about the call that does not
# name the tool, so each sentence built on it names the tool once ---


def refusal_sentence(tool: str, reason: str) -> str:
    """A refusal on its own, as the record keeps it and the model reads it."""
    return f"{tool} is refused: {reason}."


NOT_IN_CATALOGUE = "it is not one of this agent's tools"


def missing_argument_reason(argument: str) -> str:
    return f"it needs {argument}, and the call leaves it out"


def unknown_argument_reason(argument: str) -> str:
    return f"it takes no argument {argument}"


def wrong_type_reason(argument: str, value: Any, expected: str) -> str:
    return f"its {argument} is {brief(value, limit=60)}, not {expected}"


def model_missing(agent: str) -> str:
    return (
        f"agent {agent!r}: on_unread: model needs a model; add model: '<provider>:<model>' "
        "to the agent in agent.yaml, or pass model= to Agent"
    )


def model_history_result(content: str) -> str:
    """A tool's result in an earlier run, as the model reads it back."""
    return f"-> {content}"


# --- usage (stalwart usage) ---


def usage_line(label: str, calls: int, input_tokens: int, output_tokens: int, cost: Any) -> str:
    """One line of `stalwart usage`: a run, or the total; cost a Decimal or None."""
    noun = "model call" if calls == 1 else "model calls"
    shown = f"${cost}" if cost is not None else "cost unknown"
    return (
        f"{label}: {calls} {noun}, {input_tokens} input tokens, {output_tokens} output tokens, "
        f"{shown}"
    )


def no_session(session: str) -> str:
    return f"Session {session!r} has no record for this agent."


def rewind_refused(session: str, remaining: int) -> str:
    return (
        f"Session {session!r} cannot be rewound: {remaining} step(s) still need undoing "
        "(rewind_with_pending_compensation)."
    )


def _json_or_repr(value: Any) -> str:
    """The value's canonical JSON, rendered once; its repr when it has none."""
    try:
        return canonical_json(value)
    except TypeError:
        return repr(value)


# --- stalwart verify (see verify.py): each code's finding and its fix ---

# `{tool}` is the tool the finding is about, `{agent}` its agent; the others are the
# code's own facts. Each entry is (what is wrong, how to fix it).
VERIFY_TEXTS: Mapping[str, tuple[str, str]] = {
    "QG013": (
        "{tool} is irreversible and can come before {later}, which a failed run would undo, "
        "but {why}",
        "let a person confirm {tool} (drop confirm: false), so its confirmation says: "
        + IRREVERSIBLE_IN_ATOMIC_RUN,
    ),
    "QG014": (
        "{tool} is a write that runs without a person confirming it (confirm: false); "
        "every write is confirmed by a person",
        "drop confirm: false from {tool} in agent.yaml",
    ),
    "QG105": (
        "{tool} is a write with neither an undo nor irreversible; if {later} fails after it, "
        "the run cannot undo {tool}, and nothing says so",
        "name the tool that undoes {tool} (undo: <tool>), or mark it irreversible: true so "
        "its confirmation warns",
    ),
    "QG106": (
        "if {failing} fails after {tool}, the rollback's {undo} is refused ({why}), "
        "and {tool} stays done",
        "change the rule the refusal names so it allows {undo} after {tool}, "
        "or bind {undo}'s arguments so the rule holds",
    ),
    "QG107": (
        "{undo}, which undoes {tool}, cannot be bound ({why}), and {tool} stays done",
        "return the field from {tool} (in its declared return type), or bind the argument "
        "to one it has: undo: {{tool: {undo}, args: {{<argument>: $result.<field>}}}}",
    ),
    "QG108": (
        "{tool} can run, but {undo}, which undoes it, {where}, so a failed run of agent "
        "'{agent}' cannot undo it",
        "add {undo} to agent '{agent}''s tools",
    ),
    "QG201": (
        "the turn {turn!r} now reads as {got}, not as {expected}",
        "if the new reading is meant, write it in the turns file; else change back the tool "
        "names, docstrings or parameters that changed it",
    ),
}

VERIFY_NOT_CONFIRMED = "it asks for no confirmation (confirm: false)"
VERIFY_NOT_WARNED = f"its confirmation does not say: {IRREVERSIBLE_IN_ATOMIC_RUN}"


def verify_undo_missing(in_catalogue: bool) -> str:
    if in_catalogue:
        return "is not one of its tools"
    return "is not in the catalogue"


def verify_finding(code: str, **facts: str) -> tuple[str, str]:
    """A finding's text and its fix, with its facts filled in."""
    text, fix = VERIFY_TEXTS[code]
    return text.format(**facts), fix.format(**facts)


def verify_route(route: Sequence[str]) -> str:
    return " -> ".join(route) if route else "(no route)"


def verify_line(code: str, agent: str, route: Sequence[str], text: str, fix: str) -> str:
    """One finding as `stalwart verify` prints it."""
    return f"{code} {agent} [{verify_route(route)}]: {text}. Fix: {fix}."


def verify_unreached(agent: str, tool: str, max_steps: int) -> str:
    return f"note: {agent}/{tool} is on no route of up to {max_steps} steps; raise --max-steps"


def verify_passed(agents: int, max_steps: int) -> str:
    return f"verified {agents} agent(s) on every route of up to {max_steps} steps: no findings"


# --- the registration lints (tools/lints.py, stalwart lint) ---

# The chapter's table, as printed; `{...}` are its placeholders.
LINT_TEXTS: Mapping[str, str] = {
    "write_without_compensation": "a write neither compensated nor marked irreversible",
    "write_not_retry_safe": "a write with no idempotency, so an ambiguous failure goes to a person",
    "irreversible_without_confirmation": "an irreversible operation that asks for no confirmation",
    "compensation_unknown_tool": "the compensation names '{undo}', which the catalogue lacks",
    "compensation_not_retry_safe": "'{undo}' undoes it and is not retry-safe",
    "compensation_unbound": "{argument} <- {source}",
    "compensation_cycle": "its compensations return to '{at}'",
    "compensation_out_of_reach": (
        "agent '{agent_name}' can call it but not '{undo}', which undoes it, "
        "so a run of that agent cannot undo it"
    ),
}

# stalwart's own lints, beyond the chapter's eight.
EXTRA_LINT_TEXTS: Mapping[str, str] = {
    "read_from_hint": (
        "a read only because its MCP server hints readOnlyHint, so it runs unconfirmed; "
        "say writes: true or false under its name"
    ),
    "retry_safe_from_hint": (
        "retry-safe only because its MCP server hints idempotentHint, so it is resent "
        "after an ambiguous failure; say retry_safe: under its name"
    ),
    "binding_not_in_schema": "{argument} <- {source}, which its schema does not have",
    "write_without_confirmation": (
        "a write that asks for no confirmation (confirm: false), though every write is "
        "confirmed by a person"
    ),
}

# What `<from>` says when an argument of the undo has no source at all.
UNBOUND_SOURCE = "nothing (no argument or result field named {argument})"


def verify_unread(reason: str) -> str:
    return f"unread ({reason})"


def verify_steps(calls: Sequence[str]) -> str:
    return ", then ".join(calls) if calls else "no steps"


TURNS_STEPS_OR_UNREAD = "expected either steps: [...] or unread: <reason>, not both or neither"


def turns_agent_missing(agents: Sequence[str]) -> str:
    return f"the agent.yaml has several agents ({', '.join(agents)}); name one with agent:"


def turns_agent_unknown(agent: str, agents: Sequence[str]) -> str:
    return f"no agent named {agent!r}; the agent.yaml has: {', '.join(agents)}"


# --- the typed boundary (tools/boundary.py) and what the record holds (record/schema.py) ---


def not_recordable(value: Any) -> str:
    kind = type(value).__name__
    if isinstance(value, set | frozenset):
        return f"{kind} has no order the record can keep; return a sorted list"
    return f"{kind} has no exact JSON form the record can keep"


def unrecordable_because(tool: str, detail: str) -> str:
    """A run's cause: a step returned what the record cannot hold; nothing is bound to it."""
    return f"{tool} returned a value the record cannot hold exactly ({detail})"


# --- calling a tool (tools/invoke.py) ---


def tool_timed_out(tool: str, timeout: float) -> str:
    return f"{tool} took longer than its timeout of {timeout:g} seconds"


def bad_timeout(tool: str, timeout: Any) -> str:
    return f"tool {tool!r}: timeout must be a number of seconds above 0; got {timeout!r}"


# What a value should have been, by the kind of pydantic error that refused it: the tail of
# "its <argument> is <value>, not <expected>". `{...}` are the error's context.
EXPECTED_TYPES: Mapping[str, str] = {
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "decimal_type": "a decimal number",
    "decimal_parsing": "a decimal number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "text",
    "literal_error": "one of {expected}",
    "enum": "one of {expected}",
    "datetime_type": "a date and time (ISO 8601, such as 2026-12-01T10:00:00)",
    "datetime_parsing": "a date and time (ISO 8601, such as 2026-12-01T10:00:00)",
    "datetime_from_date_parsing": "a date and time (ISO 8601, such as 2026-12-01T10:00:00)",
    "date_type": "a date (YYYY-MM-DD)",
    "date_parsing": "a date (YYYY-MM-DD)",
    "date_from_datetime_parsing": "a date (YYYY-MM-DD)",
    "date_from_datetime_inexact": "a date (YYYY-MM-DD)",
    "time_type": "a time (HH:MM:SS)",
    "time_parsing": "a time (HH:MM:SS)",
    "uuid_type": "a UUID",
    "uuid_parsing": "a UUID",
    "uuid_version": "a UUID of version {expected_version}",
    "greater_than": "greater than {gt}",
    "greater_than_equal": "at least {ge}",
    "less_than": "less than {lt}",
    "less_than_equal": "at most {le}",
    "multiple_of": "a multiple of {multiple_of}",
    "decimal_max_digits": "a decimal number of at most {max_digits} digits",
    "decimal_max_places": "a decimal number of at most {decimal_places} decimal places",
    "string_too_short": "text of at least {min_length} characters",
    "string_too_long": "text of at most {max_length} characters",
    "string_pattern_mismatch": "text matching {pattern}",
    "too_short": "a list of at least {min_length} items",
    "too_long": "a list of at most {max_length} items",
    "list_type": "a list",
    "tuple_type": "a list",
    "set_type": "a list",
    "frozen_set_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "dataclass_type": "a mapping",
    "dataclass_exact_type": "a mapping",
    "typed_dict_type": "a mapping",
    "extra_forbidden": "a field it takes",
    "none_required": "null",
}
EXPECTED_DECIMAL = EXPECTED_TYPES["decimal_type"]
EXPECTED_JSON = "a JSON value"


def expected_type(kind: str, context: Mapping[str, Any] | None) -> str:
    """What a value should have been, for a pydantic error of this kind."""
    template = EXPECTED_TYPES.get(kind)
    if template is None:
        return f"valid ({kind.replace('_', ' ')})"
    return template.format(**{k: _context_shown(v) for k, v in (context or {}).items()})


def _context_shown(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def unchecked_parameter(tool: str, parameter: str, annotation: Any, error: Exception) -> str:
    shown = getattr(annotation, "__name__", None) or str(annotation)
    detail = str(error).split("\n", 1)[0]
    return (
        f"tool {tool!r}: parameter {parameter!r} is a {shown}, which cannot be checked or "
        f"given as JSON; use a JSON type, a pydantic model, a TypedDict or a dataclass "
        f"({detail})"
    )
