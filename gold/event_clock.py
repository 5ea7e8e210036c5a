"""The warehouse's event clock: the newest `event_time` in `gold.change_history`.

Questions about state "now" (which violations are open, which feeds are late) are asked at the
time the warehouse has seen up to, not the machine's wall clock, so the answer for a warehouse
is the same whenever it is asked and a replay of old events reads as it did then. It comes from
the table's file statistics (`TableStore.max_micros`), so asking costs no scan of the table.

    clock = event_clock(store)  # None on an empty warehouse
"""

from __future__ import annotations

import datetime as dt

CLOCK_TABLE = "gold.change_history"
CLOCK_COLUMN = "event_time"


def event_clock(store) -> dt.datetime | None:
    """The newest change's `event_time` as a timezone-aware UTC datetime; None when the table is
    missing or empty."""
    if not store.exists(CLOCK_TABLE):
        return None
    micros = store.max_micros(CLOCK_TABLE, CLOCK_COLUMN)
    if micros is None:
        return None
    return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=micros)
