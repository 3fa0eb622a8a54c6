"""radian: tools for supervising coding agents."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("radian")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
