"""The wrapper, started once per attempt, imports only what it needs (issue 33): not the
config models (pydantic), the Result formats (zoneinfo, re), the delivery check, the attempt
module nor logging."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

NOT_NEEDED = (
    "pydantic",
    "logging",
    "zoneinfo",
    "radian.arc.config",
    "radian.arc.worker.attempt",
    "radian.arc.worker.delivery",
    "radian.arc.worker.formats",
    "radian.arc.worker.result",
)


def test_the_wrappers_start_up_imports_none_of_what_it_never_uses() -> None:
    probe = "import json, sys, radian.arc.worker.wrapper; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True,
                                       text=True, check=True, timeout=60).stdout)  # fmt: skip
    assert [name for name in NOT_NEEDED if name in loaded] == []


def test_the_names_loaded_on_first_use_are_still_there() -> None:
    from radian.arc import worker

    assert worker.run_attempt.__module__ == "radian.arc.worker.attempt"
    assert worker.parse_result.__module__ == "radian.arc.worker.result"
    assert worker.Delivery.__module__ == "radian.arc.worker.delivery"
    with pytest.raises(AttributeError):
        _ = worker.no_such_name
