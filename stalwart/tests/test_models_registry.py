"""`provider:model` selection: everything that can be wrong is found by load_model."""

from __future__ import annotations

import sys

import pytest
from model_wire import clean_provider_env  # noqa: F401

from stalwart.clock import FakeClock
from stalwart.errors import ModelConfigError, NoModelError
from stalwart.models import PROVIDERS, Model, load_model, parse_selector

pytestmark = pytest.mark.usefixtures("clean_provider_env")


@pytest.mark.parametrize(
    "selector",
    ["claude-sonnet-5-5", "anthropic:", ":claude", "anthropic: claude", "", None, 42],
)
def test_a_selector_not_of_the_form_provider_model_is_refused(selector: object) -> None:
    with pytest.raises(ModelConfigError, match="expected 'provider:model'"):
        load_model(selector, api_key="k")  # type: ignore[arg-type]


def test_an_unknown_provider_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ModelConfigError) as caught:
        load_model("mistral:large", api_key="k")

    assert str(caught.value) == (
        "model 'mistral:large': unknown provider 'mistral'; known: anthropic, openai"
    )


@pytest.mark.parametrize(
    ("selector", "variable"),
    [("anthropic:claude-sonnet-5-5", "ANTHROPIC_API_KEY"), ("openai:gpt-4.1", "OPENAI_API_KEY")],
)
def test_a_missing_key_is_refused_at_load_naming_the_variable(selector: str, variable: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        load_model(selector)

    assert str(caught.value) == f"model {selector!r}: no API key; set {variable} or pass api_key"
    # The engine can treat every load failure as "no model can be called".
    assert isinstance(caught.value, NoModelError)
    assert caught.value.code == "model_config"


def test_an_empty_key_in_the_environment_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "")

    with pytest.raises(ModelConfigError, match="no API key"):
        load_model("openai:gpt-4.1")


@pytest.mark.parametrize(("provider", "extra"), [("anthropic", "anthropic"), ("openai", "openai")])
def test_a_missing_extra_is_refused_at_load_with_the_install_command(
    provider: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # None in sys.modules is Python's own way to make a package unimportable.
    monkeypatch.setitem(sys.modules, provider, None)

    with pytest.raises(ModelConfigError) as caught:
        load_model(f"{provider}:some-model", api_key="k")

    assert f"pip install 'stalwart[{extra}]'" in str(caught.value)


def test_the_key_from_the_environment_is_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")

    model = load_model("anthropic:claude-sonnet-5-5", clock=FakeClock())

    with model:
        assert isinstance(model, Model)
        assert (model.selector, model.provider, model.name) == (
            "anthropic:claude-sonnet-5-5",
            "anthropic",
            "claude-sonnet-5-5",
        )


def test_a_model_name_may_hold_colons_and_dots() -> None:
    provider, name = parse_selector("openai:ft:gpt-4.1-mini:shop:abc123")

    assert provider is PROVIDERS["openai"]
    assert name == "ft:gpt-4.1-mini:shop:abc123"
