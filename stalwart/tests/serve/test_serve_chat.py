"""`stalwart chat` in a real terminal: a pty, a real subprocess, single-key answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from terminal import Terminal

from .serve_support import (
    FIRST_ORDER,
    FIRST_REPLY,
    OPERATOR_ENV,
    OPERATOR_TOKEN,
    SECOND_REPLY,
    STALWART,
    write_desk,
)

pytestmark = pytest.mark.acceptance


def test_chat_in_a_terminal_answers_with_single_keys(tmp_path: Path) -> None:
    desk = write_desk(tmp_path / "desk")
    chat = Terminal(STALWART, "chat", str(desk.yaml), "--user", "alice", cwd=desk.folder,
                    env={OPERATOR_ENV: OPERATOR_TOKEN})  # fmt: skip
    try:
        chat.expect("you> ")
        chat.send(FIRST_ORDER + "\n")
        chat.expect("Run charge_card(order=4411, amount=40.0)?")
        chat.expect("[a] approve  [s] skip  [c] cancel all")
        chat.send("q")  # not a key of this question: said so, and asked again
        chat.expect("'q' is none of the keys")
        chat.send("a")
        chat.expect("running charge_card(order=4411, amount=40.0)")  # as its question writes it
        chat.expect("Run update_crm(order=4411)?")
        chat.send("a")
        chat.expect("Run provision_account(order=4411)?")
        chat.send("a")
        chat.expect(FIRST_REPLY)
        chat.expect("you> ")
        chat.send(FIRST_ORDER.replace("update the crm", "send the receipt") + "\n")
        chat.expect("[a] approve")
        chat.send("a")
        before = chat.expect("[a] approve")
        assert "Nothing can undo this step once it runs." in before
        chat.send("a")
        chat.expect("[a] approve")
        chat.send("a")
        chat.expect(SECOND_REPLY)
        chat.expect("you> ")
        chat.send("ship the parcel for order 3\n")
        chat.expect("[a] approve")
        chat.send("a")
        chat.expect("Did ship_parcel take effect? The call was sent and no answer came back.")
        chat.expect("[h] happened  [n] did not happen")
        chat.send("h")
        chat.expect("you> ")
        chat.send("\n")
    finally:
        code = chat.close()
    assert code == 0
