"""Issue 11's points through the `stalwart` CLI in a subprocess, on a real terminal (a pty)
and with pipes only (`screen`): a person at a terminal is held to the same rules as a script
with pipes, and is shown the same texts.

Points 2 (sessions) and 5 (bounded input) run here on a terminal, beside their tests with
pipes (test_sessions, test_limits); point 1 (the operator token) runs both ways in
test_operator. Points 3, 4, 6, 7 and 8 run here both ways.

On the main these were written against: `stalwart chat --user bob --session alice` reached
alice's session; a key pressed for a question another chat had answered meanwhile ended
`stalwart chat` with a traceback (StaleAnswer); a right-to-left override in a quoted value
reached the screen raw, and a fullwidth number was read as a number; a number of any length
was read; agent.yaml could name a rulebook anywhere on the disk, or let a write run unasked
with `confirm: false`; and the atomic-run sentence was shown when nothing in the run could
ever be undone.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_project
from terminal import SCREENS, Piped, Screen, Terminal

from stalwart import limits
from stalwart.config.yamldoc import MAX_ALIASES
from stalwart.texts.serve import CHAT_REASON_PROMPT

pytestmark = pytest.mark.acceptance

TERMINAL = SCREENS[0]
KEYS = "[a] approve  [s] skip  [c] cancel all"
# The seed's texts, to the character.
IRREVERSIBLE = "Nothing can undo this step once it runs."
IN_ATOMIC_RUN = "Nothing undoes this step, and the steps after it cannot undo it."

NOTES = """
from stalwart import tool


@tool(writes=True, irreversible=True)
def send_note(to: str) -> dict:
    return {"sent_to": to}


@tool(writes=True, irreversible=True)
def paint_fence(order: int) -> dict:
    return {"order": order}
"""


@pytest.fixture(params=SCREENS, ids=str)
def screen(request: pytest.FixtureRequest) -> Screen:
    """On a terminal, then with pipes only."""
    chosen: Screen = request.param
    return chosen


def _chat(screen: Screen, folder: Path, *args: str) -> Terminal | Piped:
    chat = screen.conversation("chat", str(folder / "agent.yaml"), *args, cwd=folder)
    chat.expect("you> ")
    return chat


def _answer(chat: Terminal | Piped, key: str) -> None:
    chat.expect(KEYS)  # the keys are read from here on
    _key(chat, key)


def _key(chat: Terminal | Piped, key: str) -> None:
    """Press `key`; a skip or a cancel all then asks why, and Enter gives no reason."""
    chat.send(key)
    if key in ("s", "c"):
        chat.expect(CHAT_REASON_PROMPT.rstrip())
        chat.send("\n")


def _ends(shown: str, lines: str) -> bool:
    """`shown` ends with these whole lines (what a terminal echoed before them aside)."""
    return f"\n{shown}".endswith(f"\n{lines}")


def _leave(chat: Terminal | Piped) -> str:
    """Leave at the next prompt; what showed until it."""
    try:
        shown = chat.expect("you> ")
        chat.send("\n")
    finally:
        code = chat.close()
    assert code == 0, chat.seen
    return shown


# --- point 2: sessions nobody can squat ---


def test_a_session_name_on_a_terminal_reaches_only_the_users_own(tmp_path: Path) -> None:
    project = write_project(tmp_path)
    bob = _chat(TERMINAL, project.folder, "--user", "bob", "--session", "alice")
    try:
        bob.send("paint the fence for order 1\n")
        bob.expect("Run paint_fence(order=1)?")  # left waiting in bob's own "alice"
        _answer(bob, "c")
    finally:
        _leave(bob)
    alice = _chat(TERMINAL, project.folder, "--user", "alice")
    try:
        alice.send("plant a tree for order 2\n")
        before = alice.expect("Run plant_tree(order=2)?")
        assert "not_your_session" not in before and "paint_fence" not in before
        _answer(alice, "a")
        alice.expect("plant_tree returned")
    finally:
        _leave(alice)


# --- point 3: an answer is bound to its question ---


def test_a_key_for_a_question_answered_elsewhere_is_refused_and_what_waits_now_is_asked(
    screen: Screen, tmp_path: Path
) -> None:
    write_project(tmp_path)
    cancelled = (
        "This run stopped: you cancelled it at plant_tree. "
        "Undone, latest first: paint_fence (by unpaint_fence)."
    )
    first = _chat(screen, tmp_path, "--user", "u")
    try:
        first.send("paint the fence for order 1, then plant a tree for order 1\n")
        first.expect("Run paint_fence(order=1)?")
        first.expect(KEYS)
        late = screen.conversation("chat", str(tmp_path / "agent.yaml"), "--user", "u",
                                   cwd=tmp_path)  # fmt: skip
        try:
            late.expect("Run paint_fence(order=1)?")  # the same question, on a second screen
            late.expect(KEYS)
            first.send("a")
            first.expect("Run plant_tree(order=1)?")
            first.expect(KEYS)
            late.send("a")  # for paint_fence's question, answered on the first meanwhile
            refused = late.expect(KEYS)
            assert "Traceback" not in refused
            assert "stale_answer: The question answered (u#1/1/confirm/" in refused
            assert (
                "no longer waits; nothing was changed. Waiting now: 'Run plant_tree(order=1)?'"
                in refused
            )
            assert _ends(refused, "Run plant_tree(order=1)?\n")  # asked afresh
            _key(late, "c")
            late.expect(cancelled)  # so the stale key approved nothing: plant_tree never ran
        finally:
            _leave(late)
        first.send("a")  # for plant_tree's question, which the cancel ended
        refused = first.expect("you> ")
        assert "stale_answer: " in refused and "nothing was changed. Nothing waits now." in refused
        assert _ends(refused, f"{cancelled}\n")  # how the run ended, where it ended
        first.send("\n")
    finally:
        code = first.close()
    assert code == 0, first.seen


# --- point 4: what a person is shown is what runs ---


def test_a_hidden_character_is_shown_escaped_and_a_fullwidth_number_is_not_read(
    screen: Screen, tmp_path: Path
) -> None:
    write_project(tmp_path, tools_source=NOTES, tool_names=["send_note", "paint_fence"])
    chat = _chat(screen, tmp_path, "--user", "u")
    try:
        chat.send('send the note to "alice\u202efdp.exe"\n')
        if screen.terminal:
            chat.expect('fdp.exe"\n')  # the terminal's echo of what the person typed
        before = chat.expect(IRREVERSIBLE)
        assert 'Run send_note(to="alice\\u202efdp.exe")?' in before
        assert "\u202e" not in before
        _answer(chat, "a")
        chat.expect("send_note returned ")
        shown = chat.expect("you> ")
        assert shown.startswith('{"sent_to":"alice\\u202efdp.exe"}')
        assert "\u202e" not in shown
        chat.send("paint the fence for order \uff14\uff14\uff11\uff11\n")  # fullwidth 4411
        unread = chat.expect("you> ")
        assert "nothing ran" in unread and "Run paint_fence" not in unread
        chat.send("paint the fence for order 4411\n")
        chat.expect("Run paint_fence(order=4411)?")
        _answer(chat, "s")
    finally:
        _leave(chat)


# --- point 5: bounded input ---


def test_a_number_past_its_digits_is_refused_on_a_terminal_and_the_chat_goes_on(
    tmp_path: Path,
) -> None:
    write_project(tmp_path, tools_source=NOTES, tool_names=["send_note", "paint_fence"])
    chat = _chat(TERMINAL, tmp_path, "--user", "u")
    try:
        chat.send(f"paint the fence for order {'7' * (limits.MAX_NUMBER_DIGITS + 1)}\n")
        chat.expect("input_refused: ")
        chat.send("paint the fence for order 2\n")
        chat.expect("Run paint_fence(order=2)?")
        _answer(chat, "a")
        chat.expect("paint_fence returned")
    finally:
        _leave(chat)


# --- point 6: an agent.yaml from somewhere else ---


def test_a_rulebook_outside_the_folder_is_refused_unless_told(
    screen: Screen, tmp_path: Path
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    project = write_project(folder)
    (tmp_path / "outside.co").write_text("")
    yaml = project.yaml.read_text().replace("rulebook: ./policy.co", "rulebook: ../outside.co")
    project.yaml.write_text(yaml)
    refused = screen.run(["lint", str(project.yaml)], cwd=folder)
    assert refused.code == 2, refused
    assert "rulebook: expected a path inside the project folder" in screen.errors(refused)
    allowed = screen.run(["--allow-outside-project", "lint", str(project.yaml)], cwd=folder)
    assert allowed.code == 0, allowed
    assert "expected a path inside" not in allowed.shown + allowed.stderr


def test_an_alias_bomb_is_refused_before_it_expands(screen: Screen, tmp_path: Path) -> None:
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, 9)]
    (tmp_path / "agent.yaml").write_text("\n".join(lines) + "\n")  # 9**9 values, 500 bytes
    refused = screen.run(["lint", str(tmp_path / "agent.yaml")], cwd=tmp_path)
    assert refused.code == 2, refused
    assert f"more than {MAX_ALIASES} aliases" in screen.errors(refused)
    assert "Traceback" not in refused.shown + refused.stderr


# --- point 7: irreversible texts exactly when they apply ---


def test_the_atomic_run_sentence_shows_only_where_another_write_would_be_undone(
    screen: Screen, tmp_path: Path
) -> None:
    write_project(tmp_path)
    chat = _chat(screen, tmp_path, "--user", "u")
    try:
        # Two irreversible writes in one turn: nothing in the run could ever be undone.
        chat.send("ring the bell for order 1, then ring the bell for order 2\n")
        for order in (1, 2):
            before = chat.expect(KEYS)
            assert _ends(before, f"Run ring_bell(order={order})?\n{IRREVERSIBLE}\n"), before
            chat.send("a")
        done = chat.expect("you> ")
        # two calls of one tool: the reply names each by what tells them apart (issue 28)
        assert "ring_bell(order=1) returned" in done and "ring_bell(order=2) returned" in done
        # An earlier write that a failure would undo: the sentence says so.
        chat.send("paint the fence for order 4, then ring the bell for order 4\n")
        before = chat.expect(KEYS)
        assert _ends(before, "Run paint_fence(order=4)?\n"), before
        chat.send("a")
        before = chat.expect(KEYS)
        assert _ends(before, f"Run ring_bell(order=4)? {IN_ATOMIC_RUN}\n{IRREVERSIBLE}\n"), before
        _key(chat, "c")
        chat.expect(
            "This run stopped: you cancelled it at ring_bell. "
            "Undone, latest first: paint_fence (by unpaint_fence)."
        )
    finally:
        _leave(chat)


# --- point 8: confirm: false ---


def test_confirm_false_for_a_write_is_refused_and_confirm_never_is_linted(
    screen: Screen, tmp_path: Path
) -> None:
    project = write_project(tmp_path, facts="  - paint_fence: {confirm: false}\n")
    refused = screen.run(["chat", str(project.yaml), "--user", "u"], cwd=tmp_path)
    assert refused.code == 2, refused
    assert "say confirm: never under paint_fence" in screen.errors(refused)
    assert "you> " not in refused.shown  # refused before any turn is read
    write_project(
        tmp_path, facts="  - paint_fence: {confirm: never}\n  - ring_bell: {confirm: never}\n"
    )
    linted = screen.run(["lint", str(project.yaml)], cwd=tmp_path)
    assert linted.code == 0, linted
    assert "paint_fence: write_without_confirmation" in linted.shown
    assert "ring_bell: irreversible_without_confirmation" in linted.shown
