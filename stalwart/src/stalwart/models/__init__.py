"""Model providers behind one small interface.

    model = load_model("anthropic:claude-sonnet-5-5")      # checks extra and key now
    response = model.complete([UserMessage(text="...")], tools=[spec, ...])
    history.append(response.as_message())

See docs/models.md.
"""

from .backoff import BackoffPolicy
from .base import (
    MESSAGES,
    AssistantMessage,
    Message,
    Model,
    ModelResponse,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from .pricing import DEFAULT_PRICES, Price, PriceTable, register_price
from .registry import PROVIDERS, load_model, parse_selector

__all__ = [
    "DEFAULT_PRICES",
    "MESSAGES",
    "PROVIDERS",
    "AssistantMessage",
    "BackoffPolicy",
    "Message",
    "Model",
    "ModelResponse",
    "Price",
    "PriceTable",
    "ToolCall",
    "ToolDefinition",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "load_model",
    "parse_selector",
    "register_price",
]
