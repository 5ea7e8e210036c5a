"""What a collector refused or could not land, written beside landing for the warehouse to show.

A sender that does not retry (OpenMetadata from 1.3 on, DataHub Actions with its default options)
loses for good what the receiver refuses; a pull that gives up leaves a gap until the next one.
A line in a server log is no place for that: each collector counts its refusals and failures
here, and the pipeline loads them into `ops.collector_losses` (`pipelines.ops.collector_losses`),
which the data-quality report shows.

Entries are counted in memory by (source, status, reason) and written, when there are any, as one
immutable JSON Lines file in `<landing>/_collector_log/` (`write_atomically`: complete under its
final name or absent). Landing discovery skips `_` folders, so bronze never reads these files. One
line per (source, status, reason): `{"collector", "source", "status", "reason", "count",
"first_at", "last_at", "host"}`, times in UTC ISO 8601. `status` is the HTTP status answered
(`"413"`) or a word for a pull (`"stopped"`, `"incomplete"`).
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

from pipelines.collectors.landing_writer import write_atomically

LOG_FOLDER = "_collector_log"
_SEQUENCE = itertools.count(1)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


@dataclass
class _Tally:
    count: int
    first_at: dt.datetime
    last_at: dt.datetime


class LossLog:
    """Counts one collector's refusals; `flush()` writes them as a file (thread-safe)."""

    def __init__(self, landing: Path, collector: str) -> None:
        self.folder = landing / LOG_FOLDER
        self.collector = collector
        self._tallies: dict[tuple[str, str, str], _Tally] = {}
        self._lock = threading.Lock()

    def record(self, source: str, status: int | str, reason: str, count: int = 1) -> None:
        """Count `count` events or requests of `source` refused or not landed, with why."""
        if count <= 0:
            return
        key = (source, str(status), " ".join(reason.split())[:500])
        now = _now()
        with self._lock:
            tally = self._tallies.get(key)
            if tally is None:
                self._tallies[key] = _Tally(count, now, now)
            else:
                tally.count += count
                tally.last_at = now

    def pending(self) -> int:
        """How many are counted and not yet written."""
        with self._lock:
            return sum(t.count for t in self._tallies.values())

    def flush(self) -> Path | None:
        """Write what was counted since the last flush as one file; None when nothing was."""
        with self._lock:
            tallies, self._tallies = self._tallies, {}
        if not tallies:
            return None
        host = socket.gethostname()
        lines = [
            json.dumps(
                {
                    "collector": self.collector,
                    "source": source,
                    "status": status,
                    "reason": reason,
                    "count": tally.count,
                    "first_at": tally.first_at.isoformat(timespec="milliseconds"),
                    "last_at": tally.last_at.isoformat(timespec="milliseconds"),
                    "host": host,
                },
                ensure_ascii=False,
            )
            for (source, status, reason), tally in sorted(tallies.items())
        ]
        stamp = _now().strftime("%Y%m%dT%H%M%S%f")
        name = f"{self.collector}-{stamp}-{os.getpid()}-{next(_SEQUENCE):06d}.jsonl"
        try:
            return write_atomically(self.folder / name, ("\n".join(lines) + "\n").encode("utf-8"))
        except OSError:
            with self._lock:  # counted again on the next flush rather than lost
                for key, tally in tallies.items():
                    kept = self._tallies.setdefault(key, _Tally(0, tally.first_at, tally.last_at))
                    kept.count += tally.count
                    kept.first_at = min(kept.first_at, tally.first_at)
            raise
