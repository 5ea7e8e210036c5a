"""Whether Delta's change data feed still holds what a reader has yet to read, and reading it.

The delta-spark engine reads the rows a table gained since a reader's version from the change
data feed (`read_changes`). The feed ages out: a compaction (`OPTIMIZE`, also run by Databricks'
predictive optimization) replaces the files the appends added, and a `VACUUM` past the retention
deletes them, so reading those versions' changes fails with a missing file; and the log keeps
commits for `delta.logRetentionDuration` only. A task that lagged that far behind would fail on
every run. So before a reader takes the feed, `feed_gap` says whether it still covers the
versions wanted: when not, the engine reads the table's current state whole instead, as it does
for a table without the feed (silver then deduplicates against what it holds, gold rebuilds),
which gives the same result, and says why on stderr.

The check costs nothing while the versions wanted hold no file rewrite; with one, a count of
the feed's rows (Parquet footers only) finds a missing file before the task depends on it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from pipelines.store.delta_operations import FILE_REWRITES

LOG = logging.getLogger(__name__)
# What Spark and Delta say when a version's files or commit are gone.
MISSING = (
    "FAILED_READ_FILE",
    "FileNotFoundException",
    "DELTA_CHANGE_DATA_FILE_NOT_FOUND",
    "DELTA_FILE_NOT_FOUND",
    "VersionNotFoundException",
    "DELTA_VERSION_NOT_FOUND",
    "DELTA_CHANGE_FEED_NOT_AVAILABLE",
    "DELTA_MISSING_CHANGE_DATA",
)


def read_changes(spark: SparkSession, table: str, since: int, until: int) -> DataFrame:
    """The change data feed of the commits after `since` up to `until` of `table` (a catalog name)."""
    return (
        spark.read.format("delta")
        .option("readChangeFeed", "true")
        .option("startingVersion", since + 1)
        .option("endingVersion", until)
        .table(table)
    )


def feed_gap(
    table: str,
    since: int,
    window: list[dict[str, Any]],
    history_reaches: bool,
    probe: Callable[[], object],
) -> str | None:
    """Why the feed no longer holds the commits after `since` (`window`, newest first, from the
    table's history; `history_reaches`: whether that history still lists the commit after
    `since`), or None when it does. `probe` reads the feed of the window (a count): it runs only
    when a commit in the window rewrote files, which a vacuum may since have deleted."""
    if not history_reaches:
        return f"the commits after version {since} are no longer in the table's log (log retention)"
    rewrites = [c for c in window if c["operation"] in FILE_REWRITES]
    if not rewrites:
        return None
    try:
        probe()
    except Exception as exc:
        if not any(marker in f"{type(exc).__name__} {exc}" for marker in MISSING):
            raise
        first = min(c["version"] for c in rewrites)
        return (
            f"files the commits after version {since} added are gone: {rewrites[-1]['operation']} "
            f"rewrote them at version {first} and a vacuum has deleted them since "
            f"({str(exc).splitlines()[0][:200]})"
        )
    return None


def covers(
    table: str,
    since: int,
    window: list[dict[str, Any]],
    history_reaches: bool,
    probe: Callable[[], object],
) -> bool:
    """Whether the feed holds the commits after `since` (`feed_gap`); when not, says why and that
    the task reads the table's current state instead."""
    gap = feed_gap(table, since, window, history_reaches, probe)
    if gap is None:
        return True
    LOG.warning(
        "%s: the change data feed no longer covers its reader's version %s: %s; "
        "reading the table's current state instead",
        table,
        since,
        gap,
    )
    return False
