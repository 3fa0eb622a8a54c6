"""Policy: the rulebook, the check every step passes before it is sent, and where each
argument came from (provenance)."""
