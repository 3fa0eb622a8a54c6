"""The rulebook: its language, its parse errors, and what its rules refuse."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from stalwart.errors import ConfigError
from stalwart.policy.rulebook import (
    ArgumentCap,
    CallsCap,
    OrderRule,
    PastCall,
    Rulebook,
    SourceRule,
    TotalCap,
    load_rulebook,
    parse_rulebook,
)

pytestmark = pytest.mark.unit

SHOP_POLICY = Path(__file__).resolve().parents[1] / "examples" / "shop" / "policy.co"


def ran(tool: str, undone: bool = False, **args: object) -> PastCall:
    return PastCall(tool=tool, args=args, ran=True, undone=undone)


def failed(tool: str, **args: object) -> PastCall:
    return PastCall(tool=tool, args=args, ran=False, undone=False)


# --- the language -----------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n   # and another\n"])
def test_an_empty_rulebook_is_valid_and_allows_everything(text: str) -> None:
    rulebook = parse_rulebook(text)
    assert rulebook.rules == ()
    assert rulebook.source is None
    assert rulebook.refusal("charge_card", {"amount": 10**9}, []) is None


def test_each_kind_of_rule_parses_to_data() -> None:
    rulebook = parse_rulebook(
        "# the desk\n"
        "charge_card only after get_order   # look before you charge\n"
        "refund_card only after charge_card with same order, amount\n"
        "cap charge_card.amount <= 500.50\n"
        "cap charge_card.amount total < 1000 per session\n"
        "cap send_receipt calls <= 2 per session\n"
    )
    assert rulebook.rules == (
        OrderRule("charge_card", "get_order", (), 2),
        OrderRule("refund_card", "charge_card", ("order", "amount"), 3),
        ArgumentCap("charge_card", "amount", "<=", Decimal("500.50"), 4),
        TotalCap("charge_card", "amount", "<", Decimal("1000"), 5),
        CallsCap("send_receipt", "<=", Decimal(2), 6),
    )


def test_rules_record_where_they_name_tools_and_arguments() -> None:
    (rule,) = parse_rulebook("cap charge_card.amount >= 1").rules
    assert [(r.kind, r.tool, r.name, r.line, r.column) for r in rule.references] == [
        ("tool", "charge_card", "charge_card", 1, 5),
        ("arg", "charge_card", "amount", 1, 17),
    ]


@pytest.mark.parametrize(
    ("text", "line", "column", "expected"),
    [
        ("charge_card only before get_order", 1, 18, "expected 'after', got 'before'"),
        ("\n\ncap charge_card.amount <=", 3, 26, "expected a number, got the end of the line"),
        ("cap charge_card.amount = 5", 1, 24, "unexpected character '='"),
        ("cap charge_card.amount <= five", 1, 27, "expected a number, got 'five'"),
        ("cap charge_card calls <= 1.5 per session", 1, 26, "expected a whole number of calls"),
        ("cap charge_card calls <= 1 per run", 1, 32, "expected 'session', got 'run'"),
        ("cap charge_card calls <= 1", 1, 27, "expected 'per', got the end of the line"),
        ("cap charge_card amount <= 1", 1, 17, "expected '.' and an argument name, or 'calls'"),
        ("refund_card only after charge_card with same", 1, 45, "expected an argument name"),
        ("refund_card only after charge_card with order", 1, 41, "expected 'same', got 'order'"),
        ("a only after b extra # comment", 1, 16, "expected 'with', got 'extra'"),
        ("cap x.y <= 5 more", 1, 14, "expected the end of the line, got 'more'"),
        ("500 only after b", 1, 1, "expected a tool name, 'cap' or 'require', got '500'"),
    ],
)
def test_a_line_that_does_not_parse_names_its_line_and_column(
    text: str, line: int, column: int, expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_rulebook(text, "desk/policy.co")
    error = caught.value
    assert (error.file, error.line, error.column) == ("desk/policy.co", line, column)
    assert expected in error.expected
    assert str(error) == f"desk/policy.co:{line}:{column}: {error.expected}"


def test_load_rulebook_keeps_its_path_and_names_it_in_refusals(tmp_path: Path) -> None:
    path = tmp_path / "policy.co"
    path.write_text("cap charge_card.amount <= 100\n")
    rulebook = load_rulebook(path)
    assert rulebook.source == path
    assert rulebook.refusal("charge_card", {"amount": 101}, []) == (
        "its amount is 101, and line 1 of policy.co allows at most 100"
    )


def test_load_rulebook_of_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the rulebook"):
        load_rulebook(tmp_path / "absent.co")


# --- what the rules refuse --------------------------------------------------------------


def test_an_order_rule_needs_an_earlier_call_that_ran_and_was_not_undone() -> None:
    rulebook = parse_rulebook("charge_card only after get_order")
    refusal = (
        "line 1 of the rulebook allows it only after get_order, and this session has no "
        "get_order that ran and was not undone"
    )
    assert rulebook.refusal("charge_card", {"order": 1}, []) == refusal
    assert rulebook.refusal("charge_card", {"order": 1}, [failed("get_order")]) == refusal
    assert rulebook.refusal("charge_card", {"order": 1}, [ran("get_order")]) is None
    assert rulebook.refusal("get_order", {"order": 1}, []) is None  # other tools are free


def test_an_order_rule_with_same_arguments_matches_them() -> None:
    rulebook = parse_rulebook("refund_card only after charge_card with same order, amount")
    call = {"order": 4411, "amount": 40.0}
    charged = [ran("charge_card", order=4411, amount=40.0)]
    assert rulebook.refusal("refund_card", call, charged) is None
    # The record hands arguments back as JSON: "4411" and 4411 are one order.
    charged_as_text = [ran("charge_card", order="4411", amount="40.00")]
    assert rulebook.refusal("refund_card", call, charged_as_text) is None
    refusal = rulebook.refusal("refund_card", call, [ran("charge_card", order=4412, amount=40.0)])
    assert refusal == (
        "line 1 of the rulebook allows it only after charge_card with the same order and "
        "amount, and this session has no charge_card with order 4411 and amount 40.0 that ran "
        "and was not undone"
    )
    refunded_already = [ran("charge_card", undone=True, order=4411, amount=40.0)]
    assert rulebook.refusal("refund_card", call, refunded_already) is not None
    more_than_charged = {"order": 4411, "amount": 41.0}
    assert rulebook.refusal("refund_card", more_than_charged, charged) is not None


@pytest.mark.parametrize(
    ("op", "allowed", "refused", "bound"),
    [
        ("<=", "500", "500.01", "at most"),
        ("<", "499.99", "500", "less than"),
        (">=", "500", "499", "at least"),
        (">", "501", "500", "more than"),
    ],
)
def test_an_argument_cap_compares_exactly(op: str, allowed: str, refused: str, bound: str) -> None:
    rulebook = parse_rulebook(f"cap charge_card.amount {op} 500")
    assert rulebook.refusal("charge_card", {"amount": Decimal(allowed)}, []) is None
    assert rulebook.refusal("charge_card", {"amount": float(allowed)}, []) is None
    assert rulebook.refusal("charge_card", {"amount": Decimal(refused)}, []) == (
        f"its amount is {refused}, and line 1 of the rulebook allows {bound} 500"
    )


def test_an_argument_cap_ignores_a_left_out_argument_and_refuses_a_non_number() -> None:
    rulebook = parse_rulebook("cap charge_card.amount <= 500")
    assert rulebook.refusal("charge_card", {"order": 1}, []) is None
    assert rulebook.refusal("charge_card", {"amount": "lots"}, []) == (
        "its amount is 'lots', not a number, and line 1 of the rulebook caps it"
    )
    assert rulebook.refusal("charge_card", {"amount": True}, []) is not None


def test_a_total_cap_adds_every_earlier_call_that_ran_undone_or_not() -> None:
    rulebook = parse_rulebook("cap charge_card.amount total <= 100 per session")
    history = [
        ran("charge_card", amount=40),
        ran("charge_card", undone=True, amount=30),  # refunded, and still counted
        failed("charge_card", amount=1000),  # never ran: not counted
        ran("refund_card", amount=30),
    ]
    assert rulebook.refusal("charge_card", {"amount": 30}, history) is None
    assert rulebook.refusal("charge_card", {"amount": 31}, history) == (
        "its amount would total 101 in this session, and line 1 of the rulebook allows a "
        "total of at most 100 per session"
    )


def test_a_calls_cap_counts_calls_that_ran_including_this_one() -> None:
    rulebook = parse_rulebook("cap send_receipt calls <= 2 per session")
    assert rulebook.refusal("send_receipt", {}, [ran("send_receipt")]) is None
    one_ran_one_failed = [ran("send_receipt"), failed("send_receipt")]
    assert rulebook.refusal("send_receipt", {}, one_ran_one_failed) is None
    assert rulebook.refusal("send_receipt", {}, [ran("send_receipt")] * 2) == (
        "this would be its call 3 in this session, and line 1 of the rulebook allows at most 2 "
        "per session"
    )


def test_the_first_rule_that_refuses_speaks() -> None:
    rulebook = parse_rulebook("cap charge_card.amount <= 100\ncharge_card only after get_order\n")
    assert "line 1" in (rulebook.refusal("charge_card", {"amount": 101}, []) or "")
    assert "line 2" in (rulebook.refusal("charge_card", {"amount": 99}, []) or "")


# --- the shop's policy ------------------------------------------------------------------


def charge_then_undo(history: list[PastCall], rulebook: Rulebook) -> None:
    """One run of the chapter's failed order, as the record would see it, checked call by call."""
    steps: list[tuple[str, dict[str, Any]]] = [
        ("charge_card", {"order": 4411, "amount": 40.00}),
        ("update_crm", {"order": 4411}),
        ("send_receipt", {"order": 4411}),
        ("provision_account", {"order": 4411}),
    ]
    for tool, args in steps:
        assert rulebook.refusal(tool, args, history) is None, tool
        history.append(PastCall(tool, args, ran=tool != "provision_account", undone=False))
    undos: list[tuple[str, dict[str, Any], str]] = [
        ("restore_crm", {"order": 4411, "previous_status": "unpaid"}, "update_crm"),
        ("refund_card", {"order": 4411, "amount": 40.00}, "charge_card"),
    ]
    for undo, args, undoes in undos:
        assert rulebook.refusal(undo, args, history) is None, undo
        history.append(PastCall(undo, args, ran=True, undone=False))
        done = next(i for i, p in enumerate(history) if p.tool == undoes and not p.undone)
        history[done] = PastCall(undoes, history[done].args, ran=True, undone=True)


def test_the_shop_policy_allows_every_run_of_the_demo_however_often_it_runs() -> None:
    rulebook = load_rulebook(SHOP_POLICY)
    history: list[PastCall] = []
    for _ in range(5):  # `make demo` keeps the sessions' history between runs
        charge_then_undo(history, rulebook)
    assert rulebook.refusal("get_order", {"order": 4411}, history) is None


def test_the_shop_policy_refuses_what_it_should() -> None:
    rulebook = load_rulebook(SHOP_POLICY)
    charged = [ran("charge_card", order=4411, amount=40.0)]
    assert rulebook.refusal("charge_card", {"order": 4411, "amount": 500.01}, []) is not None
    assert rulebook.refusal("charge_card", {"order": 4411, "amount": 0}, []) is not None
    assert rulebook.refusal("refund_card", {"order": 4411, "amount": 40.0}, []) is not None
    assert rulebook.refusal("refund_card", {"order": 9, "amount": 40.0}, charged) is not None
    assert rulebook.refusal("refund_card", {"order": 4411, "amount": 400.0}, charged) is not None
    refunded = [ran("charge_card", undone=True, order=4411, amount=40.0)]
    assert rulebook.refusal("refund_card", {"order": 4411, "amount": 40.0}, refunded) is not None
    restore = {"order": 4411, "previous_status": "unpaid"}
    assert rulebook.refusal("restore_crm", restore, []) is not None
    assert rulebook.refusal("restore_crm", restore, [ran("update_crm", order=4411)]) is None


# --- require: where an argument's value came from -----------------------------------------


def test_a_require_rule_parses_to_data_with_its_references() -> None:
    [rule] = parse_rulebook("require charge_card.amount from turn or step  # money\n").rules
    assert rule == SourceRule("charge_card", "amount", ("turn", "step"), 1)
    assert [(r.kind, r.name, r.column) for r in rule.references] == [
        ("tool", "charge_card", 9),
        ("arg", "amount", 21),
    ]


@pytest.mark.parametrize(
    ("text", "column", "expected"),
    [
        ("require charge_card.amount from model", 33, "expected 'turn' or 'step', got 'model'"),
        ("require charge_card.amount from turn or", 40, "expected 'turn' or 'step', got the end"),
        ("require charge_card.amount turn", 28, "expected 'from', got 'turn'"),
        ("require charge_card from turn", 21, "expected '.' and an argument name, got 'from'"),
        ("require charge_card.amount from turn step", 38, "expected the end of the line"),
    ],
)
def test_a_require_rule_that_does_not_parse_names_its_column(
    text: str, column: int, expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_rulebook(text, "policy.co")
    assert (caught.value.line, caught.value.column) == (1, column)
    assert expected in caught.value.expected


def test_a_require_rule_refuses_a_value_from_a_source_it_does_not_allow() -> None:
    rulebook = parse_rulebook(
        "require charge_card.amount from turn\nrequire charge_card.order from turn or step\n",
        "policy.co",
    )
    args = {"order": "4411", "amount": "40.00"}
    assert rulebook.refusal("charge_card", args, [], {"order": "turn", "amount": "turn"}) is None
    from_step = {"order": "step 1 (get_order)", "amount": "step 1 (get_order)"}
    assert rulebook.refusal("charge_card", args, [], from_step) == (
        "its amount came from step 1 (get_order), and line 1 of policy.co requires it to come "
        "from the turn"
    )
    assert rulebook.refusal("charge_card", args, [], {"amount": "turn", "order": "model"}) == (
        "its order came from the model alone, and line 2 of policy.co requires it to come from "
        "the turn or an earlier step"
    )
    # Unsaid sources count as the model's; a left-out argument is not checked.
    assert rulebook.refusal("charge_card", {"amount": "1"}, []) is not None
    assert rulebook.refusal("charge_card", {}, []) is None
    assert rulebook.refusal("refund_card", args, []) is None
