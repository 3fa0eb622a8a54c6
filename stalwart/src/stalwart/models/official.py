"""What the adapters over the official clients (`anthropic`, `openai`) share.

Both clients are built the same way and fail with the same three kinds of error; this
class builds the client and turns those errors into stalwart's, so each adapter says
only what its wire format is.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeGuard, TypeVar

from ..errors import ModelReplyInvalid, ProviderFailure, ProviderTimeout
from .base import Completion

_Answer = TypeVar("_Answer")


class OfficialClientAdapter:
    """An adapter over an official client: `sdk` is its module, `client_class` its client."""

    sdk: ModuleType
    client_class: Callable[..., Any]

    def __init__(
        self,
        selector: str,
        model: str,
        *,
        api_key: str,
        base_url: str | None,
        timeout: float,
    ) -> None:
        self._selector = selector
        self._model = model
        self._timeout = timeout
        # max_retries=0: the backoff policy in `Model` is the only one, and it is tested.
        self._client = type(self).client_class(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout
        )

    def _ask(self, create: Callable[[], _Answer]) -> _Answer:
        """Send one request; a status, an unreadable answer or no answer become ours."""
        sdk = self.sdk
        try:
            return create()
        except sdk.APIStatusError as error:
            raise ProviderFailure(
                error.status_code, self._status_detail(error), dict(error.response.headers)
            ) from error
        except (sdk.APIResponseValidationError, json.JSONDecodeError) as error:
            raise ModelReplyInvalid(self._selector, f"unreadable answer: {error}") from error
        except sdk.APITimeoutError as error:  # before its base class, APIConnectionError
            raise ProviderTimeout(self._timeout, f"no answer within {self._timeout:g} s") from error
        except sdk.APIConnectionError as error:
            raise ProviderFailure(None, f"no response: {error}") from error

    def _read(self, read: Callable[[str, _Answer], Completion], answer: _Answer) -> Completion:
        """Read an answer; anything unexpected in it is an unreadable answer, not a crash
        that leaves the ask in flight (the reads check each field, this is the backstop)."""
        try:
            return read(self._selector, answer)
        except ModelReplyInvalid:
            raise
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise ModelReplyInvalid(
                self._selector, f"unreadable answer ({type(error).__name__}: {error})"
            ) from error

    def _status_detail(self, error: Any) -> str:
        return str(error.message)

    def close(self) -> None:
        self._client.close()


def shown(value: object) -> str:
    """A part of an answer as an error message shows it: what it held, at most 200 chars."""
    dump = getattr(value, "model_dump", None)
    text = repr(dump(exclude_unset=True) if callable(dump) else value)
    return text if len(text) <= 200 else text[:199] + "…"


def is_count(tokens: object) -> TypeGuard[int]:
    """Whether a provider's token count is a whole number (a bool is not one)."""
    return isinstance(tokens, int) and not isinstance(tokens, bool)
