"""`provider:model` selection: which client, which extra, which key, checked at load.

Everything that can be known before the first turn is checked by `load_model`: the
selector's form, the provider, the installed extra and the API key. So a broken
`model:` in agent.yaml fails when the agent loads, not when a person is waiting.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
from dataclasses import dataclass
from typing import Protocol

from ..clock import Clock
from ..errors import ModelConfigError
from .backoff import BackoffPolicy
from .base import Model, ProviderAdapter
from .options import DEFAULT_TIMEOUT, ModelOptions, check_options
from .pricing import PriceTable


class AdapterFactory(Protocol):
    def __call__(
        self, selector: str, model: str, *, api_key: str, base_url: str | None, timeout: float
    ) -> ProviderAdapter: ...


@dataclass(frozen=True)
class Provider:
    """A provider as data: its client package, the extra that installs it, its key."""

    name: str
    client_package: str
    extra: str
    adapter: str  # "module:Class", imported only once the client is known to be there
    api_key_env: str
    base_url_env: str


PROVIDERS: dict[str, Provider] = {
    "anthropic": Provider(
        name="anthropic",
        client_package="anthropic",
        extra="anthropic",
        adapter="stalwart.models.anthropic:AnthropicAdapter",
        api_key_env="ANTHROPIC_API_KEY",
        base_url_env="ANTHROPIC_BASE_URL",
    ),
    "openai": Provider(
        name="openai",
        client_package="openai",
        extra="openai",
        adapter="stalwart.models.openai:OpenAIAdapter",
        api_key_env="OPENAI_API_KEY",
        base_url_env="OPENAI_BASE_URL",
    ),
}

_SELECTOR = re.compile(r"^(?P<provider>[a-z][a-z0-9_-]*):(?P<model>\S+)$")


def parse_selector(selector: object) -> tuple[Provider, str]:
    """Split 'anthropic:claude-sonnet-5-5' into its provider and model name."""
    match = _SELECTOR.match(selector) if isinstance(selector, str) else None
    if match is None:
        raise ModelConfigError(
            f"model {selector!r}: expected 'provider:model', e.g. 'anthropic:claude-sonnet-5-5'"
        )
    provider = PROVIDERS.get(match["provider"])
    if provider is None:
        known = ", ".join(sorted(PROVIDERS))
        raise ModelConfigError(
            f"model {selector!r}: unknown provider {match['provider']!r}; known: {known}"
        )
    return provider, match["model"]


def load_model(
    selector: str,
    *,
    clock: Clock | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    price_table: PriceTable | None = None,
    backoff: BackoffPolicy | None = None,
    max_tokens: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    options: ModelOptions | None = None,
) -> Model:
    """The model a `model:` selector names, ready to call, or a ModelConfigError now.

    The API key is `api_key` or the provider's environment variable (ANTHROPIC_API_KEY,
    OPENAI_API_KEY); the base URL is `base_url` or the client's own environment variable
    (ANTHROPIC_BASE_URL, OPENAI_BASE_URL) or the provider's. Prices come from
    `price_table`, by default the shared table `register_price` extends. `options` (an
    agent.yaml's max_tokens, temperature, thinking, timeout, stream) win over `max_tokens`
    and `timeout` when given.
    """
    options = options or ModelOptions(max_tokens=max_tokens, timeout=timeout)
    provider, model = parse_selector(selector)
    problem = check_options(options, provider.name)
    if problem is not None:
        raise ModelConfigError(f"model {selector!r}: {problem[0]}: {problem[1]}")
    if importlib.util.find_spec(provider.client_package) is None:
        raise ModelConfigError(
            f"model {selector!r}: the {provider.client_package} client is not installed; "
            f"install it with: pip install 'stalwart[{provider.extra}]'"
        )
    key = api_key or os.environ.get(provider.api_key_env)
    if not key:
        raise ModelConfigError(
            f"model {selector!r}: no API key; set {provider.api_key_env} or pass api_key"
        )
    module_name, _, class_name = provider.adapter.partition(":")
    factory: AdapterFactory = getattr(importlib.import_module(module_name), class_name)
    url = base_url or os.environ.get(provider.base_url_env) or None
    adapter = factory(selector, model, api_key=key, base_url=url, timeout=options.timeout)
    return Model(
        selector, adapter, clock=clock, backoff=backoff, prices=price_table, options=options
    )
