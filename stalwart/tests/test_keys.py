"""Idempotency keys: canonical JSON and SHA-256, stable across processes and renderings."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
from contextlib import closing
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from conftest import approve_all, session_identity, write_project
from hypothesis import given
from hypothesis import strategies as st

from stalwart import FakeClock, UnkeyableArgument
from stalwart._engine.keys import canonical_json, idempotency_key, undo_key


def test_canonical_json_sorts_keys_and_drops_spaces() -> None:
    assert canonical_json({"b": 1, "a": {"d": [1, 2.5], "c": None}}) == (
        '{"a":{"c":null,"d":[1,2.5]},"b":1}'
    )


def test_numbers_and_decimals_render_stably() -> None:
    assert canonical_json(40.0) == "40.0"
    assert canonical_json(Decimal("40.00")) == "40.0"
    assert canonical_json(Decimal("0.10")) == "0.1"
    assert canonical_json(0.1) == "0.1"
    assert canonical_json(4411) == "4411"
    assert canonical_json(True) == "true"


def test_key_is_sha256_hex_of_the_canonical_call() -> None:
    key = idempotency_key("u-17", 1, "charge_card", {"order": 4411, "amount": 40.0})
    material = (
        '{"args":{"amount":40.0,"order":4411},"session":"u-17","step":1,"tool":"charge_card"}'
    )
    assert key == hashlib.sha256(material.encode()).hexdigest()


def test_key_differs_by_session_step_tool_and_arguments() -> None:
    base = idempotency_key("s", 1, "t", {"a": 1})
    assert (
        len(
            {
                base,
                idempotency_key("s2", 1, "t", {"a": 1}),
                idempotency_key("s", 2, "t", {"a": 1}),
                idempotency_key("s", 1, "u", {"a": 1}),
                idempotency_key("s", 1, "t", {"a": 2}),
            }
        )
        == 5
    )


def test_undo_key_is_its_own() -> None:
    write = idempotency_key("s", 1, "charge_card", {"order": 1})
    assert undo_key(write, "refund_card", {"order": 1}) != write
    assert undo_key(write, "refund_card", {"order": 1}) == undo_key(
        write, "refund_card", {"order": 1}
    )


def test_same_key_in_another_process() -> None:
    code = (
        "from stalwart._engine.keys import idempotency_key as k; "
        "print(k('u', 3, 't', {'x': 0.1, 'y': [1]}))"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == idempotency_key("u", 3, "t", {"y": [1], "x": 0.1})


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), object(), Decimal("NaN")])
def test_values_without_a_stable_form_are_refused(bad: object) -> None:
    with pytest.raises(UnkeyableArgument):
        canonical_json({"x": bad})


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(), children, max_size=3)
    ),
    max_leaves=10,
)


@given(st.dictionaries(st.text(), json_values, max_size=4))
def test_key_ignores_the_order_arguments_were_given_in(args: dict[str, object]) -> None:
    reversed_args = dict(reversed(list(args.items())))
    assert idempotency_key("s", 1, "t", args) == idempotency_key("s", 1, "t", reversed_args)


plain_values = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()  # NaN and infinities too: both paths refuse them
    | st.floats(min_value=-(2.0**54), max_value=2.0**54).map(float.__floor__).map(float)
    | st.text()
)


def _key_or_refusal(make: Any) -> str:
    try:
        return str(make())
    except UnkeyableArgument as refused:
        return f"refused: {refused}"


@given(st.dictionaries(st.text(), plain_values, max_size=5), st.integers(0, 99) | st.text())
def test_a_key_of_flat_arguments_is_the_one_the_renderer_gives(
    args: dict[str, object], step: int | str
) -> None:
    """Flat arguments are rendered by the C encoder (issue 17): the keys must be the
    very ones `_render` gives, or a call retried after an upgrade would get a new key."""
    material = {"args": dict(args), "session": "s", "step": step, "tool": "t"}
    rendered = _key_or_refusal(
        lambda: hashlib.sha256(canonical_json(material).encode()).hexdigest()
    )
    assert _key_or_refusal(lambda: idempotency_key("s", step, "t", args)) == rendered
    undo = {"args": dict(args), "undoes": "k", "tool": "t"}
    rendered = _key_or_refusal(lambda: hashlib.sha256(canonical_json(undo).encode()).hexdigest())
    assert _key_or_refusal(lambda: undo_key("k", "t", args)) == rendered


# --- a session's identity in its keys: unique across records, resets and agent files ---


def test_the_same_call_in_another_record_or_after_a_reset_gets_another_key(
    tmp_path: Path,
) -> None:
    keys: list[str] = []
    identities: list[str] = []
    for folder in ("desk-a", "desk-b", "desk-b"):  # desk-b twice: its record reset between
        (tmp_path / folder).mkdir(exist_ok=True)
        for stale in (tmp_path / folder).glob("record.sqlite*"):
            if stale.is_file():
                stale.unlink()
        project = write_project(tmp_path / folder)
        agent = project.agent(clock=FakeClock())
        approve_all(agent, "paint the fence for order 1", "u-17")
        [write] = agent.record("u-17")
        keys.append(str(write.key))
        identity = session_identity(agent.store, "u-17")
        identities.append(identity)
        assert write.key == idempotency_key(identity, "1.1", "paint_fence", {"order": 1})
        assert identity != "u-17" and len(identity) == 32
        agent.close()
    assert len(set(keys)) == 3, "the same user, run, step and arguments, three sessions"
    assert len(set(identities)) == 3


def test_a_session_recorded_before_identities_gets_one_and_keeps_it(tmp_path: Path) -> None:
    project = write_project(tmp_path)
    agent = project.agent(clock=FakeClock())
    approve_all(agent, "paint the fence for order 1", "u")
    agent.close()
    with closing(sqlite3.connect(tmp_path / "record.sqlite")) as db, db:
        db.execute('UPDATE "sessions" SET "identity" = NULL')  # as an older record has it
    agent = project.agent(clock=FakeClock())
    approve_all(agent, "paint the fence for order 2", "u")
    first = agent.store.load("u")
    assert first is not None and first.session.identity is not None
    approve_all(agent, "paint the fence for order 3", "u")
    again = agent.store.load("u")
    assert again is not None and again.session.identity == first.session.identity
    assert len({call.key for call in again.calls}) == 3
    agent.close()
