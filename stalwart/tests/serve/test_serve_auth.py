"""The reverse proxy's header as the sign-in, and the users file's verifiers."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from stalwart.serve import Service, create_app
from stalwart.serve.users import Users, check_password, make_verifier

from .serve_support import FIRST_ORDER, InstantClock, write_desk

pytestmark = pytest.mark.unit


def test_a_reverse_proxys_header_names_the_user(tmp_path: Path) -> None:
    desk = write_desk(tmp_path / "desk", serve="  auth_header: X-Forwarded-User\n")
    svc = Service(desk.config(), clock=InstantClock(), secret=b"s")
    with TestClient(create_app(svc)) as client:
        assert client.get("/api/me").json()["code"] == "not_signed_in"
        login = client.get("/login")
        assert "trusts the reverse proxy&#39;s X-Forwarded-User header" in login.text
        assert 'name="password"' not in login.text
        as_carol = {"X-Forwarded-User": "carol"}
        me = client.get("/api/me", headers=as_carol).json()
        assert me["user"] == "carol"
        headers = {**as_carol, "X-CSRF-Token": me["csrf"]}
        reply = client.post(
            "/api/sessions/carol~s-p/turns", json={"text": FIRST_ORDER}, headers=headers
        ).json()
        assert reply["waiting"][0]["tool"] == "charge_card"
        as_dave = {"X-Forwarded-User": "dave"}
        assert client.get("/api/sessions/carol~s-p", headers=as_dave).status_code == 404
        forged = client.post(  # carol's token is not dave's
            "/api/sessions/dave~s-q/turns", json={"text": "hi"},
            headers={**as_dave, "X-CSRF-Token": me["csrf"]},
        )  # fmt: skip
        assert forged.json()["code"] == "csrf_refused"


def test_a_verifier_is_salted_and_checked_whole(tmp_path: Path) -> None:
    one, two = make_verifier("pw"), make_verifier("pw")
    assert one != two and one.startswith("scrypt$16384$8$1$")
    assert check_password("pw", one) and not check_password("pw ", one)
    assert not check_password("pw", one[:-2]) and not check_password("pw", "md5$x")
    users = Users(tmp_path / "users.txt")
    users.set("erin", "first")
    users.set("erin", "second")
    assert list(users.verifiers()) == ["erin"]
    assert users.check("erin", "second") and not users.check("erin", "first")
