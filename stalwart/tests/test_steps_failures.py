"""The planned step and a run's failure as types: each read back from the record's JSON form
as earlier versions wrote it, and written in that form, byte for byte; every cause renders."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import get_args

import pytest
from conftest import approve_all, write_project

from stalwart import FakeClock, texts
from stalwart._engine.failures import (
    CAUSES,
    Cancelled,
    DidNotHappen,
    Ending,
    Failed,
    Failure,
    ModelCapped,
    ModelFailed,
    ModelRefused,
    OperatorUndo,
    Refused,
    RunFailure,
    Unrecordable,
    cause_text,
    failure_of,
)
from stalwart.record.schema import recorded_text
from stalwart.selector import Step
from stalwart.steps import PlannedStep, planned_steps, recorded_steps

pytestmark = pytest.mark.unit

TOKEN = "op-7f3a9c-never-to-be-written-down"

# Steps as the record kept them before the type existed: the selector's, a model's, and a
# guarded run's a person approved.
RECORDED_STEPS = {
    '{"args":{"amount":40.0,"order":4411},"clause":"charge order 4411 40.00",'
    '"tool":"charge_card"}': PlannedStep(
        "charge_card", {"order": 4411, "amount": 40.0}, "charge order 4411 40.00"
    ),
    '{"args":{"order":"4411"},"clause":null,"model_call":"s#1:model1","sources":{"order":"turn"},'
    '"tool":"get_order","tool_call_id":"call_A"}': PlannedStep(
        "get_order",
        {"order": "4411"},
        model_call="s#1:model1",
        tool_call_id="call_A",
        sources={"order": "turn"},
    ),
    '{"approved":"q-3","args":{"order":7},"clause":null,"sources":{"order":"result:1"},'
    '"tool":"ship","tool_call_id":"c9"}': PlannedStep(
        "ship", {"order": 7}, tool_call_id="c9", sources={"order": "result:1"}, approved="q-3"
    ),
}

# Failures as the record kept them while they were dicts, one of each cause at least, and
# what a rollback and an operator's ending added to them.
RECORDED_FAILURES = {
    '{"cause":"failed","error":"RuntimeError","tool":"water_lawn",'
    '"tool_said":"water_lawn said: water_lawn is out of order"}': RunFailure(
        Failed("water_lawn", "RuntimeError", "water_lawn said: water_lawn is out of order")
    ),
    '{"cause":"failed","error":"ValueError","tool":"pydantic-ai"}': RunFailure(
        Failed("pydantic-ai", "ValueError")
    ),
    '{"cause":"unrecordable","detail":"a set has no JSON form","tool":"get_order"}': RunFailure(
        Unrecordable("get_order", "a set has no JSON form")
    ),
    '{"cause":"refused","reason":"its amount is 900.0","tool":"charge_card"}': RunFailure(
        Refused("charge_card", "its amount is 900.0")
    ),
    '{"cause":"model","detail":"no model is loaded","model":"anthropic:x"}': RunFailure(
        ModelFailed("anthropic:x", "no model is loaded")
    ),
    '{"calls":8,"cause":"model_cap","model":"m"}': RunFailure(ModelCapped("m", 8)),
    '{"calls":8,"cause":"model_cap","model":"m","not_run":["a","b"]}': RunFailure(
        ModelCapped("m", 8, ["a", "b"])
    ),
    '{"cause":"model_refused","model":"m","said":null}': RunFailure(ModelRefused("m", None)),
    '{"cause":"cancelled","reason":"not today","tool":"paint_fence"}': RunFailure(
        Cancelled("paint_fence", "not today")
    ),
    '{"cause":"cancelled","tool":"paint_fence"}': RunFailure(Cancelled("paint_fence")),
    '{"cause":"did_not_happen","tool":"ship"}': RunFailure(DidNotHappen("ship")),
    '{"cause":"refused","reason":"r","tool":"t","undo":"u","undo_refused":"no"}': RunFailure(
        Refused("t", "r"), undo="u", undo_refused="no"
    ),
    '{"cause":"did_not_happen","tool":"t","undo":"u","undo_missing":"u",'
    '"undo_rounds":{"s#1:1:undo":4}}': RunFailure(
        DidNotHappen("t"), undo_rounds={"s#1:1:undo": 4}, undo="u", undo_missing="u"
    ),
    '{"before":{"abandoned":["u#1:1"],"cause":"failed","error":"RuntimeError","tool":"water_lawn",'
    '"tool_said":"water_lawn said: water_lawn is out of order","tries":4,"undo":"unpaint_fence",'
    '"undo_error":"RuntimeError: unpaint_fence is out of order"},"cause":"operator",'
    '"undo_rounds":{"u#1:1:undo":4}}': RunFailure(
        OperatorUndo(
            RunFailure(
                Failed("water_lawn", "RuntimeError", "water_lawn said: water_lawn is out of order"),
                undo="unpaint_fence",
                undo_error="RuntimeError: unpaint_fence is out of order",
                tries=4,
                abandoned=["u#1:1"],
            )
        ),
        undo_rounds={"u#1:1:undo": 4},
    ),
    '{"before":null,"cause":"operator","undo_rounds":{}}': RunFailure(
        OperatorUndo(None), undo_rounds={}
    ),
    '{"ended":{"at":1800000007.0,"by":"ops","not_run":"plant_tree","reason":"closing",'
    '"state":"waiting"}}': RunFailure(
        ended=Ending(
            by="ops", at=1800000007.0, reason="closing", state="waiting", not_run="plant_tree"
        )
    ),
    '{"cause":"cancelled","ended":{"at":2.0,"by":null,"reason":"r","state":"stuck",'
    '"taken_from":"w-1"},"tool":"t"}': RunFailure(
        Cancelled("t"), ended=Ending(by=None, at=2.0, reason="r", state="stuck", taken_from="w-1")
    ),
}


@pytest.mark.parametrize("text", RECORDED_STEPS)
def test_a_step_recorded_before_reads_back_typed_and_is_written_as_it_was(text: str) -> None:
    step = PlannedStep.from_record(json.loads(text))
    assert step == RECORDED_STEPS[text]
    assert recorded_text(step.to_record()) == text


def test_the_selector_makes_the_planned_step() -> None:
    assert Step is PlannedStep
    steps = [PlannedStep("a", {"x": 1}, "do a"), PlannedStep("b", {}, "do b")]
    assert planned_steps(json.loads(recorded_text(recorded_steps(steps)))) == steps


@pytest.mark.parametrize("text", RECORDED_FAILURES)
def test_a_failure_recorded_before_reads_back_typed_and_is_written_as_it_was(text: str) -> None:
    failure = RunFailure.from_record(json.loads(text))
    assert failure == RECORDED_FAILURES[text]
    assert recorded_text(failure.to_record()) == text


def test_no_failure_recorded_reads_as_an_empty_one() -> None:
    assert failure_of(None) == RunFailure()
    assert RunFailure().to_record() == {}


# One of each cause, and the sentence a stopped run's reply gives for it (`named` shows
# the step as the reply names it).
EVERY_CAUSE: dict[type, tuple[Failure, str]] = {
    Failed: (Failed("t", "RuntimeError", "t said: no"), "<t> failed (RuntimeError)"),
    Unrecordable: (Unrecordable("t", "why"), texts.unrecordable_because("<t>", "why")),
    Refused: (Refused("t", "its amount is 9"), texts.refused_because("<t>", "its amount is 9")),
    ModelFailed: (ModelFailed("m", "no answer"), texts.model_failed_because("m", "no answer")),
    ModelCapped: (ModelCapped("m", 3, ["a"]), texts.model_cap_because("m", 3, ["a"])),
    ModelRefused: (ModelRefused("m", "no"), texts.model_refused_because("m", "no")),
    Cancelled: (Cancelled("t", "later"), texts.cancelled_because("<t>")),
    DidNotHappen: (DidNotHappen("t"), texts.did_not_happen_because("<t>")),
    OperatorUndo: (OperatorUndo(None), texts.operator_because()),
}


def test_the_failure_union_is_every_cause_the_record_names_and_each_renders() -> None:
    assert set(get_args(Failure)) == set(EVERY_CAUSE)
    assert set(CAUSES) == {
        "failed", "unrecordable", "refused", "model", "model_cap", "model_refused",
        "cancelled", "did_not_happen", "operator",
    }  # fmt: skip
    for kind, (cause, said) in EVERY_CAUSE.items():
        assert isinstance(cause, kind)
        assert cause_text(cause, lambda tool: f"<{tool}>") == said
        recorded = RunFailure(cause).to_record()
        assert recorded["cause"] == kind.CAUSE  # type: ignore[attr-defined]
        assert RunFailure.from_record(recorded) == RunFailure(cause)


def test_the_record_keeps_steps_and_failures_in_the_form_it_always_had(tmp_path: Path) -> None:
    # Written by the version before the types existed, in these very scenes.
    project = write_project(tmp_path)
    agent = project.agent(clock=FakeClock())
    agent.set_operator_token(TOKEN)
    project.fail.update({"water_lawn", "unpaint_fence"})
    reply = approve_all(agent, "paint the fence for order 2, then water the lawn for order 2", "u")
    agent.answer("u", "abandon", question=reply.waiting[0])
    project.fail.clear()
    agent.operator_undo(agent.session_id("u"), token=TOKEN)
    asked = agent.chat("paint the fence for order 3", user="v")
    agent.confirm("v", "cancel all", question=asked.waiting[0], reason="not today")
    agent.chat("plant a tree for order 4", user="w")
    agent.operator_end(agent.session_id("w"), token=TOKEN, reason="closing", by="ops")
    agent.close()
    with sqlite3.connect(tmp_path / "record.sqlite") as db:
        rows = db.execute("SELECT run_id, steps, failure FROM runs ORDER BY run_id").fetchall()
    assert rows == [
        (
            "u#1",
            '[{"args":{"order":2},"clause":"paint the fence for order 2","tool":"paint_fence"},'
            '{"args":{"order":2},"clause":"water the lawn for order 2","tool":"water_lawn"}]',
            '{"before":{"abandoned":["u#1:1"],"cause":"failed","error":"RuntimeError",'
            '"tool":"water_lawn","tool_said":"water_lawn said: water_lawn is out of order",'
            '"tries":4,"undo":"unpaint_fence","undo_error":"RuntimeError: unpaint_fence is out '
            'of order"},"cause":"operator","undo_rounds":{"u#1:1:undo":4}}',
        ),
        (
            "v#1",
            '[{"args":{"order":3},"clause":"paint the fence for order 3","tool":"paint_fence"}]',
            '{"cause":"cancelled","reason":"not today","tool":"paint_fence"}',
        ),
        (
            "w#1",
            '[{"args":{"order":4},"clause":"plant a tree for order 4","tool":"plant_tree"}]',
            '{"ended":{"at":1800000007.0,"by":"ops","not_run":"plant_tree","reason":"closing",'
            '"state":"waiting"}}',
        ),
    ]
