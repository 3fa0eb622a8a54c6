"""radian: tools for supervising coding agents."""

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    # Read from the package metadata when asked, not at import: importing importlib.metadata
    # costs a tenth of a second, and every `radian arc` command and every attempt's wrapper
    # is a process that imports radian and never asks.
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("radian")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"
