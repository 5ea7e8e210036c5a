"""What the last run learnt of each table's log, kept beside the warehouse for the next run.

Why: on Delta's JVM engine every question a run asks of a table's log is a Delta command, and
`DESCRIBE HISTORY` reads the commits in a Spark job of its own: a run with nothing new spent
most of its seconds asking some sixty tables what the run before had already been told. So a
run's end writes, per table, the newest commits it knows (down to the newest that carries the
pipeline's metadata), and the answers that hold for that version (the newest event time of a
column, whether the table records its change data), to `ops/_runs/table_logs.json`; the next run
takes a table's entry only once the table proves to be still at that version (it reads at it,
and not at the next one: two analyses of a time-travel read, no Spark job), and asks the log
itself otherwise. An entry is a cache, never the truth: a table another writer moved, one
rebuilt by an older release, a file from another warehouse's catalog or one lost, each costs
the questions it saves, no more.

The file is written whole under a temporary name and then renamed into place (where the file
system refuses to rename over a file, as a Unity Catalog volume does, the old one is removed
first: a run that finds none meanwhile asks every table, as it would without the record). A
record that cannot be read, or written, costs the questions only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

RECORD = Path("ops") / "_runs" / "table_logs.json"
FORMAT = 1


def load(warehouse: Path, identity: str) -> dict[str, dict[str, Any]]:
    """The entries of the record of `warehouse` written for the same tables (`identity`: the
    catalog and schema names the store reaches them by); {} when there is none or it cannot be read."""
    try:
        found = json.loads((warehouse / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict) or found.get("format") != FORMAT or found.get("tables_of") != identity:
        return {}
    tables = found.get("tables")
    return tables if isinstance(tables, dict) else {}


def save(warehouse: Path, identity: str, entries: dict[str, dict[str, Any]]) -> None:
    """Write `entries` (table -> entry) as the record, whole; unchanged content is not rewritten."""
    path = warehouse / RECORD
    text = json.dumps(
        {"format": FORMAT, "tables_of": identity, "tables": dict(sorted(entries.items()))},
        indent=1,
        default=str,
    )
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"_{path.name}.{os.getpid()}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        try:
            os.replace(partial, path)
        except OSError:
            path.unlink(missing_ok=True)
            os.rename(partial, path)
    except OSError:
        partial.unlink(missing_ok=True)
