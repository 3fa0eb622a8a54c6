"""`stalwart serve` and `stalwart users set`, run as a person runs them: real subprocesses."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
import pytest

from stalwart.record import open_store

from .serve_support import (
    FIRST_ORDER,
    OPERATOR_ENV,
    OPERATOR_TOKEN,
    PASSWORDS,
    STALWART,
    Served,
    write_desk,
)

pytestmark = pytest.mark.acceptance


def test_serve_prints_its_address_and_serves_the_api_on_the_yamls_record(
    tmp_path: Path,
) -> None:
    desk = write_desk(tmp_path / "desk", record="desk.sqlite")
    served = Served(desk.yaml, env={OPERATOR_ENV: OPERATOR_TOKEN})
    try:
        assert served.url.startswith("http://127.0.0.1:")
        with httpx.Client(base_url=served.url) as http:
            assert "/api/sessions/{session}/turns" in http.get("/openapi.json").json()["paths"]
            login = http.post("/api/login", json={"user": "bob", "password": PASSWORDS["bob"]})
            headers = {"X-CSRF-Token": login.json()["csrf"]}
            reply = http.post(
                "/api/sessions/bob~s-cli/turns", json={"text": FIRST_ORDER}, headers=headers
            ).json()
            assert reply["waiting"][0]["tool"] == "charge_card"
    finally:
        served.stop()
    store = open_store(str(desk.folder / "desk.sqlite"))
    try:
        record = store.load("bob~s-cli")
        assert record is not None and record.session.user == "bob"
    finally:
        store.close()


def test_users_set_writes_a_verifier_never_the_password(tmp_path: Path) -> None:
    users = tmp_path / "users.txt"
    for password in ("first", "second"):
        done = subprocess.run(
            [STALWART, "users", "set", str(users), "carol",
             "--password-stdin"],
            input=f"{password}\n", capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    text = users.read_text()
    assert text.count("carol:scrypt$") == 1
    assert "second" not in text and "first" not in text
    assert oct(users.stat().st_mode & 0o777) == "0o600"
    from stalwart.serve.users import Users

    assert Users(users).check("carol", "second")
    assert not Users(users).check("carol", "first")
    assert not Users(users).check("nobody", "second")


@pytest.mark.parametrize("name", ["", "a b", "x" * 65])
def test_users_set_refuses_a_bad_name(tmp_path: Path, name: str) -> None:
    done = subprocess.run(
        [STALWART, "users", "set", str(tmp_path / "u"), name,
         "--password-stdin"],
        input="pw\n", capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
