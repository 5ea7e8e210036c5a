"""`ops.ingestion_log`: which landing file went into which bronze commit.

Exactly-once per file rests on two facts: a bronze commit carries its run id
in the Delta commit metadata, and every file of that commit gets a log row
with the bronze version. A run killed between the two leaves bronze commits
newer than the log's last version; `recover` rebuilds their log rows from the
bronze rows themselves before anything else happens.

Files are known by their landing key (path below the source folder, see
`pipelines.landing.discovery.landing_key`), so a moved landing folder is not ingested
again; `path` stays the absolute path the file had when logged.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

from pipelines.landing.discovery import LandingFile, landing_key
from pipelines.landing.listing import folder_of
from pipelines.store import TableStore
from pipelines.store.pruning import AtLeast, In, Missing

TABLE = "ops.ingestion_log"
INGESTED = "INGESTED"
CHANGED_SKIPPED = "CHANGED_SKIPPED"
TOO_LARGE = "TOO_LARGE"
SAME_CONTENT = "SAME_CONTENT"  # a known file with a new modification time (touched, copied): not ingested
# Files that could not be read as they were found. None stops a run; `note` says why.
DAMAGED = "DAMAGED"  # compressed data damaged: the records before the damage are in bronze, marked corrupt
UNREADABLE = "UNREADABLE"  # could not be opened or read (permissions, I/O error): tried again next run
VANISHED = "VANISHED"  # deleted between discovery and read
STILL_WRITING = "STILL_WRITING"  # size or modification time changed while read: tried again next run
LANDED = (INGESTED, DAMAGED)  # statuses whose file's records are in bronze
NOT_READ = (UNREADABLE, VANISHED, STILL_WRITING)

SCHEMA = StructType(
    [
        StructField("source", StringType(), False),
        StructField("path", StringType(), False),
        StructField("size", LongType()),
        StructField("modified_at", TimestampType()),
        StructField("file_hash", StringType()),
        StructField("records", LongType()),
        StructField("corrupt_records", LongType()),
        StructField("status", StringType(), False),
        StructField("run_id", StringType(), False),
        StructField("bronze_version", LongType()),
        StructField("logged_at", TimestampType(), False),
        StructField("note", StringType()),
        StructField("landing_key", StringType()),
        StructField("landing_folder", StringType()),  # the landing key's folder: what a run looks up by
    ]
)


@dataclass(frozen=True)
class KnownFile:
    key: str
    size: int | None
    mtime_ms: int | None
    file_hash: str | None
    status: str


def known_files(
    store: TableStore, source: str, folder: Path, folders: list[str] | None = None
) -> dict[str, list[KnownFile]]:
    """The logged files of `source` by landing key (one row per file and version), of the
    landing `folders` only when given (keys as `listing.ListedFolder.key`): the log is looked up
    by the folders a run lists, not loaded whole. Rows logged before keys existed get theirs
    from their path and `folder`; rows logged before folders were kept are always read."""
    if not store.exists(TABLE):
        return {}
    columns = ["path", "landing_key", "size", "modified_at", "file_hash", "status"]
    of_source = In("source", [source])
    selections = [[of_source]]
    if folders is not None:
        selections = [[of_source, In("landing_folder", folders)], [of_source, Missing("landing_folder")]]
    known: dict[str, list[KnownFile]] = {}
    for row in store.read_rows(TABLE, columns, selections=selections):
        key = row.get("landing_key") or landing_key(row["path"], folder)
        if folders is not None and folder_of(key) not in folders:
            continue
        modified = row["modified_at"]
        mtime = int(modified.timestamp() * 1000) if modified else None
        known.setdefault(key, []).append(KnownFile(key, row["size"], mtime, row["file_hash"], row["status"]))
    return known


def last_logged_version(store: TableStore, source: str, at_least: int | None = None) -> int | None:
    """The newest bronze version the log names for `source` (None for none). With `at_least`,
    only rows naming that version or a later one are read (a lookup the log's statistics narrow
    to its newest files), and None means there is none."""
    if not store.exists(TABLE):
        return None
    selection = [In("source", [source])]
    if at_least is not None:
        selection.append(AtLeast("bronze_version", at_least))
    versions = [
        r["bronze_version"] for r in store.read_rows(TABLE, ["bronze_version"], selections=[selection])
    ]
    known = [v for v in versions if v is not None]
    return max(known) if known else None


def entry(
    source: str,
    file: LandingFile,
    file_hash: str | None,
    status: str,
    run_id: str,
    records: int | None = None,
    corrupt: int | None = None,
    bronze_version: int | None = None,
    note: str | None = None,
) -> tuple:
    """One log row (a tuple in SCHEMA order)."""
    return (
        source,
        file.path,
        file.size,
        file.modified_at,
        file_hash,
        records,
        corrupt,
        status,
        run_id,
        bronze_version,
        dt.datetime.now(tz=dt.timezone.utc),
        note,
        file.key,
        None if file.key is None else folder_of(file.key),
    )


def append(spark: SparkSession, store: TableStore, rows: list[tuple]) -> None:
    if rows:
        store.append_rows(rows, SCHEMA, TABLE)


def recover(spark: SparkSession, store: TableStore, source: str, bronze_table: str, folder: Path) -> int:
    """Log the files of bronze commits the log does not know yet (a run died after its commit)."""
    current = store.version(bronze_table)
    if current is None:
        return 0
    if last_logged_version(store, source, at_least=current) is not None:
        return 0  # the usual case: the log is as new as bronze
    logged = last_logged_version(store, source)
    since = -1 if logged is None else logged
    per_file = (
        store.read_added_since(bronze_table, since if since >= 0 else None)
        .groupBy("source_file", "file_hash", "ingest_run_id")
        .agg(F.count(F.lit(1)).alias("records"), F.sum(F.col("is_corrupt").cast("long")).alias("corrupt"))
        .collect()
    )
    known = known_files(store, source, folder)
    rows = []
    for row in per_file:
        key = landing_key(row.source_file, folder)
        if any(k.file_hash == row.file_hash and k.status in LANDED for k in known.get(key, [])):
            continue
        rows.append(
            entry(
                source,
                LandingFile(row.source_file, 0, 0, key),
                row.file_hash,
                INGESTED,
                row.ingest_run_id,
                row.records,
                row.corrupt,
                current,
                "recovered after an interrupted run",
            )
        )
    if not rows:  # nothing missing (e.g. a compaction commit): remember we checked
        return 0
    append(spark, store, rows)
    return len(rows)
