"""The benchmark's measurements and the table they are printed as."""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from floor import Fsync
    from workers import Scaling


@dataclass(frozen=True)
class Measured:
    """One scenario on one record backend, with the floor measured beside it."""

    backend: str
    scenario: str
    seconds_per_run: tuple[float, ...]
    commits: int  # counted by the store over every run
    step_commits: int  # of those, the ones made while answering confirmations (not the turn)
    write_steps: int  # writes and undos sent, counted from the record over every run
    floor_secs: float  # the same number of commits, raw, on the same backend
    floor_name: str
    alone_secs: float  # the run's own commits made again on a fresh record, no engine
    other_floors: tuple[tuple[str, float], ...] = ()  # (label, seconds): raw sqlite3 beside PG

    @property
    def runs(self) -> int:
        return len(self.seconds_per_run)

    @property
    def runs_per_sec(self) -> float:
        return self.runs / sum(self.seconds_per_run)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.seconds_per_run) * 1000

    @property
    def p95_ms(self) -> float:
        ordered = sorted(self.seconds_per_run)
        return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1000

    @property
    def commits_per_run(self) -> float:
        return self.commits / self.runs

    @property
    def commits_per_write_step(self) -> float:
        """Commits made after the turn (approvals, sends, undos, the rewind) per write step."""
        return self.step_commits / self.write_steps if self.write_steps else float("nan")

    @property
    def floor_ms_per_run(self) -> float:
        return self.floor_secs / self.runs * 1000

    @property
    def times_floor(self) -> float:
        """The whole run's mean time over the floor's, per run."""
        return _times(sum(self.seconds_per_run), self.floor_secs)

    @property
    def alone_ms_per_run(self) -> float:
        return self.alone_secs / self.runs * 1000

    @property
    def alone_times_floor(self) -> float:
        """The record alone over the floor: what the record writes costs, engine apart."""
        return _times(self.alone_secs, self.floor_secs)


COLUMNS = (
    ("record", "{0.backend}", 10),
    ("scenario", "{0.scenario}", 14),
    ("runs", "{0.runs:d}", 6),
    ("runs/s", "{0.runs_per_sec:.1f}", 8),
    ("median ms", "{0.median_ms:.2f}", 10),
    ("p95 ms", "{0.p95_ms:.2f}", 8),
    ("commits/run", "{0.commits_per_run:.2f}", 12),
    ("commits/write step", "{0.commits_per_write_step:.2f}", 18),
    ("floor ms/run", "{0.floor_ms_per_run:.2f}", 13),
    ("x floor", "{0.times_floor:.2f}", 8),
    ("record alone ms/run", "{0.alone_ms_per_run:.2f}", 19),
    ("x floor", "{0.alone_times_floor:.2f}", 8),
)


def table(rows: list[Measured]) -> str:
    """The measurements as an aligned text table, one line per scenario and backend."""
    lines = ["  ".join(name.rjust(width) for name, _, width in COLUMNS)]
    for row in rows:
        lines.append("  ".join(form.format(row).rjust(width) for _, form, width in COLUMNS))
    return "\n".join(lines)


def notes(rows: list[Measured]) -> str:
    """What the columns mean, the floor of each backend, and each row against the aims."""
    lines = [
        "commits/run: durable commits, counted by the store; commits/write step: those made "
        "after the turn's own commit, over the writes and undos sent (from the record)",
        "x floor: the whole run's time over the floor's: the same commits made raw, each "
        "right after the run that made them",
        "record alone: the run's own commits, the rows as the run gave them, made again in "
        "order on a fresh record of the same kind right after the run, under one lock of the "
        "session, with no engine (no turn read, no check, no tool); the whole run can come "
        "no nearer the floor than this",
    ]
    for floor_name in dict.fromkeys(row.floor_name for row in rows):
        lines.append(f"floor: {floor_name}")
    for row in rows:
        for label, secs in row.other_floors:
            times = _times(sum(row.seconds_per_run), secs)
            lines.append(
                f"{row.backend} {row.scenario} against the {label} floor: "
                f"{secs / row.runs * 1000:.2f} ms/run, x {times:.2f}"
            )
    for row in rows:
        per_step = "ok" if row.commits_per_write_step <= 2 else "OVER 2"
        floor = "ok" if row.times_floor <= 1.5 else "OVER 1.5"
        reach = (
            ""
            if row.alone_times_floor <= 1.5
            else " (out of any engine's reach: the record alone is over)"
        )
        lines.append(
            f"aims for {row.backend} {row.scenario}: commits per write step <= 2: {per_step}; "
            f"whole run <= 1.5 x floor: {floor}{reach}"
        )
    return "\n".join(lines)


def _times(seconds: float, floor_secs: float) -> float:
    return seconds / floor_secs if floor_secs else float("nan")


def one_table(
    fsync: Fsync,
    rows: list[Measured],
    selector: tuple[float, float],
    scaling: Sequence[Scaling] | str,
) -> str:
    """Everything `make bench` measured, in one table: the machine's fsync first, then the
    record's runs beside their floors, the selector, and the workers on PostgreSQL."""
    lines: list[tuple[str, str, str, str]] = [
        (
            "fsync of 4 KiB, this disk (measured first)",
            f"{fsync.median_ms:.3f} ms median, {fsync.p95_ms:.3f} ms p95",
            "",
            "a slow disk, not slow code, if high",
        )
    ]
    for row in rows:
        verdict = "ok" if row.times_floor <= 1.5 else "OVER"
        lines.append(
            (
                f"{row.backend} {row.scenario}: ms/run (median, p95)",
                f"{row.median_ms:.2f}, {row.p95_ms:.2f} ({row.runs_per_sec:.0f} runs/s)",
                f"{row.floor_ms_per_run:.2f} ms for {row.commits_per_run:.0f} commits"
                f" (x {row.times_floor:.2f}); the record alone {row.alone_ms_per_run:.2f} ms"
                f" (x {row.alone_times_floor:.2f} floor)",
                f"<= 1.5 x floor: {verdict}",
            )
        )
    warm, cold = selector
    lines.append(
        (
            "selector, shop desk, three-clause turns/s, one core",
            f"{warm:,.0f} warm, {cold:,.0f} cold",
            "",
            f">= 10,000 warm: {'ok' if warm >= 10_000 else 'UNDER'}",
        )
    )
    if isinstance(scaling, str):
        lines.append(("workers on PostgreSQL", scaling, "", ""))
    else:
        for pause in sorted({s.tool_ms for s in scaling}):
            measured = sorted((s for s in scaling if s.tool_ms == pause), key=lambda s: s.workers)
            figures = " / ".join(f"{s.per_sec:.0f}" for s in measured)
            counts = "/".join(str(s.workers) for s in measured)
            rates = [s.per_sec for s in measured]
            if pause:
                aim = "grows to the last count"
                met = all(b > a for a, b in zip(rates, rates[1:], strict=False))
            else:
                # Past the cores more workers add no CPU: they may add nothing, but must
                # not take away (a tenth allowed for a shared machine's noise).
                aim = "no fall past the cores"
                cores = os.cpu_count() or 1
                at_cores = [s.per_sec for s in measured if s.workers <= cores] or rates[:1]
                past = [s.per_sec for s in measured if s.workers > cores]
                met = all(rate >= 0.9 * at_cores[-1] for rate in past)
            lines.append(
                (
                    f"PostgreSQL sessions/s, {counts} workers, tools {pause} ms",
                    figures,
                    "",
                    f"{aim}: {'ok' if met else 'NO'}",
                )
            )
    widths = [max(len(line[i]) for line in lines) for i in range(4)]
    header = ("figure", "measured", "floor", "aim")
    widths = [max(w, len(h)) for w, h in zip(widths, header, strict=True)]
    out = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    out.append("  ".join("-" * w for w in widths))
    for line in lines:
        out.append("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)))
    return "\n".join(out)
