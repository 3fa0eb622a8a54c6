"""The JSON codec's two ways to one text: `canonical_text` (the C encoder for a flat
object) gives exactly what `canonical_json` (the Python renderer) gives, or refuses alike."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stalwart import codec
from stalwart.codec import canonical_json, canonical_text
from stalwart.errors import Unencodable

pytestmark = pytest.mark.unit

plain_values = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()  # NaN and infinities too: both refuse them
    | st.floats(min_value=-(2.0**54), max_value=2.0**54).map(float.__floor__).map(float)
    | st.text()
)

json_values = st.recursive(
    plain_values | st.decimals(allow_nan=False, allow_infinity=False),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(), children, max_size=3)
    ),
    max_leaves=10,
)


def _text_or_refusal(render: Any, value: object) -> str:
    try:
        return str(render(value))
    except Unencodable as refused:
        return f"refused: {refused.reason}"


@given(st.dictionaries(st.text(), plain_values, max_size=6))
def test_a_flat_object_renders_as_canonical_json_renders_it(value: dict[str, object]) -> None:
    assert _text_or_refusal(canonical_text, value) == _text_or_refusal(canonical_json, value)


@given(json_values)
def test_any_value_renders_as_canonical_json_renders_it(value: object) -> None:
    assert _text_or_refusal(canonical_text, value) == _text_or_refusal(canonical_json, value)


def test_what_the_c_encoder_is_not_given_is_rendered_by_python() -> None:
    # A key that is not text, a Decimal, a nested object: each as canonical_json writes it.
    assert canonical_text({1: "a", "b": Decimal("2.50")}) == '{"1":"a","b":2.5}'
    assert canonical_text({"b": {"d": [1, 2.5]}, "a": True}) == '{"a":true,"b":{"d":[1,2.5]}}'
    assert canonical_text({"amount": 40.0, "order": 4411, "sent": None}) == (
        '{"amount":40.0,"order":4411,"sent":null}'
    )
    with pytest.raises(Unencodable):
        canonical_text({"x": float("nan")})


@given(st.dictionaries(st.text(), plain_values, max_size=6))
def test_without_the_c_encoder_a_flat_object_renders_alike(value: dict[str, object]) -> None:
    # An interpreter whose json has no C encoder (not CPython) takes `_C_RENDER` instead.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(codec, "_C_FLAT", None)
        assert _text_or_refusal(canonical_text, value) == _text_or_refusal(canonical_json, value)
