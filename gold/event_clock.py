"""The warehouse's event clock: the newest `event_time` in `gold.change_history`.

Why: time-driven states (a violation that opens once its condition has lasted a rule's
duration) are judged against the events the warehouse holds, not the wall clock, so a
replay, a late backfill or a paused feed reads the same as the live run did. The clock is
read from the table's file statistics (`TableStore.max_micros`), never by scanning rows.
"""

from __future__ import annotations

import datetime as dt

CHANGE_HISTORY = "gold.change_history"


def event_clock(store) -> dt.datetime | None:
    """The newest `event_time` of `gold.change_history` (timezone-aware UTC), None on an empty
    warehouse."""
    if not store.exists(CHANGE_HISTORY):
        return None
    micros = store.max_micros(CHANGE_HISTORY, "event_time")
    if micros is None:
        return None
    return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=micros)
