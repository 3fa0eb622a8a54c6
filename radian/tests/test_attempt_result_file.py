"""attempt_result.json is read by people, by `show --json` and by older builds: its bytes do
not change with the code that writes it. The expected files in attempt_result_files/ were
written by the build before the typed attempt result (108edef) with `attempt_files.py`."""

from __future__ import annotations

from pathlib import Path

import pytest
from attempt_files import write_results

from radian.arc.classify import ROWS

pytestmark = pytest.mark.unit

EXPECTED = Path(__file__).resolve().parent / "attempt_result_files"


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    paths = write_results(tmp_path_factory.mktemp("repo"))
    return {name: path.read_bytes() for name, path in paths.items()}


def test_every_row_of_the_table_and_every_other_path_has_its_expected_file(
    written: dict[str, bytes],
) -> None:
    assert set(ROWS) <= set(written)
    assert sorted(written) == sorted(path.stem for path in EXPECTED.glob("*.json"))


@pytest.mark.parametrize("name", sorted(path.stem for path in EXPECTED.glob("*.json")))
def test_the_file_is_written_byte_for_byte_as_before(written: dict[str, bytes], name: str) -> None:
    assert written[name].decode() == (EXPECTED / f"{name}.json").read_text()
