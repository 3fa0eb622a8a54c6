from __future__ import annotations

from pathlib import Path

import pytest

from radian.arc.config import DEFAULT_CONFIG, load_config, parse_config
from radian.arc.errors import ConfigError

pytestmark = pytest.mark.unit


def test_defaults_without_a_file(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config.repository.main_branch == "main"
    assert config.repository.remote == "origin"
    assert config.target_branch == "main"
    assert config.limits.max_attempts == 3
    assert config.limits.max_conflict_rework == 3
    assert config.limits.max_auto_reverify == 2
    assert config.limits.parallel == 2
    assert config.limits.max_cost_usd is None
    assert config.worker.session == "resume"
    assert config.worker.stall_secs == 300
    assert config.gate is None


def test_the_default_file_parses_to_the_defaults() -> None:
    config = parse_config(DEFAULT_CONFIG, "arc.toml")
    assert config.limits.max_attempts == 3
    assert config.worker.exec_args == ["my-agent", "--brief", "{brief_file}"]


def test_target_branch_defaults_to_main_branch_and_can_differ() -> None:
    config = parse_config('[repository]\nmain_branch = "trunk"\n', "f")
    assert config.target_branch == "trunk"
    config = parse_config('[integration]\ntarget_branch = "release"\n', "f")
    assert config.target_branch == "release"


def test_errors_name_file_key_path_and_expectation() -> None:
    text = '[limits]\nmax_attempts = "x"\nparallel = 0\n[worker]\nsession = "sometimes"\n'
    with pytest.raises(ConfigError) as caught:
        parse_config(text, ".radian/arc.toml")
    message = str(caught.value)
    assert ".radian/arc.toml: limits.max_attempts: expected a valid integer" in message
    assert ".radian/arc.toml: limits.parallel: expected greater than or equal to 1, got 0" in (
        message
    )
    assert ".radian/arc.toml: worker.session: expected 'resume' or 'fresh', got 'sometimes'" in (
        message
    )


def test_unknown_keys_and_bad_toml_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"f: limits.max_atempts: unknown key"):
        parse_config("[limits]\nmax_atempts = 2\n", "f")
    with pytest.raises(ConfigError, match="f: not valid TOML"):
        parse_config("[limits\n", "f")


def test_gate_section_is_typed() -> None:
    config = parse_config(
        '[gate]\nstages = ["commands", "review"]\n'
        'commands = [{ run = "make test", timeout_secs = 60 }]\n'
        "[gate.mutation]\nmin_killed = 0.5\n",
        "f",
    )
    assert config.gate is not None
    assert config.gate.stages == ["commands", "review"]
    assert config.gate.commands[0].run == "make test"
    assert config.gate.mutation.min_killed == 0.5
    with pytest.raises(ConfigError, match="gate.stages"):
        parse_config('[gate]\nstages = ["commands", "commands"]\n', "f")
