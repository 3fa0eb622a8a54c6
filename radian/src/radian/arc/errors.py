"""arc's errors: one root class, so the CLI can turn every refusal into a clear line."""

from __future__ import annotations


class ArcError(Exception):
    """A request arc refuses; nothing was changed. The message is the line a person reads."""

    exit_code = 1


class UsageError(ArcError):
    """Bad input: a configuration, a plan file, a name or an option that cannot be used."""

    exit_code = 2


class ConfigError(UsageError):
    """.radian/arc.toml (or a plan file) is not what arc expects."""


class NotFoundError(ArcError):
    """A task or a plan that does not exist."""


class DamagedFile(ArcError):
    """One of arc's files is not what arc wrote (corrupt, empty, wrongly typed or deleted):
    the task it belongs to is quarantined, every other task goes on."""


class IllegalTransition(ArcError):
    """A state change that the states table does not allow."""


class LeaseLost(ArcError):
    """A write of an attempt whose lease another host holds now (a shared store): refused,
    nothing written; that host has taken the attempt over."""
