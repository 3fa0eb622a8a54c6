"""The record files' format as plain data: the version arc writes them in, the values a
fix_level takes, and a plan file's fields with the JSON each is written as.

Nothing here loads the typed records (radian.arc.records, pydantic), so a command that only
reads (`radian arc status`, radian.arc.store_plain) or only sets up its options does not pay
for them. records.Plan declares a plan's fields for the typed record; PLAN_FIELDS below says,
for each of them, what arc's own writer puts in the file (`Plan.model_dump(mode="json")`) and
its default when absent. A test holds the two together (same names, same defaults, and the
same plan read either way from files the real writer wrote).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

# The version of the files arc writes (task.json, plans/<plan>.json, attempt_result.json).
# A file without one was written by a build before versions (0) and loads as it is; a file
# from a newer build than this one is refused (DamagedFile), not misread.
FORMAT_VERSION = 1

# A review finding's levels, least to most severe: a finding fails at or above the
# effective fix_level (the task's, else the plan's, else [gate] fix_level). A Literal, so that
# the configuration's error names them.
FixLevel = Literal["info", "minor", "major", "critical"]
FIX_LEVELS: tuple[str, ...] = get_args(FixLevel)

SWITCH_VALUES: tuple[str, ...] = ("on", "off")  # records.Switch


def _is_int(value: object) -> bool:
    return type(value) is int


def _is_bool(value: object) -> bool:
    return type(value) is bool


def _is_str(value: object) -> bool:
    return type(value) is str


def _is_switch(value: object) -> bool:
    return type(value) is str and value in SWITCH_VALUES


def _is_money(value: object) -> bool:  # a float field that allows no inf or nan
    return value is None or (type(value) is float and math.isfinite(value))


def _is_str_or_none(value: object) -> bool:
    return value is None or type(value) is str


def _is_names(value: object) -> bool:
    return type(value) is list and all(type(item) is str for item in value)


REQUIRED = object()  # a field without a default

# A plan file's fields: name -> (is it written as arc's writer writes it, its default). Only
# exact JSON types: a value the typed record would first convert (5 for 5.0, "true" for true)
# is left to it.
PLAN_FIELDS: dict[str, tuple[Callable[[object], bool], object]] = {
    "format_version": (_is_int, 0),
    "name": (_is_str, REQUIRED),
    "auto": (_is_switch, "on"),
    "confirmed": (_is_bool, False),
    "max_cost_usd": (_is_money, None),
    "merge_main": (_is_bool, True),
    "auto_rework": (_is_int, 1),
    "fix_level": (_is_str_or_none, None),
    "tasks": (_is_names, []),
    "loading": (_is_bool, False),
}


@dataclass(frozen=True)
class PlainPlan:
    """What a summary reads of a plan (radian.arc.status), without the typed record."""

    name: str
    auto: str
    confirmed: bool
    max_cost_usd: float | None
    tasks: tuple[str, ...]
    loading: bool


def plain_plan(data: Mapping[str, Any]) -> PlainPlan | None:
    """The plan of a plan file's JSON object when every field of it is as arc's writer writes
    it (and its format no newer than this build's); None when any is not: the typed record
    (records.Plan) then decides what it is, or what is wrong with it."""
    values: dict[str, Any] = {}
    for name, (written, default) in PLAN_FIELDS.items():
        if name not in data:
            if default is REQUIRED:
                return None
            values[name] = default
        elif written(data[name]):
            values[name] = data[name]
        else:
            return None
    if values["format_version"] > FORMAT_VERSION:
        return None
    return PlainPlan(values["name"], values["auto"], values["confirmed"],
                     values["max_cost_usd"], tuple(values["tasks"]), values["loading"])  # fmt: skip
