"""What each operation `DESCRIBE HISTORY` names did to a Delta table's rows.

The delta-spark engine learns from a table's history, without reading data, whether the commits
since a reader's version only added rows (then the change data feed holds the whole change) and
how many. Besides our own writes, a table on Databricks gets commits from the platform:
predictive optimization and auto compaction run `OPTIMIZE`, `VACUUM` (logged as `VACUUM START`
and `VACUUM END`) and `ANALYZE` (statistics, `COMPUTE STATS`), liquid clustering and row tracking
their own. None of those changes a row, so a reader takes them as commits that added nothing;
taken as rewrites they would send every downstream task back to reading whole tables.
"""

from __future__ import annotations

# Commits that only add rows, as DESCRIBE HISTORY names them.
APPENDS = frozenset({"WRITE", "STREAMING UPDATE", "CREATE TABLE AS SELECT"})
# Commits that change no row: table properties and schema, and the maintenance the platform runs
# (file compaction and clustering rewrite files with `dataChange: false`, vacuum deletes files no
# version reads, statistics and protocol changes touch metadata only).
NO_DATA_CHANGE = frozenset(
    {
        "OPTIMIZE",
        "VACUUM START",
        "VACUUM END",
        "COMPUTE STATS",
        "ANALYZE",
        "REORG",
        "CLUSTER BY",
        "ROW TRACKING BACKFILL",
        "DOMAIN METADATA CLEANUP",
        "UPGRADE PROTOCOL",
        "SET TBLPROPERTIES",
        "UNSET TBLPROPERTIES",
        "ADD CONSTRAINT",
        "DROP CONSTRAINT",
        "CREATE TABLE",
        "ADD COLUMNS",
        "CHANGE COLUMN",
        "CHANGE COLUMNS",
        "UPDATE SCHEMA",
    }
)
# Commits that replace the whole table: a count of the rows since the last one needs no more.
REPLACES = frozenset(
    {"CREATE TABLE AS SELECT", "CREATE OR REPLACE TABLE AS SELECT", "REPLACE TABLE AS SELECT"}
)
# Commits that remove data files without changing rows: the files earlier commits added may be
# gone once a vacuum passes (`pipelines.store.change_feed`).
FILE_REWRITES = frozenset({"OPTIMIZE", "REORG", "CLUSTER BY", "ROW TRACKING BACKFILL"})
