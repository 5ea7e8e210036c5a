"""The contract every storage engine fulfils; the TableStore facade calls only this."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from pipelines.store.delta_log import commit_actions

METADATA_KEY = "userMetadata"  # commitInfo field both engines use for our JSON metadata


class ConcurrentWriteError(RuntimeError):
    """Another writer committed a conflicting change; the operation was not applied."""


@dataclass(frozen=True)
class Compaction:
    """What one compaction did: data files removed (merged) and added (their replacements)."""

    files_removed: int
    files_added: int


class Engine(ABC):
    """Delta operations on table paths. Implementations must be atomic per call."""

    name: str

    def __init__(self, spark: SparkSession):
        self.spark = spark

    @abstractmethod
    def exists(self, path: str) -> bool: ...

    @abstractmethod
    def version(self, path: str) -> int | None: ...

    @abstractmethod
    def read(self, path: str, version: int | None = None) -> DataFrame: ...

    @abstractmethod
    def read_added_since(self, path: str, version: int) -> DataFrame:
        """Rows of the data files added after `version` (meaningful for append-only tables)."""

    @abstractmethod
    def append(
        self, df: DataFrame, path: str, partition_by: list[str], metadata: str | None, rows: int | None = None
    ) -> None:
        """`rows`: the caller's count of `df`'s rows (or a bound), if known; engines may ignore it."""

    def commit_no_rows(self, df: DataFrame, path: str, partition_by: list[str], metadata: str | None) -> None:
        """A commit that adds no rows: creates the table with `df`'s columns, or only records
        `metadata` (e.g. a watermark that moved past input holding nothing for this table).
        Engines may skip the Spark job an empty write costs."""
        self.append(df.limit(0), path, partition_by, metadata)

    def append_rows(self, rows: list[tuple], schema: StructType, path: str) -> None:
        """Append a few Python rows (bookkeeping); engines may skip Spark for this."""
        self.append(self.spark.createDataFrame(rows, schema), path, [], None)

    def read_rows(self, path: str, columns: list[str], where: dict[str, Any]) -> list[dict[str, Any]]:
        """The rows whose `where` columns equal the given values, as dicts of those of `columns`
        the table has (bookkeeping tables, which hold files or runs, not records).
        Engines may answer without a Spark job."""
        df = self.read(path)
        for column, value in where.items():
            df = df.where(F.col(column) == F.lit(value))
        present = [c for c in columns if c in df.columns]
        return [row.asDict() for row in df.select(*present).collect()]

    def only_appended_since(self, path: str, version: int) -> bool:
        """True when no commit after `version` removed rows (an overwrite, a merge, a group
        replacement): then the rows added since are the table's whole change. Read from the
        commits in the table's `_delta_log` (both engines write the same protocol); a log that
        cannot be read here (not a local path, commits expired) answers False."""
        current = self.version(path)
        if current is None:
            return False
        try:
            for number in range(version + 1, current + 1):
                for action in commit_actions(path, number):
                    if "remove" in action and action["remove"].get("dataChange", True):
                        return False
        except OSError:
            return False
        return True

    supports_compaction = False
    names_tables = False  # whether tables also have catalog names (`register`, `catalog_tables`)

    def register(self, name: str, path: str) -> None:
        """Make the table at `path` known to the catalog as `name` (engines that name tables)."""
        raise NotImplementedError(f"the {self.name} engine has no catalog")

    def catalog_tables(self, schema: str) -> list[str]:
        """The tables of a catalog schema (engines that name tables)."""
        return []

    def compactable_files(self, path: str, target_bytes: int) -> int:
        """How many data files `compact` would merge: those smaller than `target_bytes` in a
        partition holding at least two of them (0 where the engine does not compact)."""
        return 0

    def compact(self, path: str, target_bytes: int) -> Compaction:
        """Merge the small files into files of about `target_bytes`, in one commit that changes
        no data (`dataChange: false`), so incremental readers see no new rows."""
        raise NotImplementedError(f"the {self.name} engine does not compact tables")

    def count_added_since(self, path: str, version: int | None) -> int:
        """Rows in files added after `version` (all rows when None); engines may use file statistics."""
        df = self.read(path) if version is None else self.read_added_since(path, version)
        return df.count()

    def max_micros(self, path: str, column: str, version: int | None = None) -> int | None:
        """The largest value of the timestamp `column` at `version` (latest when None), in epoch
        microseconds; None when it holds no value. Engines may answer from file statistics,
        which may hold milliseconds only: then up to 1 ms below the exact value."""
        latest = self.read(path, version).agg(F.unix_micros(F.max(column)).alias("m")).first()
        return None if latest is None else latest["m"]

    def tally_added_since(
        self, path: str, version: int | None, by: str, flag: str
    ) -> dict[Any, tuple[int, int]]:
        """Per value of `by` in the files added after `version` (all files when None): its rows
        and how many of them have the boolean `flag` set. Engines may count without Spark."""
        df = self.read(path) if version is None else self.read_added_since(path, version)
        counts = df.groupBy(by).agg(
            F.count(F.lit(1)).alias("rows"), F.sum(F.col(flag).cast("long")).alias("set")
        )
        return {row[by]: (row["rows"], row["set"] or 0) for row in counts.collect()}

    @abstractmethod
    def overwrite(
        self,
        df: DataFrame,
        path: str,
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
        path: str,
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
        path: str,
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
        rows = df.persist()
        try:
            if not self.exists(path):
                count = rows.count()
                self.append(rows, path, [], metadata)
                return count
            current = self.read(path).join(groups.select(group_key).distinct(), group_key, "left_semi")
            stale = current.join(rows.select(*keys), keys, "left_anti")
            changes = rows.withColumn(flag, F.lit(False)).unionByName(
                stale.withColumn(flag, F.lit(True)), allowMissingColumns=True
            )
            count = rows.count()
            self.merge(changes, path, keys, flag, metadata)
            return count
        finally:
            rows.unpersist()

    @abstractmethod
    def history(self, path: str, limit: int | None = None) -> list[dict[str, Any]]:
        """Commits newest first, each with at least `version`, `timestamp`, `operation`, `userMetadata`."""

    @abstractmethod
    def delete_files_not_referenced(self, path: str, retention_hours: float, dry_run: bool) -> list[str]:
        """Remove data files no snapshot within the retention needs (crashed writes, old versions)."""
