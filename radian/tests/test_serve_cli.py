"""`radian arc serve` as a person runs it: the installed command in a subprocess."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from conftest import run_env
from serve_support import write_fleet

from radian.arc import texts
from radian.arc.clock import FakeClock, format_utc

pytestmark = pytest.mark.acceptance

TOKEN = "a-token-for-the-cli"


def environment(clock: FakeClock, **extra: str) -> dict[str, str]:
    env = {**run_env(), "RADIAN_ARC_FAKE_NOW": format_utc(clock.now()), **extra}
    if "RADIAN_ARC_SERVE_TOKEN" not in extra:
        env.pop("RADIAN_ARC_SERVE_TOKEN", None)
    return env


def get(url: str, token: str | None = None) -> Any:
    """A GET of the API (the standard library's client: the test needs no extra)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as got:
        return json.loads(got.read())


def test_another_host_without_a_token_is_refused_in_one_line(
    tmp_path: Path, clock: FakeClock, radian_bin: Path
) -> None:
    write_fleet(tmp_path, clock)
    command = [str(radian_bin), "arc", "--repo", str(tmp_path), "serve", "--host", "0.0.0.0"]
    done = subprocess.run(command, capture_output=True, text=True, env=environment(clock),
                          timeout=60)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == texts.serve_needs_token("0.0.0.0") + "\n"
    assert done.stdout == ""
    as_json = subprocess.run([*command, "--json"], capture_output=True, text=True,
                             env=environment(clock), timeout=60)  # fmt: skip
    assert as_json.returncode == 2
    document = json.loads(as_json.stdout)
    assert document["ok"] is False and document["exit_code"] == 2
    assert document["error"] == texts.serve_needs_token("0.0.0.0")


def test_a_port_in_use_is_one_line_and_exit_2(
    tmp_path: Path, clock: FakeClock, radian_bin: Path
) -> None:
    write_fleet(tmp_path, clock)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [str(radian_bin), "arc", "--repo", str(tmp_path), "serve", "--port", str(port)],
            capture_output=True, text=True, env=environment(clock), timeout=60,
        )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == texts.serve_port_in_use("127.0.0.1", port) + "\n"


def test_serve_prints_its_address_as_one_json_line_and_checks_the_token(
    tmp_path: Path, clock: FakeClock, radian_bin: Path
) -> None:
    write_fleet(tmp_path, clock)
    env = environment(clock, RADIAN_ARC_SERVE_TOKEN=TOKEN)
    served = subprocess.Popen(
        [str(radian_bin), "arc", "--repo", str(tmp_path), "serve", "--port", "0", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert served.stdout is not None
        document = json.loads(served.stdout.readline())
        result = document["result"]
        assert document["ok"] is True and document["command"] == "arc serve"
        assert result["kind"] == "serving" and result["token"] is True
        assert result["url"] == f"http://127.0.0.1:{result['port']}/"
        assert document["lines"] == [texts.served_at(result["url"], str(tmp_path), token=True)]
        with pytest.raises(urllib.error.HTTPError) as refused:
            get(result["url"] + "api/v1/state")
        refused.value.close()  # its response, left open by urllib
        assert refused.value.code == 401
        state = get(result["url"] + "api/v1/state", TOKEN)
        assert state["generated_at"] >= format_utc(clock.now())  # the CLI's clock
        assert [run["task"] for run in state["running"]] == ["w1"]
        assert get(result["url"] + "api/v1/tasks/w2", TOKEN)["state"] == "failed.exhausted"
    finally:
        os.killpg(served.pid, signal.SIGINT)
        served.communicate(timeout=30)
