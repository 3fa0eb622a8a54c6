"""stalwart: an agent runtime whose every write is confirmed, keyed, recorded and undoable."""

from stalwart.tools import tool

__all__ = ["tool"]
