"""The model loop's guarantees, with a scripted model on a real record and real tools.

Every step a model chose is a step like the selector's: checked, confirmed, keyed,
recorded in flight, undone on failure. The model's answers are in the record before
their steps run, so a resumed run never asks for one again.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import session_identity
from model_shop import SETTLE_TURN, Call, Shop, scripted, write_shop
from model_wire import clean_provider_env  # noqa: F401

from stalwart import Agent, FakeClock
from stalwart._engine.keys import idempotency_key
from stalwart.backoff import Backoff, no_jitter
from stalwart.cli import main
from stalwart.errors import ModelConfigError
from stalwart.models import (
    AssistantMessage,
    BackoffPolicy,
    Completion,
    Model,
    PriceTable,
    ProviderFailure,
    ScriptedAdapter,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from stalwart.models.scripted import ScriptStep
from stalwart.record import Store
from stalwart.texts import DECLINED_RESULT

pytestmark = pytest.mark.usefixtures("clean_provider_env")

SELECTOR = "scripted:desk"
GET_4411 = ("c1", "get_order", {"order": "4411"})
CHARGE_4411 = ("c2", "charge_card", {"order": "4411", "amount": "40.00"})
PROVISION_4411 = ("c3", "provision_account", {"order": "4411"})


class Crash(BaseException):
    """A process stopping mid-call: nothing after it runs, nothing more is committed."""


@pytest.fixture
def shop(tmp_path: Path) -> Iterator[Shop]:
    opened = write_shop(tmp_path)
    yield opened
    opened.close()


# waits are the schedule's ceilings (1, 2, 4 s), not random draws
STEADY = BackoffPolicy(Backoff(jitter=no_jitter))


def desk_with(
    shop: Shop, clock: FakeClock, script: list[ScriptStep], **options: object
) -> tuple[Agent, ScriptedAdapter]:
    adapter = ScriptedAdapter(script, selector=SELECTOR)
    prices = PriceTable()
    prices.register(SELECTOR, input_per_mtok="2", output_per_mtok="10")
    model = Model(SELECTOR, adapter, clock=clock, prices=prices, backoff=STEADY)
    return shop.agent(clock=clock, model=model, **options), adapter


def test_a_turn_the_selector_reads_never_reaches_the_model(shop: Shop, clock: FakeClock) -> None:
    desk, adapter = desk_with(shop, clock, [])
    reply = desk.chat("look up order 4411", user="u")
    assert reply.state == "done"
    assert shop.calls == ["get_order"]
    assert adapter.requests == []


def test_the_model_reads_memory_and_the_tools_and_its_text_is_the_reply(
    shop: Shop, clock: FakeClock
) -> None:
    desk, adapter = desk_with(
        shop, clock, [scripted(calls=[GET_4411]), scripted("Order 4411 owes 40.00.")]
    )
    reply = desk.chat(SETTLE_TURN, user="u")

    assert (reply.state, reply.text) == ("done", "Order 4411 owes 40.00.")
    first, second = adapter.requests
    assert first.messages == (UserMessage(text=SETTLE_TURN),)
    assert [tool.name for tool in first.tools] == list(desk.tools)
    assert first.tools[1].parameters == desk.tools["charge_card"].json_schema()
    assert first.system is not None and "desk" in first.system
    assert second.messages[1:] == (
        AssistantMessage(tool_calls=scripted(calls=[GET_4411]).tool_calls),
        ToolResultMessage(
            call_id="c1", content='{"amount":"40.00","order":"4411","status":"unpaid"}'
        ),
    )
    [call] = desk.record("u")
    assert (call.tool, call.kind, call.status) == ("get_order", "read", "ran")
    assert [m.content for m in desk.memory("u")] == [
        SETTLE_TURN,
        'call get_order(order="4411")',
        '{"amount":"40.00","order":"4411","status":"unpaid"}',
        "Order 4411 owes 40.00.",
    ]


def test_a_write_the_model_chose_is_confirmed_keyed_and_recorded_with_its_sources(
    shop: Shop, clock: FakeClock
) -> None:
    desk, _ = desk_with(
        shop,
        clock,
        [scripted(calls=[GET_4411]), scripted(calls=[CHARGE_4411]), scripted("Paid.")],
    )
    reply = desk.chat(SETTLE_TURN, user="u")
    assert shop.calls == ["get_order"]  # the write waits for its confirmation
    assert reply.waiting[0].args == {"order": "4411", "amount": "40.00"}

    reply = desk.confirm_current("u", "approve")

    assert (reply.state, reply.text) == ("done", "Paid.")
    charge = desk.record("u")[1]
    assert (charge.tool, charge.status, charge.step) == ("charge_card", "ran", 2)
    assert charge.key == idempotency_key(
        session_identity(desk.store, "u"),
        "1.2",
        "charge_card",
        {"order": "4411", "amount": "40.00"},
    )
    recorded = desk.store.load("u")
    assert recorded is not None
    assert [c.bindings for c in recorded.calls if c.kind == "write"] == [
        {"order": "turn", "amount": "step 1 (get_order)"}
    ]


def test_parallel_calls_are_consecutive_steps_each_confirmed_in_turn(
    shop: Shop, clock: FakeClock
) -> None:
    desk, adapter = desk_with(
        shop, clock, [scripted(calls=[CHARGE_4411, PROVISION_4411]), scripted("Done.")]
    )
    reply = desk.chat("settle 4411 for 40.00 and set it up", user="u")
    assert reply.waiting[0].tool == "charge_card"
    reply = desk.confirm_current("u", "approve")
    assert reply.waiting[0].tool == "provision_account"
    assert len(adapter.requests) == 1  # the model waits for every call of its answer
    reply = desk.confirm_current("u", "approve")
    assert reply.text == "Done."
    assert [m.call_id for m in adapter.requests[1].messages[2:]] == ["c2", "c3"]  # type: ignore[union-attr]


def test_a_skipped_write_is_told_to_the_model_as_declined(shop: Shop, clock: FakeClock) -> None:
    desk, adapter = desk_with(shop, clock, [scripted(calls=[CHARGE_4411]), scripted("Not paid.")])
    desk.chat("settle 4411 for 40.00", user="u")
    reply = desk.confirm_current("u", "skip")
    assert reply.text == "Not paid."
    assert adapter.requests[1].messages[-1] == ToolResultMessage(
        call_id="c2", content=DECLINED_RESULT
    )
    assert shop.calls == []


def test_a_skips_reason_is_told_to_the_model_with_the_declined_result(
    shop: Shop, clock: FakeClock
) -> None:
    desk, adapter = desk_with(shop, clock, [scripted(calls=[CHARGE_4411]), scripted("Not paid.")])
    desk.chat("settle 4411 for 40.00", user="u")
    reply = desk.confirm_current("u", "skip", reason="the customer paid in cash")
    assert reply.text == "Not paid."
    assert adapter.requests[1].messages[-1] == ToolResultMessage(
        call_id="c2", content=f"{DECLINED_RESULT}; their reason: the customer paid in cash"
    )
    (given,) = desk.answers("u")
    assert (given.answer, given.by, given.reason, given.at) == (
        "skip",
        "u",
        "the customer paid in cash",
        clock.now(),
    )
    assert shop.calls == []


def test_cancel_all_undoes_the_run_and_asks_the_model_nothing_more(
    shop: Shop, clock: FakeClock
) -> None:
    desk, adapter = desk_with(
        shop,
        clock,
        [scripted(calls=[CHARGE_4411]), scripted(calls=[PROVISION_4411]), scripted("never")],
    )
    desk.chat("settle 4411 for 40.00", user="u")
    desk.confirm_current("u", "approve")
    reply = desk.confirm_current("u", "cancel all")

    assert reply.text == (
        "This run stopped: you cancelled it at provision_account. "
        "Undone, latest first: charge_card (by refund_card)."
    )
    assert shop.calls == ["charge_card", "refund_card"]
    assert len(adapter.requests) == 2 and adapter.remaining == 1


def test_a_refusal_before_anything_was_written_is_told_to_the_model(
    shop: Shop, clock: FakeClock
) -> None:
    desk, adapter = desk_with(
        shop,
        clock,
        [
            scripted(calls=[("c1", "fly_to_moon", {}), ("c2", "get_order", {"id": "4411"})]),
            scripted("I cannot do that."),
        ],
    )
    reply = desk.chat(SETTLE_TURN, user="u")

    assert (reply.state, reply.text) == ("done", "I cannot do that.")
    assert adapter.requests[1].messages[-2:] == (
        ToolResultMessage(
            call_id="c1",
            content="fly_to_moon is refused: it is not one of this agent's tools.",
            is_error=True,
        ),
        ToolResultMessage(
            call_id="c2",
            content="get_order is refused: it needs order, and the call leaves it out.",
            is_error=True,
        ),
    )
    assert [(c.tool, c.status) for c in desk.record("u")] == [
        ("fly_to_moon", "refused"),
        ("get_order", "refused"),
    ]
    assert shop.calls == []


def test_an_argument_of_the_wrong_type_is_refused_and_the_model_told_why(
    shop: Shop, clock: FakeClock
) -> None:
    desk, adapter = desk_with(
        shop,
        clock,
        [scripted(calls=[("c1", "get_order", {"order": 4411})]), scripted("Sorry.")],
    )
    reply = desk.chat(SETTLE_TURN, user="u")

    assert (reply.state, reply.text) == ("done", "Sorry.")
    assert adapter.requests[1].messages[-1] == ToolResultMessage(
        call_id="c1", content="get_order is refused: its order is 4411, not text.", is_error=True
    )
    assert [(c.tool, c.status) for c in desk.record("u")] == [("get_order", "refused")]
    assert shop.calls == []


def test_a_write_refused_after_an_earlier_write_fails_the_run(tmp_path: Path) -> None:
    shop = write_shop(tmp_path, rulebook="require charge_card.amount from turn or step\n")
    clock = FakeClock()
    model_amount = ("c2", "charge_card", {"order": "4411", "amount": "99.00"})
    desk, adapter = desk_with(
        shop, clock, [scripted(calls=[PROVISION_4411]), scripted(calls=[model_amount])]
    )
    desk.chat("set up the account for 4411", user="u")
    reply = desk.confirm_current("u", "approve")

    assert reply.state == "rolled_back"
    assert reply.text == (
        "This run stopped: the check refused charge_card, because its amount came from the "
        "model alone, and line 1 of policy.co requires it to come from the turn or an earlier "
        "step. "
        "Undone, latest first: provision_account (by close_account)."
    )
    assert shop.calls == ["provision_account", "close_account"]
    assert len(adapter.requests) == 2
    shop.close()


def test_an_amount_from_the_model_alone_is_refused_before_it_is_offered(tmp_path: Path) -> None:
    shop = write_shop(tmp_path, rulebook="require charge_card.amount from turn\n")
    clock = FakeClock()
    from_step = ("c2", "charge_card", {"order": "4411", "amount": "40.00"})
    desk, adapter = desk_with(
        shop,
        clock,
        [scripted(calls=[GET_4411]), scripted(calls=[from_step]), scripted("Tell me the sum.")],
    )
    reply = desk.chat(SETTLE_TURN, user="u")  # 40.00 came from get_order, not the turn

    assert (reply.state, reply.text) == ("done", "Tell me the sum.")
    refusal = adapter.requests[2].messages[-1]
    assert isinstance(refusal, ToolResultMessage) and refusal.is_error
    assert "came from step 1 (get_order)" in refusal.content
    shop.close()


def test_the_model_is_asked_at_most_max_model_calls_times_per_run(
    shop: Shop, clock: FakeClock
) -> None:
    desk, adapter = desk_with(
        shop,
        clock,
        [scripted(calls=[GET_4411]), scripted(calls=[GET_4411]), scripted("never")],
        max_model_calls=2,
    )
    reply = desk.chat(SETTLE_TURN, user="u")
    assert reply.text == (
        "This run stopped: the model scripted:desk made 2 calls without finishing; its last "
        "answer asked for get_order, which did not run, as no ask was left to finish the run. "
        "Nothing had been written, so nothing needed undoing."
    )
    assert len(adapter.requests) == 2
    # The last ask the cap allows tells the model to answer in words.
    assert [r.allow_calls for r in adapter.requests] == [True, False]


def test_a_resumed_run_takes_the_models_answer_from_the_record(
    shop: Shop, clock: FakeClock, monkeypatch: pytest.MonkeyPatch, store: Store
) -> None:
    """On both backends: another worker resumes the run from what the record holds."""
    desk, first = desk_with(
        shop, clock, [scripted(calls=[GET_4411]), scripted("never asked")], store=store
    )
    real_call = shop.module._call

    def crash(name: str, **args: object) -> None:
        raise Crash(name)

    monkeypatch.setattr(shop.module, "_call", crash)
    with pytest.raises(Crash):
        desk.chat(SETTLE_TURN, user="u")
    monkeypatch.setattr(shop.module, "_call", real_call)
    assert len(first.requests) == 1

    other, second = desk_with(shop, clock, [scripted("Order 4411 owes 40.00.")], store=store)
    reply = other.pending("u")

    assert reply is not None and reply.text == "Order 4411 owes 40.00."
    assert len(second.requests) == 1  # only the ask after the read, never the first again
    assert second.requests[0].messages[1:] == (
        AssistantMessage(tool_calls=scripted(calls=[GET_4411]).tool_calls),
        ToolResultMessage(
            call_id="c1", content='{"amount":"40.00","order":"4411","status":"unpaid"}'
        ),
    )
    [read] = other.record("u")
    assert read.tries == 2  # sent again under its key after the stop


def test_an_ask_left_in_flight_is_asked_again_on_resume(shop: Shop, clock: FakeClock) -> None:
    class Stopping(ScriptedAdapter):
        def send(self, request):  # type: ignore[no-untyped-def]
            raise Crash("stopped mid-ask")

    model = Model(SELECTOR, Stopping([]), clock=clock)
    desk = shop.agent(clock=clock, model=model)
    with pytest.raises(Crash):
        desk.chat(SETTLE_TURN, user="u")

    other, adapter = desk_with(shop, clock, [scripted("Order 4411 owes 40.00.")])
    reply = other.pending("u")
    assert reply is not None and reply.text == "Order 4411 owes 40.00."
    assert len(adapter.requests) == 1
    recorded = other.store.load("u")
    assert recorded is not None
    [ask] = [c for c in recorded.calls if c.kind == "model"]
    assert (ask.status, ask.tries) == ("ran", 2)


@pytest.mark.parametrize(
    ("failure", "last", "waits"),
    [
        (ProviderFailure(429, "slow down", {"retry-after": "2"}), "HTTP 429", [2.0, 2.0, 2.0]),
        (ProviderFailure(529, "Overloaded"), "HTTP 529", [1.0, 2.0, 4.0]),
        (ProviderFailure(None, "connection reset"), "no connection", [1.0, 2.0, 4.0]),
    ],
)
def test_a_model_unavailable_past_the_cap_with_nothing_written_gets_one_reply(
    shop: Shop, clock: FakeClock, failure: ProviderFailure, last: str, waits: list[float]
) -> None:
    desk, adapter = desk_with(shop, clock, [failure] * 4)
    reply = desk.chat(SETTLE_TURN, user="u")
    assert reply.text == (
        "This run stopped: the model scripted:desk could not answer (still unavailable after 4 "
        f"tries, last: {last}). Nothing had been written, so nothing needed undoing."
    )
    assert clock.slept == waits
    assert [m.content for m in desk.memory("u")] == [SETTLE_TURN, reply.text]


def test_usage_per_run_and_session_in_the_record_and_on_the_command_line(
    shop: Shop, clock: FakeClock
) -> None:
    def answer(
        text: str | None, calls: tuple[Call, ...] = (), used: tuple[int, int] = (0, 0)
    ) -> Completion:
        message = scripted(text, calls)
        return Completion(
            message.text,
            message.tool_calls,
            Usage(input_tokens=used[0], output_tokens=used[1]),
            None,
        )

    desk, _ = desk_with(
        shop,
        clock,
        [
            answer(None, (GET_4411,), (1000, 100)),
            answer("Owes 40.00.", (), (2000, 50)),
            answer("Hello.", (), (500, 10)),
        ],
    )
    desk.chat(SETTLE_TURN, user="u")
    desk.chat("hello there", user="u")

    usage = desk.usage("u")
    assert [(r.run, r.usage.calls, r.usage.cost_usd) for r in usage.runs] == [
        ("u#1", 2, Decimal("0.0075")),
        ("u#2", 1, Decimal("0.0011")),
    ]
    desk.close()

    result = CliRunner().invoke(main, ["usage", str(shop.yaml), "u"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "u#1: 2 model calls, 3000 input tokens, 150 output tokens, $0.0075",
        "u#2: 1 model call, 500 input tokens, 10 output tokens, $0.0011",
        "total: 3 model calls, 3500 input tokens, 160 output tokens, $0.0086",
    ]
    missing = CliRunner().invoke(main, ["usage", str(shop.yaml), "nobody"])
    assert missing.exit_code == 4
    assert missing.stderr == "Session 'nobody' has no record for this agent.\n"


def test_on_unread_refuse_keeps_the_model_unloaded_and_needs_no_key(tmp_path: Path) -> None:
    shop = write_shop(tmp_path, on_unread="refuse")
    with Agent.from_file(shop.yaml) as desk:
        assert desk.model is None
        assert desk.config.model is not None and desk.config.model.raw.startswith("anthropic:")


def test_an_unknown_provider_is_an_error_when_the_agent_loads(tmp_path: Path) -> None:
    shop = write_shop(tmp_path, model="mistral:large")
    with pytest.raises(ModelConfigError, match="unknown provider 'mistral'"):
        Agent.from_file(shop.yaml)
