"""Model providers behind one small interface.

    model = load_model("anthropic:claude-sonnet-5-5")      # checks extra and key now
    response = model.complete(history, tools=[spec, ...], system="...")
    history.append(response.as_message())

See docs/models.md.
"""

from ..errors import ProviderFailure, ScriptExhausted
from .backoff import BackoffPolicy
from .base import (
    MESSAGES,
    AssistantMessage,
    Completion,
    Message,
    Model,
    ModelProgress,
    ModelResponse,
    ProviderAdapter,
    Request,
    Stop,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from .options import ModelOptions
from .pricing import DEFAULT_PRICES, Price, PriceTable, register_price
from .registry import PROVIDERS, load_model, parse_selector
from .scripted import ScriptedAdapter

__all__ = [
    "DEFAULT_PRICES",
    "MESSAGES",
    "PROVIDERS",
    "AssistantMessage",
    "BackoffPolicy",
    "Completion",
    "Message",
    "Model",
    "ModelOptions",
    "ModelProgress",
    "ModelResponse",
    "Price",
    "PriceTable",
    "ProviderAdapter",
    "ProviderFailure",
    "Request",
    "ScriptExhausted",
    "ScriptedAdapter",
    "Stop",
    "ToolCall",
    "ToolDefinition",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "load_model",
    "parse_selector",
    "register_price",
]
