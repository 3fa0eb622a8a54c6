"""Issue 11's points through the CLI on a real terminal (a pty), beside their tests with no
terminal (test_sessions, test_limits, test_untrusted_yaml): a person at a terminal is held to
the same rules as a script with pipes.

On the main these were written against: `stalwart chat --user bob --session alice` reached
alice's session; a right-to-left override in a quoted value reached the screen raw; a number
of any length was read; and agent.yaml could name a rulebook anywhere on the disk, or let a
write run unasked with `confirm: false`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import write_project
from terminal import Terminal, on_terminal

from stalwart import limits

pytestmark = pytest.mark.acceptance

STALWART = str(Path(sys.executable).parent / "stalwart")

NOTES = """
from stalwart import tool


@tool(writes=True, irreversible=True)
def send_note(to: str) -> dict:
    return {"sent_to": to}


@tool(writes=True, irreversible=True)
def paint_fence(order: int) -> dict:
    return {"order": order}
"""


def _chat(folder: Path, *args: str) -> Terminal:
    chat = Terminal(STALWART, "chat", str(folder / "agent.yaml"), *args, cwd=folder)
    chat.expect("you> ")
    return chat


def _answer(chat: Terminal, key: str) -> None:
    chat.expect("[a] approve  [s] skip  [c] cancel all")  # the keys are read from here on
    chat.send(key)


def _leave(chat: Terminal) -> str:
    """Leave at the next prompt; what the terminal showed until it."""
    try:
        shown = chat.expect("you> ")
        chat.send("\n")
    finally:
        code = chat.close()
    assert code == 0
    return shown


def test_a_session_name_on_a_terminal_reaches_only_the_users_own(tmp_path: Path) -> None:
    project = write_project(tmp_path)
    bob = _chat(project.folder, "--user", "bob", "--session", "alice")
    try:
        bob.send("paint the fence for order 1\n")
        bob.expect("Run paint_fence(order=1)?")  # left waiting in bob's own "alice"
        _answer(bob, "c")
    finally:
        _leave(bob)
    alice = _chat(project.folder, "--user", "alice")
    try:
        alice.send("plant a tree for order 2\n")
        before = alice.expect("Run plant_tree(order=2)?")
        assert "not_your_session" not in before and "paint_fence" not in before
        _answer(alice, "a")
        alice.expect("plant_tree returned")
    finally:
        _leave(alice)


def test_a_hidden_character_reaches_the_terminal_escaped(tmp_path: Path) -> None:
    write_project(tmp_path, tools_source=NOTES, tool_names=["send_note", "paint_fence"])
    chat = _chat(tmp_path, "--user", "u")
    try:
        chat.send('send the note to "alice\u202efdp.exe"\n')
        chat.expect('fdp.exe"\n')  # the terminal's echo of what the person typed
        before = chat.expect("Nothing can undo this step once it runs.")
        assert 'Run send_note(to="alice\\u202efdp.exe")?' in before
        assert "\u202e" not in before
        _answer(chat, "a")
        chat.expect("send_note returned ")
    finally:
        shown = _leave(chat)
    assert shown.startswith('{"sent_to":"alice\\u202efdp.exe"}')
    assert "\u202e" not in shown


def test_a_number_past_its_digits_is_refused_on_a_terminal_and_the_chat_goes_on(
    tmp_path: Path,
) -> None:
    write_project(tmp_path, tools_source=NOTES, tool_names=["send_note", "paint_fence"])
    chat = _chat(tmp_path, "--user", "u")
    try:
        chat.send(f"paint the fence for order {'7' * (limits.MAX_NUMBER_DIGITS + 1)}\n")
        chat.expect("input_refused: ")
        chat.send("paint the fence for order 2\n")
        chat.expect("Run paint_fence(order=2)?")
        _answer(chat, "a")
        chat.expect("paint_fence returned")
    finally:
        _leave(chat)


def test_a_rulebook_outside_the_folder_is_refused_on_a_terminal_unless_told(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    project = write_project(folder)
    (tmp_path / "outside.co").write_text("")
    yaml = project.yaml.read_text().replace("rulebook: ./policy.co", "rulebook: ../outside.co")
    project.yaml.write_text(yaml)
    refused = on_terminal(["lint", str(project.yaml)], cwd=folder)
    assert refused.code == 2, refused
    assert "rulebook: expected a path inside the project folder" in refused.shown
    allowed = on_terminal(["--allow-outside-project", "lint", str(project.yaml)], cwd=folder)
    assert allowed.code == 0, allowed


def test_confirm_false_for_a_write_is_refused_on_a_terminal(tmp_path: Path) -> None:
    project = write_project(tmp_path, facts="  - paint_fence: {confirm: false}\n")
    refused = on_terminal(["chat", str(project.yaml), "--user", "u"], cwd=tmp_path)
    assert refused.code == 2, refused
    assert "say confirm: never under paint_fence" in refused.shown
