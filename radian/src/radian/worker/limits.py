"""A prompt turn's limits and their defaults, read by the agent and by its command line.

Kept apart from `agent` so the command line can declare its options without importing the
agent: that imports acp, whose schema takes seconds to import, and `radian` imports the
command line for every `radian arc` command.
"""

from __future__ import annotations

DEFAULT_MAX_TURNS = 50  # model requests per prompt turn
DEFAULT_MAX_TOKENS = 8192  # output tokens per model request
