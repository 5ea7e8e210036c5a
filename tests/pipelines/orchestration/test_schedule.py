"""The local scheduler: interval parsing and the loop (fake clock and sleep, no waiting)."""

from __future__ import annotations

import pytest

from pipelines.orchestration.lock import WarehouseLocked
from pipelines.orchestration.schedule import next_tick, parse_interval, run_every


@pytest.mark.parametrize(
    ("text", "seconds"), [("30s", 30), ("15m", 900), ("1h", 3600), (" 2H ", 7200), ("90S", 90)]
)
def test_parse_interval(text, seconds):
    assert parse_interval(text) == seconds


@pytest.mark.parametrize("text", ["", "15", "0m", "-5m", "1.5h", "15 minutes", "m", "10d", "1h30m"])
def test_parse_interval_rejects(text):
    with pytest.raises(ValueError, match="unit s, m or h"):
        parse_interval(text)


def test_next_tick_is_aligned_to_the_interval():
    assert next_tick(1000.0, 900) == 1800
    assert next_tick(1800.0, 900) == 2700  # strictly after: a run ending on a tick waits a full interval
    assert next_tick(0.5, 60) == 60


class FakeTime:
    """A clock that only moves when slept on, or when a run takes time."""

    def __init__(self, start: float):
        self.now = start
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_loop_runs_on_aligned_ticks_until_max_runs():
    time = FakeTime(start=1_000_000_017)  # not on a 15-minute boundary
    started: list[float] = []
    lines: list[str] = []

    def run_once() -> None:
        started.append(time.now)
        time.now += 100  # each run takes 100 s

    code = run_every(900, run_once, max_runs=3, sleep=time.sleep, clock=time.clock, report=lines.append)

    assert code == 0
    assert len(started) == 3
    assert started[0] == 1_000_000_017  # the first run starts at once
    assert [t % 900 for t in started[1:]] == [0, 0]  # later ones on the boundaries
    assert started[2] - started[1] == 900
    assert len(time.sleeps) == 2  # no sleep after the last run
    assert sum("next run at" in line for line in lines) == 2


def test_overrunning_run_skips_missed_ticks():
    time = FakeTime(start=0)
    started: list[float] = []

    def run_once() -> None:
        started.append(time.now)
        time.now += 250  # longer than the 60 s interval

    run_every(60, run_once, max_runs=2, sleep=time.sleep, clock=time.clock, report=lambda _: None)
    assert started == [0, 300]


def test_failures_and_locks_are_reported_and_the_loop_goes_on():
    time = FakeTime(start=0)
    outcomes = iter(
        [RuntimeError("silver.x: fail-severity expectation broke\nmore"), WarehouseLocked("busy"), None]
    )
    lines: list[str] = []
    calls: list[int] = []

    def run_once() -> None:
        calls.append(1)
        error = next(outcomes)
        if error:
            raise error

    code = run_every(
        30,
        run_once,
        max_runs=3,
        sleep=time.sleep,
        clock=time.clock,
        report=lines.append,
        is_locked=lambda exc: isinstance(exc, WarehouseLocked),
    )
    assert len(calls) == 3
    assert code == 1  # some run failed
    assert "run 1 failed: silver.x: fail-severity expectation broke" in lines
    assert "run 2 skipped, warehouse locked: busy" in lines


def test_ctrl_c_stops_cleanly():
    time = FakeTime(start=0)
    lines: list[str] = []

    def sleep(seconds: float) -> None:
        raise KeyboardInterrupt

    code = run_every(60, lambda: None, sleep=sleep, clock=time.clock, report=lines.append)
    assert code == 0
    assert lines[-1] == "stopped after 1 run"
