"""Every sentence a person reads lives in texts.py: the selector, the rulebook and the lints
keep no sentences of their own."""

from __future__ import annotations

import ast
import pathlib

import stalwart
from stalwart import texts

SRC = pathlib.Path(stalwart.__file__).parent


def module_constants(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def test_the_reasons_refusals_and_lint_texts_are_in_texts() -> None:
    moved = {
        "selector/core.py": {"NOTHING_SAID", "NO_TOOL_MATCHES", "NOT_ENGLISH"},
        "policy/rulebook.py": {"REFUSAL_TEXTS", "BOUNDS", "SOURCE_KINDS"},
        "tools/lints.py": {"LINT_TEXTS", "UNBOUND_SOURCE"},
    }
    for module, names in moved.items():
        assert module_constants(SRC / module) & names == set(), module
        assert all(hasattr(texts, name) for name in names)


def test_the_selectors_reasons_are_functions_of_texts() -> None:
    assert texts.tools_match_equally(["a", "b"]) == "two tools match equally: a, b"
    assert texts.required_not_given("order", "charge_card") == (
        "required argument order of charge_card is not given"
    )
    assert (
        texts.REFUSAL_TEXTS["cap_arg"].format(
            arg="amount",
            value=900.0,
            where="line 6 of policy.co",
            bound=texts.BOUNDS["<="],
            limit=500,
        )
        == "its amount is 900.0, and line 6 of policy.co allows at most 500"
    )
