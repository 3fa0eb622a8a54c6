"""`stalwart chat` in a real terminal: a pty, a real subprocess, single-key answers."""

from __future__ import annotations

import os
import select
import subprocess
from pathlib import Path

import pytest

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


class Terminal:
    """A program on a pty: `expect` reads until a text shows (bounded), `send` types."""

    def __init__(self, *command: str, cwd: Path) -> None:
        self.master, slave = os.openpty()
        self.process = subprocess.Popen(
            command, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, close_fds=True,
            env={**os.environ, OPERATOR_ENV: OPERATOR_TOKEN, "TERM": "xterm"},
        )  # fmt: skip
        os.close(slave)
        self.seen = ""

    def expect(self, text: str, limit_secs: float = 30.0) -> str:
        while text not in self.seen:
            ready, _, _ = select.select([self.master], [], [], limit_secs)
            if not ready:
                raise AssertionError(f"never saw {text!r}; the screen:\n{self.seen}")
            try:
                chunk = os.read(self.master, 4096).decode("utf-8", "replace")
            except OSError:  # the program ended
                raise AssertionError(f"ended before {text!r}; the screen:\n{self.seen}") from None
            self.seen += chunk.replace("\r\n", "\n")
        before, _, after = self.seen.partition(text)
        self.seen = after
        return before

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode("utf-8"))

    def close(self) -> int:
        try:
            return self.process.wait(20)
        finally:
            os.close(self.master)


def test_chat_in_a_terminal_answers_with_single_keys(tmp_path: Path) -> None:
    desk = write_desk(tmp_path / "desk")
    chat = Terminal(STALWART, "chat", str(desk.yaml), "--user", "alice", cwd=desk.folder)
    try:
        chat.expect("you> ")
        chat.send(FIRST_ORDER + "\n")
        chat.expect("Run charge_card(order=4411, amount=40.0)?")
        chat.expect("[a] approve  [s] skip  [c] cancel all")
        chat.send("q")  # not a key of this question: said so, and asked again
        chat.expect("'q' is none of the keys")
        chat.send("a")
        chat.expect("running charge_card(amount=40.0, order=4411)")  # as recorded
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
