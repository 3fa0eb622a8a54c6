"""attempt_result.json is read by people, by `show --json` and by older builds: its bytes do
not change with the code that writes it. The expected files in attempt_result_files/ were
written by the build before the typed attempt result (108edef) with `attempt_files.py`."""

from __future__ import annotations

from pathlib import Path

import pytest
from attempt_files import EARLIER_FILE, EARLIER_OUTCOME, write_results

from radian.arc.atomic import write_json_atomic
from radian.arc.attempt_result import AttemptOutcome, ModelErrorRecord
from radian.arc.classify import ROWS
from radian.arc.store import ArcStore

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


def test_a_file_an_earlier_build_wrote_reads_back_typed(tmp_path: Path) -> None:
    """51e482c's file: no format version, no cost_unknown or cost_scope, an outcome_record
    without the fields added since. It reads back typed, those fields at their defaults,
    and the keys it lacked stay absent where absence means something."""
    store = ArcStore(tmp_path)
    write_json_atomic(store.attempt_result_path("earlier_build", "001"), EARLIER_FILE)
    found = store.read_attempt_result("earlier_build", "001")
    assert found is not None
    assert (found.format_version, found.task, found.failure_class, found.row) == (
        0, "earlier_build", None, "completed and pushed",
    )  # fmt: skip
    assert (found.cost_usd, found.cost_unknown, found.cost_scope) == (0.5, None, None)
    assert (found.exit_code, found.result_format, found.retry_count) == (0, "radian", 0)
    assert found.gate is None and found.review_cost_micros is None
    assert found.outcome_record == AttemptOutcome(**EARLIER_OUTCOME)  # type: ignore[arg-type]
    outcome = found.outcome_record
    assert (outcome.cost_scope, outcome.fresh_session_next) == ("session_total", False)
    assert (outcome.cost_problem, outcome.remote_error) == (None, None)
    written = found.document()
    assert "gate" not in written and "review_cost_micros" not in written
    assert list(written["outcome_record"]) == list(EARLIER_OUTCOME)


def test_an_earlier_cancel_and_a_model_error_without_a_message_read_back_typed(
    tmp_path: Path,
) -> None:
    store = ArcStore(tmp_path)
    cancel = {"task": "t", "attempt_id": "001", "class": "cancel",
              "row": "cancelled by radian arc cancel", "next_state": "failed.cancelled",
              "model_error": {"kind": "unavailable", "retry_after_secs": None}}  # fmt: skip
    write_json_atomic(store.attempt_result_path("t", "001"), cancel)
    found = store.read_attempt_result("t", "001")
    assert found is not None
    assert (found.failure_class, found.next_state, found.model_wait) == (
        "cancel", "failed.cancelled", False,
    )  # fmt: skip
    assert found.model_error == ModelErrorRecord(kind="unavailable", retry_after_secs=None)
    assert found.model_error.message is None
    assert found.outcome_record is None and found.exit_code is None
    written = found.document()
    assert written["model_error"] == {"kind": "unavailable", "retry_after_secs": None}
    assert not {"exit_code", "retry_at", "outcome_record", "gate"} & set(written)
