"""stalwart: an agent runtime whose every write is confirmed, keyed, recorded and undoable."""
