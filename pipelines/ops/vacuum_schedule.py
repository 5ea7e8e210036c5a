"""Which tables the Databricks job's maintenance task vacuums, and the record of when it did.

VACUUM lists every file of a table, however little the table changed, so vacuuming every table
after every run makes the job's last task cost in proportion to everything stored (minutes a
run on Delta's own engine, most of them finding nothing). Yet what a VACUUM may delete only
becomes deletable as files cross the retention, so looking once every few hours finds the same
files a little later. The maintenance task therefore vacuums a table only when:
- the table is older than the retention: every file it removed or left behind is younger than
  the table, so a table younger than the retention holds nothing VACUUM may delete; and
- its last vacuum, recorded in `<warehouse>/ops/_maintenance/vacuums.json`, is at least
  `maintenance.vacuum_every_hours` old (or none is recorded; 0: every run).
No file is kept for good: a deletion waits at most `vacuum_every_hours` past the retention.
`lakehouse vacuum` vacuums every table whatever the record says, and records it too.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.store import TableStore

RECORD = Path("ops") / "_maintenance" / "vacuums.json"
HOUR_MS = 3_600_000
HISTORY_LOOKED_AT = 100  # commits read for a table's first one (the compaction check reads as many)


@dataclass
class VacuumRecord:
    """{table: when its last vacuum ended, in epoch milliseconds}, kept beside the tables."""

    path: Path
    last: dict[str, int] = field(default_factory=dict)

    @classmethod
    def load(cls, warehouse: str | os.PathLike) -> VacuumRecord:
        """The warehouse's record; an empty one where none was written or it cannot be read
        (then every table old enough is vacuumed, which is always safe)."""
        path = Path(warehouse) / RECORD
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
            last = {str(k): int(v) for k, v in found.get("last_vacuum_ms", {}).items()}
        except (OSError, ValueError, TypeError, AttributeError):
            last = {}
        return cls(path, last)

    def vacuumed(self, table: str, at_ms: int) -> None:
        self.last[table] = at_ms

    def save(self) -> None:
        """Written whole to a new file, then renamed over the old one: a killed task leaves the
        previous record or the new one, never half of one."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".json.partial")
        partial.write_text(json.dumps({"last_vacuum_ms": dict(sorted(self.last.items()))}, indent=1))
        os.replace(partial, self.path)


def now_ms() -> int:
    """The time a vacuum is recorded at, and due against, in epoch milliseconds."""
    return int(time.time() * 1000)


def first_commit_ms(store: TableStore, table: str) -> int | None:
    """When `table`'s version 0 was committed, from its recent history (None when the table has
    more commits than that history holds: it is then treated as old)."""
    commits = store.history(table, limit=HISTORY_LOOKED_AT)
    first = commits[-1] if commits else None
    return int(first["timestamp"]) if first is not None and first["version"] == 0 else None


def not_due(
    store: TableStore,
    table: str,
    record: VacuumRecord,
    retention_hours: float,
    every_hours: float,
    at_ms: int,
) -> str | None:
    """Why `table` is not vacuumed at `at_ms` (None: it is)."""
    last = record.last.get(table)
    if last is not None and every_hours > 0 and at_ms - last < every_hours * HOUR_MS:
        return f"vacuumed {(at_ms - last) / HOUR_MS:.1f} h ago"
    if retention_hours > 0:
        created = first_commit_ms(store, table)
        if created is not None and at_ms - created < retention_hours * HOUR_MS:
            return "younger than the retention"
    return None
