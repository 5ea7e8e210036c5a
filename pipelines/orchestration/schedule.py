"""`lakehouse run --every 15m`: the pipeline on a local timer, for laptops and single VMs.

Runs start on multiples of the interval (epoch-aligned, so `15m` means :00, :15,
:30, :45 UTC); a run that overruns skips the ticks it missed instead of queueing
them. A failed run, or a warehouse another process holds, is reported and the loop
waits for the next tick: a scheduler that dies on the first bad batch would need
its own supervisor. Ctrl-C stops the loop between or during runs. Sleep and clock
are parameters so tests never wait.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import time
from collections.abc import Callable
from typing import Any

UNITS = {"s": 1, "m": 60, "h": 3600}
_INTERVAL = re.compile(r"^\s*(\d+)\s*([smh])\s*$", re.IGNORECASE)


def parse_interval(text: str) -> int:
    """Seconds in `30s`, `15m`, `1h` (a positive whole number and one unit)."""
    match = _INTERVAL.match(text or "")
    if not match or int(match.group(1)) == 0:
        raise ValueError(f"interval {text!r} must be a positive whole number with unit s, m or h (e.g. 15m)")
    return int(match.group(1)) * UNITS[match.group(2).lower()]


def next_tick(now: float, interval: float) -> float:
    """The first multiple of `interval` strictly after `now` (seconds since the epoch)."""
    return (math.floor(now / interval) + 1) * interval


def run_every(
    interval: float,
    run_once: Callable[[], Any],
    *,
    max_runs: int | None = None,
    sleep: Callable[[float], Any] = time.sleep,
    clock: Callable[[], float] = time.time,
    report: Callable[[str], Any] = print,
    is_locked: Callable[[BaseException], bool] = lambda exc: False,
) -> int:
    """Call `run_once` now and then on every tick; 0 when every run succeeded, else 1.

    Stops after `max_runs` runs, or on Ctrl-C (reported, not raised). `is_locked`
    tells a busy warehouse from a failure, only for the message.
    """
    runs = failures = 0
    try:
        while True:
            runs += 1
            try:
                run_once()
            except Exception as exc:  # the loop outlives a bad run; the reason is reported
                failures += 1
                reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                what = "skipped, warehouse locked" if is_locked(exc) else "failed"
                report(f"run {runs} {what}: {reason}")
            if max_runs is not None and runs >= max_runs:
                break
            wake = next_tick(clock(), interval)
            report(f"next run at {_utc(wake)}")
            sleep(max(0.0, wake - clock()))
    except KeyboardInterrupt:
        report(f"stopped after {runs} run{'s' if runs != 1 else ''}")
    return 1 if failures else 0


def _utc(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")
