"""radian: tools for supervising coding agents."""
