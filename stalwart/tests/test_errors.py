"""One errors module with one root: every error stalwart raises on purpose is there."""

from __future__ import annotations

import ast
import inspect
import pathlib

import pytest

import stalwart
from stalwart import errors
from stalwart.errors import ErrorCode, StalwartError

pytestmark = pytest.mark.unit

SRC = pathlib.Path(stalwart.__file__).parent


def error_classes() -> list[type[StalwartError]]:
    """Each class once: `SessionNotFound` is another name of `NotYourSession`."""
    found = (
        value
        for value in vars(errors).values()
        if inspect.isclass(value) and issubclass(value, StalwartError)
    )
    return list(dict.fromkeys(found))


def test_no_exception_class_is_declared_outside_the_errors_module() -> None:
    declared_elsewhere = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "errors.py" and path.parent == SRC:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(base) for base in node.bases}
                if any(base.endswith(("Error", "Exception", "Failure")) for base in bases):
                    declared_elsewhere.append(f"{path.relative_to(SRC)}: {node.name}")
    assert declared_elsewhere == []


def test_every_error_has_its_own_code_from_the_enum_and_is_exported() -> None:
    classes = error_classes()
    codes = [cls.code for cls in classes]
    assert all(isinstance(code, ErrorCode) for code in codes)
    assert len(set(codes)) == len(codes)
    assert {code.value for code in ErrorCode} == set(codes)
    assert all(getattr(stalwart, cls.__name__) is cls for cls in classes)
    assert {cls.__name__ for cls in classes} <= set(stalwart.__all__)


def test_codes_keep_their_strings_and_builtin_bases_stay() -> None:
    assert stalwart.RunStateError.code == "run_state"
    assert stalwart.SessionBusy.code == "session_busy"
    assert stalwart.ScriptExhausted.code == "model_script_exhausted"
    assert f"{stalwart.ConfigError.code}" == "config_error"
    assert issubclass(stalwart.UnkeyableArgument, TypeError)
    assert issubclass(stalwart.ToolDefinitionError, ValueError)


def test_public_places_that_exported_an_error_still_do() -> None:
    from stalwart.models import ProviderFailure, ScriptExhausted
    from stalwart.record import SessionBusy
    from stalwart.tools import ToolDefinitionError

    assert ProviderFailure is errors.ProviderFailure
    assert ScriptExhausted is errors.ScriptExhausted
    assert SessionBusy is errors.SessionBusy
    assert ToolDefinitionError is errors.ToolDefinitionError
