"""The call being sent now: `stalwart.tools.current`, named here for the tests that import
it from the engine. The engine's modules import it from `tools.current` themselves."""

from __future__ import annotations

from ..tools.current import CurrentCall as CurrentCall
from ..tools.current import current_call as current_call
from ..tools.current import sending as sending
