"""`ops.landing_folders`: which landing folders bronze listed in full, and how they looked then.

Why: a landing only grows (a collector lands a file per batch, tens of thousands a day), so a
run that listed and inspected every file ever landed would get slower every day. A folder's
modification time moves whenever an entry is added, removed or renamed in it, so a folder that
still has the modification time it had when a run listed it holds the same files, and the next
run need not list it: it only looks at the folders it holds (their names are kept here too).

A folder is marked only once it is settled: listed at least `bronze.folder_settle_seconds`
after its last change (so that a file added in the same tick of a coarse file-system clock is
never missed), with every file it held ingested or logged for good (not one still being
written or unreadable, which each run tries again). A file rewritten in place, without being
created or renamed, does not move its folder's time: bronze notices it while its folder is
unsettled, not after (docs/landing.md). Marks are appended; a folder's newest one counts.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from pyspark.sql.types import ArrayType, LongType, StringType, StructField, StructType, TimestampType

from pipelines.store import TableStore

TABLE = "ops.landing_folders"
SCHEMA = StructType(
    [
        StructField("source", StringType(), False),
        StructField("folder", StringType(), False),  # below the source's folder, `/`-separated; "" for itself
        StructField("modified_ns", LongType(), False),  # the folder's modification time, in ns
        StructField("subfolders", ArrayType(StringType()), False),  # names of the folders it holds
        StructField("listed_at", TimestampType(), False),
        StructField("run_id", StringType(), False),
    ]
)


@dataclass(frozen=True)
class FolderMark:
    """A settled folder as a run listed it: its modification time and its sub-folders' names."""

    folder: str
    modified_ns: int
    subfolders: tuple[str, ...]


def read_marks(store: TableStore, source: str) -> dict[str, FolderMark]:
    """The newest mark of each folder of `source` (no Spark job where the engine can)."""
    if not store.exists(TABLE):
        return {}
    rows = store.read_rows(TABLE, ["folder", "modified_ns", "subfolders", "listed_at"], {"source": source})
    newest: dict[str, dict] = {}
    for row in rows:
        kept = newest.get(row["folder"])
        if kept is None or row["listed_at"] > kept["listed_at"]:
            newest[row["folder"]] = row
    return {
        folder: FolderMark(folder, row["modified_ns"], tuple(row["subfolders"] or ()))
        for folder, row in newest.items()
    }


def mark_rows(source: str, marks: list[FolderMark], run_id: str) -> list[tuple]:
    """Rows (in SCHEMA order) recording `marks` as listed now."""
    now = dt.datetime.now(dt.timezone.utc)
    return [(source, m.folder, m.modified_ns, list(m.subfolders), now, run_id) for m in marks]


def record(
    store: TableStore, source: str, marks: list[FolderMark], known: dict[str, FolderMark], run_id: str
) -> None:
    """Append the marks that differ from the `known` ones (none: no commit)."""
    changed = [m for m in marks if known.get(m.folder) != m]
    if changed:
        store.append_rows(mark_rows(source, changed, run_id), SCHEMA, TABLE)
