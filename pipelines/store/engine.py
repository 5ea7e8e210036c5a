"""The contract every storage engine fulfils; the TableStore facade calls only this.

An engine reaches a table through a `TableRef`: its folder where tables are folders (delta-rs),
its catalog name where tables are named (delta-spark, which never reads a table through its
folder). Engines answer metadata questions (versions, commits, row counts) from a run's
`MetadataCache`, so a run asks each table's log once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from pipelines.runtime.caching import keep_cached, release_cached
from pipelines.store.metadata import MetadataCache
from pipelines.store.pruning import Bound, select_matching

METADATA_KEY = "userMetadata"  # commitInfo field both engines use for our JSON metadata
KEPT_ROWS = 10_000  # a run keeps `read_rows` answers up to this many rows, for the same question again


def max_micros_key(ref: TableRef, column: str, version: int) -> tuple:
    """The run's `MetadataCache` key of `column`'s newest value at `version` (`Engine.max_micros`)."""
    return ("max_micros", ref.name, column, version)


class ConcurrentWriteError(RuntimeError):
    """Another writer committed a conflicting change; the operation was not applied."""


@dataclass(frozen=True)
class Compaction:
    """What one compaction did: data files removed (merged) and added (their replacements)."""

    files_removed: int
    files_added: int


@dataclass(frozen=True)
class TableRef:
    """One table as an engine reaches it.

    `name`: `<layer>.<table>`, for messages and the run's metadata cache. `path`: the table's
    folder, where the warehouse keeps tables as folders (None for a catalog's managed tables).
    `catalog_name`: the back-quoted name Spark SQL knows it by, where tables are named.
    `changes_read`: later tasks read the rows this table gains (bronze, silver, gold): an engine
    that reads new rows through Delta's change data feed creates the table with it on.
    """

    name: str
    path: str | None = None
    catalog_name: str | None = None
    changes_read: bool = False


class Engine(ABC):
    """Delta operations on tables. Implementations must be atomic per call."""

    name: str
    supports_compaction = False
    names_tables = False  # whether tables also have catalog names (`register`, `catalog_tables`)
    writes_collected = False  # whether its writes take `CollectedRows` as they are (else as a frame)
    keeps_known_logs = False  # whether a run records what it learnt of the logs for the next (`adopt`)

    def __init__(self, spark: SparkSession, cache: MetadataCache | None = None):
        self.spark = spark
        self.cache = cache if cache is not None else MetadataCache(enabled=False)

    def with_session(self, spark: SparkSession) -> Engine:
        """The same engine reading and writing through `spark`, sharing this one's metadata cache."""
        return type(self)(spark, self.cache)

    # -- metadata ----------------------------------------------------------------------------
    @abstractmethod
    def exists(self, ref: TableRef) -> bool: ...

    def prefetch(self, ref: TableRef) -> None:
        """Learn now what a run will ask of the table's log (engines where each question is a
        command of its own); called side by side for many tables (`TableStore.prefetch`).
        Reading its own log is cheap on delta-rs, so it learns there when asked."""
        return None

    def adopt(self, ref: TableRef, known: dict[str, Any]) -> bool:
        """Take `known`, what an earlier run learnt of the table's log (`pipelines.store.known_logs`),
        as this run's answers, where the table is still at the version it names; False (nothing
        taken) otherwise. Engines whose questions cost little take nothing."""
        return False

    def known_log(self, ref: TableRef) -> dict[str, Any] | None:
        """What this run knows of the table's log, for the next run to `adopt` (None: nothing)."""
        return None

    @abstractmethod
    def version(self, ref: TableRef) -> int | None: ...

    def columns(self, ref: TableRef) -> list[str]:
        """The table's column names (its latest schema)."""
        return self.read(ref).columns

    @abstractmethod
    def history(self, ref: TableRef, limit: int | None = None) -> list[dict[str, Any]]:
        """Commits newest first, each with at least `version`, `timestamp` (epoch ms), `operation`
        and `userMetadata`; at most `limit` of them."""

    @abstractmethod
    def only_appended_since(self, ref: TableRef, version: int) -> bool:
        """True when no commit after `version` removed or rewrote rows (an overwrite, a merge, a
        group replacement) and the engine can read what each added: then the rows added since
        are the table's whole change. False when unsure."""

    @abstractmethod
    def count_added_since(self, ref: TableRef, version: int | None) -> int:
        """How many rows `read_added_since` would return (all rows when `version` is None)."""

    def max_micros(self, ref: TableRef, column: str, version: int | None = None) -> int | None:
        """The largest value of the timestamp `column` at `version` (latest when None), in epoch
        microseconds; None when it holds no value. Engines may answer from file statistics,
        which may hold milliseconds only: then up to 1 ms below the exact value."""
        key = max_micros_key(ref, column, version if version is not None else self.version(ref))
        return self.cache.get(
            ref.name,
            key,
            lambda: self.read(ref, version).agg(F.unix_micros(F.max(column)).alias("m")).first()["m"],
        )

    # -- reading -----------------------------------------------------------------------------
    @abstractmethod
    def read(self, ref: TableRef, version: int | None = None) -> DataFrame: ...

    def read_where(
        self, ref: TableRef, selections: list[list[Bound]], version: int | None = None
    ) -> DataFrame:
        """The rows matching any of `selections`, each a list of bounds that must all hold
        (`pipelines.store.pruning`). This default filters the whole table: Spark prunes
        partitions, and Delta's own engine skips files by statistics; engines that list the
        files themselves skip the files that cannot match first."""
        return select_matching(self.read(ref, version), selections)

    @abstractmethod
    def read_added_since(self, ref: TableRef, version: int, until: int | None = None) -> DataFrame:
        """Rows the commits after `version` up to `until` (the latest when None) added; rows a
        rewrite that changes no data (a compaction) moved are not new. Meaningful for tables
        that only gain rows; where the engine cannot tell what those commits added, every row
        of the table at `until` (and `only_appended_since` says False)."""

    def added_rows(self, ref: TableRef, version: int, until: int) -> tuple[pa.Table, StructType]:
        """The rows `read_added_since(ref, version, until)` returns, brought to the driver as Arrow,
        with their Spark schema: one Spark job here; engines that can read the files themselves
        need none."""
        rows = self.read_added_since(ref, version, until)
        return rows.toArrow(), rows.schema

    def read_rows(
        self, ref: TableRef, columns: list[str], selections: list[list[Bound]]
    ) -> list[dict[str, Any]]:
        """The rows matching any of `selections`, as dicts of those of `columns` the table has
        (bookkeeping tables, which hold files or runs, not records). Engines may answer without
        a Spark job."""

        def ask() -> list[dict[str, Any]]:
            df = self.read_where(ref, selections)
            present = [c for c in columns if c in df.columns]
            return [row.asDict() for row in df.select(*present).collect()]

        # a run asks some twice (a task weighed, then run): kept until the table is written
        key = ("rows", tuple(columns), repr(selections))
        rows = self.cache.get(ref.name, key, ask)
        if len(rows) > KEPT_ROWS:
            self.cache.discard(ref.name, key)
        return [dict(row) for row in rows]

    def tally_added_since(
        self, ref: TableRef, version: int | None, by: str, flag: str
    ) -> dict[Any, tuple[int, int]]:
        """Per value of `by` in the rows added after `version` (all rows when None): its rows and
        how many of them have the boolean `flag` set. Engines may count without Spark."""
        df = self.read(ref) if version is None else self.read_added_since(ref, version)
        counts = df.groupBy(by).agg(
            F.count(F.lit(1)).alias("rows"), F.sum(F.col(flag).cast("long")).alias("set")
        )
        return {row[by]: (row["rows"], row["set"] or 0) for row in counts.collect()}

    # -- writing -----------------------------------------------------------------------------
    @abstractmethod
    def append(
        self,
        df: DataFrame,
        ref: TableRef,
        partition_by: list[str],
        metadata: str | None,
        rows: int | None = None,
    ) -> None:
        """`rows`: the caller's count of `df`'s rows (or a bound), if known; engines may ignore it."""

    def commit_no_rows(
        self, df: DataFrame, ref: TableRef, partition_by: list[str], metadata: str | None
    ) -> None:
        """A commit that adds no rows: creates the table with `df`'s columns, or only records
        `metadata` (e.g. a watermark that moved past input holding nothing for this table).
        Engines may skip the Spark job an empty write costs."""
        self.append(df.limit(0), ref, partition_by, metadata)

    def append_rows(self, rows: list[tuple], schema: StructType, ref: TableRef) -> None:
        """Append a few Python rows (bookkeeping); engines may skip Spark for this."""
        if rows:
            self.append(self.spark.createDataFrame(rows, schema), ref, [], None, len(rows))

    @abstractmethod
    def overwrite(
        self,
        df: DataFrame,
        ref: TableRef,
        partition_by: list[str],
        partitions: list[dict[str, Any]] | None,
        metadata: str | None,
        rows: int | None = None,
    ) -> None:
        """Replace the whole table, or only the listed partitions (each a {column: value} dict).
        `rows`: as for `append`."""

    @abstractmethod
    def merge(
        self,
        df: DataFrame,
        ref: TableRef,
        keys: list[str],
        delete_flag: str | None,
        metadata: str | None,
        rows: int | None = None,
    ) -> None:
        """Upsert `df` on `keys`; rows whose `delete_flag` column is true delete their match.
        `rows`: as for `append`."""

    def replace_groups(
        self,
        df: DataFrame,
        ref: TableRef,
        group_key: str,
        groups: DataFrame,
        keys: list[str],
        metadata: str | None,
        group_values: list | None = None,
        rows: int | None = None,
    ) -> int:
        """Atomically delete the rows whose `group_key` is in `groups` (a frame with that column) or
        whose `keys` match a row of `df`, and insert `df`; returns the rows of `df` written.
        `group_values`, when given, are the values of `groups` (collected by the caller);
        `rows`, when given, how many rows `df` holds (as for `append`).

        This default is a merge on `keys` that also deletes the groups' rows `df` no longer has;
        engines may rewrite only the data files holding affected rows instead.
        """
        flag = "_delete"
        new_rows = keep_cached(df)
        try:
            count = new_rows.count() if rows is None else rows
            if not self.exists(ref):
                self.append(new_rows, ref, [], metadata, count)
                return count
            current = self.read(ref).join(groups.select(group_key).distinct(), group_key, "left_semi")
            stale = current.join(new_rows.select(*keys), keys, "left_anti")
            changes = new_rows.withColumn(flag, F.lit(False)).unionByName(
                stale.withColumn(flag, F.lit(True)), allowMissingColumns=True
            )
            self.merge(changes, ref, keys, flag, metadata)
            return count
        finally:
            release_cached(new_rows)

    def replace_where(
        self,
        df: DataFrame,
        ref: TableRef,
        selections: list[list[Bound]],
        metadata: str | None,
        rows: int | None = None,
    ) -> int:
        """Atomically delete the rows matching any of `selections` (each: all of its bounds) and
        insert `df`, every row of which matches one of them; returns the rows of `df` written.
        Only files that may hold a matching row are read or rewritten."""
        raise NotImplementedError(f"the {self.name} engine does not replace rows by selection")

    # -- maintenance -------------------------------------------------------------------------
    def compactable_files(self, ref: TableRef, target_bytes: int) -> int:
        """How many data files `compact` would merge: those smaller than `target_bytes` in a
        partition holding at least two of them (0 where the engine does not compact)."""
        return 0

    def small_files_written(self, ref: TableRef, target_bytes: int) -> int | None:
        """At least how many files under `target_bytes` the commits since the table's last
        compaction wrote, from its commit history (no file listed), or None when the engine
        cannot tell: `compactable_files` is only worth asking once this reaches the policy's count."""
        return None

    def compact(self, ref: TableRef, target_bytes: int) -> Compaction:
        """Merge the small files into files of about `target_bytes`, in one commit that changes
        no data (`dataChange: false`), so incremental readers see no new rows."""
        raise NotImplementedError(f"the {self.name} engine does not compact tables")

    @abstractmethod
    def delete_files_not_referenced(self, ref: TableRef, retention_hours: float, dry_run: bool) -> list[str]:
        """Remove data files no snapshot within the retention needs (crashed writes, old versions)."""

    # -- the catalog -------------------------------------------------------------------------
    def register(self, ref: TableRef) -> None:
        """Make the table at `ref.path` known to the catalog as `ref.catalog_name` (engines that name tables)."""
        raise NotImplementedError(f"the {self.name} engine has no catalog")

    def catalog_tables(self, schema: str) -> list[str]:
        """The tables of a catalog schema (engines that name tables)."""
        return []
