"""The planned step as a type: read back from the record's JSON form as earlier versions
wrote it, and written in that form, byte for byte."""

from __future__ import annotations

import json

import pytest
from stalwart.record.schema import recorded_text
from stalwart.selector import Step
from stalwart.steps import PlannedStep, planned_steps, recorded_steps

pytestmark = pytest.mark.unit

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


@pytest.mark.parametrize("text", RECORDED_STEPS)
def test_a_step_recorded_before_reads_back_typed_and_is_written_as_it_was(text: str) -> None:
    step = PlannedStep.from_record(json.loads(text))
    assert step == RECORDED_STEPS[text]
    assert recorded_text(step.to_record()) == text


def test_the_selector_makes_the_planned_step() -> None:
    assert Step is PlannedStep
    steps = [PlannedStep("a", {"x": 1}, "do a"), PlannedStep("b", {}, "do b")]
    assert planned_steps(json.loads(recorded_text(recorded_steps(steps)))) == steps
