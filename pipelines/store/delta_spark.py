"""The JVM engine: Delta's own Spark classes (`format("delta")`, `DeltaTable.merge`, `optimize`).

Used on Databricks, on clusters, and locally with `storage.engine: delta-spark` (the session
then carries Delta's jars, `pipelines.runtime.spark.get_spark`). Behaviour matches the delta-rs engine;
the same test suites run against both.

A table is addressed by its folder or, with a catalog (Unity Catalog), by its back-quoted
catalog name (`` `main`.`gold`.`tag_timeline` ``): every method takes either.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import unquote, urlparse

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from pipelines.runtime import faults
from pipelines.runtime.spark import session_conf
from pipelines.store.delta_log import commit_actions
from pipelines.store.engine import METADATA_KEY, Compaction, ConcurrentWriteError, Engine

USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
LISTING_PARALLELISM = "spark.sql.sources.parallelPartitionDiscovery.parallelism"
# An append the caller counted at no more than this many rows is written as one file: Spark would
# write one a partition, and a table taking a few rows a run would gather small files.
ONE_FILE_ROWS = 25_000


def _quote(column: str) -> str:
    return "`" + column.replace("`", "``") + "`"


def _is_name(ref: str) -> bool:
    """A back-quoted catalog name rather than a folder."""
    return ref.startswith("`")


def _sql_ref(ref: str) -> str:
    """The table as Spark SQL names it: its catalog name, or delta.`<folder>`."""
    return ref if _is_name(ref) else f"delta.{_quote(ref)}"


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


OBSERVERS = "org.apache.spark.sql.delta.TransactionExecutionObserver"


class _CommitCheckpoint:
    """Delta's transaction observer (its hook into a transaction's phases), implemented in Python:
    when the transaction begins its commit, after its data files are written and before the log
    holds the commit, it reaches `faults.checkpoint(name, target)`, where delta-rs reaches it."""

    def __init__(self, name: str, target: str, jvm):
        self.name, self.target, self._jvm = name, target, jvm

    def beginDoCommit(self) -> None:  # the JVM interface's method names
        faults.checkpoint(self.name, self.target)

    def startingTransaction(self, start):
        return start.apply()

    def preparingCommit(self, prepare):
        return prepare.apply()

    def beginBackfill(self) -> None:
        pass

    def beginPostCommit(self) -> None:
        pass

    def transactionCommitted(self) -> None:
        pass

    def transactionAborted(self) -> None:
        pass

    def createChild(self):
        return _no_observer(self._jvm)

    def nextObserver(self):
        return self._jvm.scala.Option.empty()

    def getNextObserver(self):
        return self._jvm.scala.Option.empty()

    def setNextObserver(self, observer) -> None:
        pass

    def advanceToNextThreadObserver(self) -> None:
        pass

    class Java:
        implements = [OBSERVERS]


setattr(_CommitCheckpoint, "nextObserver_$eq", _CommitCheckpoint.setNextObserver)  # Scala's setter name


def _no_observer(jvm):
    """Delta's default observer, which does nothing."""
    return getattr(getattr(jvm.org.apache.spark.sql.delta, "NoOpTransactionExecutionObserver$"), "MODULE$")


class DeltaSparkEngine(Engine):
    """Delta tables through delta-spark's JVM implementation."""

    name = "delta-spark"
    supports_compaction = True
    names_tables = True

    def _delta_table(self, ref: str):
        from delta.tables import DeltaTable

        return DeltaTable.forName(self.spark, ref) if _is_name(ref) else DeltaTable.forPath(self.spark, ref)

    @contextmanager
    def _failpoint(self, name: str, ref: str) -> Iterator[None]:
        """Where `LAKEHOUSE_FAULT` names checkpoint `name` at `ref`, the Delta transactions run
        inside, on this thread, reach it as they begin to commit (`pipelines.runtime.faults`)."""
        if not faults.armed(name, ref):
            yield
            return
        from pyspark.java_gateway import ensure_callback_server_started

        gateway = self.spark.sparkContext._gateway  # type: ignore[attr-defined]
        ensure_callback_server_started(gateway)
        jvm = self.spark.sparkContext._jvm  # type: ignore[attr-defined]
        observers = getattr(jvm, OBSERVERS)
        observers.setObserver(_CommitCheckpoint(name, ref, jvm))
        try:
            yield
        finally:
            observers.setObserver(_no_observer(jvm))

    def exists(self, ref: str) -> bool:
        from delta.tables import DeltaTable

        if _is_name(ref):
            return bool(self.spark.catalog.tableExists(ref.replace("`", "")))
        return DeltaTable.isDeltaTable(self.spark, ref)

    def version(self, ref: str) -> int | None:
        if not self.exists(ref):
            return None
        return int(self._delta_table(ref).history(1).select("version").first()[0])

    def read(self, ref: str, version: int | None = None) -> DataFrame:
        reader = self.spark.read.format("delta")
        if version is not None:
            reader = reader.option("versionAsOf", version)
        return reader.table(ref) if _is_name(ref) else reader.load(ref)

    # -- incremental reads: from the log's add actions ------------------------------------
    def _location(self, ref: str) -> str:
        if not _is_name(ref):
            return ref
        return str(self._delta_table(ref).detail().select("location").first()[0])

    def _commit_actions(self, location: str, number: int) -> list[dict[str, Any]]:
        """One commit's actions: read as a local file where the table is local, else by Spark."""
        parsed = urlparse(location)
        if parsed.scheme in ("", "file"):
            return commit_actions(parsed.path if parsed.scheme else location, number)
        lines = self.spark.read.text(f"{location.rstrip('/')}/_delta_log/{number:020d}.json").collect()
        return [json.loads(row[0]) for row in lines if row[0].strip()]

    def _data_files_added_since(self, ref: str, version: int) -> dict[str, int | None] | None:
        """The files whose `add` changed data after `version` and that no later data change
        removed, each with None while it is live, or with the version that added it when a
        rewrite (a compaction: `dataChange: false`) has since replaced it: its rows live on in
        the rewritten file, which carries no new rows, so they are read as of that version.
        None when a commit is no longer in the log."""
        current = self.version(ref)
        location = self._location(ref)
        added: dict[str, int] = {}  # path -> the version whose commit added it
        rewritten: set[str] = set()
        try:
            for number in range(version + 1, (current or 0) + 1):
                for action in self._commit_actions(location, number):
                    if "add" in action and action["add"].get("dataChange", True):
                        added[action["add"]["path"]] = number
                    elif "remove" in action and action["remove"].get("dataChange", True):
                        added.pop(action["remove"]["path"], None)
                    elif "remove" in action and action["remove"]["path"] in added:
                        rewritten.add(action["remove"]["path"])
        except FileNotFoundError:
            return None
        return {path: (at if path in rewritten else None) for path, at in added.items()}

    def read_added_since(self, ref: str, version: int) -> DataFrame:
        current = self.read(ref)
        if version < 0:
            return current
        files = self._data_files_added_since(ref, version)
        if files is None:
            raise FileNotFoundError(f"{ref}: commits after {version} are no longer in the Delta log")
        by_version: dict[int | None, list[str]] = {}
        for path, at in files.items():
            # a file's place in the table: its name (log paths are relative and URL-encoded)
            by_version.setdefault(at, []).append(unquote(path.rsplit("/", 1)[-1]))
        parts = [
            (current if at is None else self.read(ref, at)).where(
                F.col("_metadata.file_name").isin(sorted(names))
            )
            for at, names in sorted(by_version.items(), key=lambda item: -1 if item[0] is None else item[0])
        ]
        if not parts:
            return current.limit(0)
        return functools.reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), parts).select(
            *current.columns
        )

    def only_appended_since(self, ref: str, version: int) -> bool:
        current = self.version(ref)
        if current is None:
            return False
        location = self._location(ref)
        try:
            for number in range(version + 1, current + 1):
                for action in self._commit_actions(location, number):
                    if "remove" in action and action["remove"].get("dataChange", True):
                        return False
        except OSError:
            return False
        return True

    # -- writing ---------------------------------------------------------------------------
    def _writer(self, df: DataFrame, mode: str, partition_by: list[str], metadata: str | None):
        writer = df.write.format("delta").mode(mode).option("mergeSchema", "true")
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        if metadata is not None:
            writer = writer.option("userMetadata", metadata)
        return writer

    @staticmethod
    def _save(writer, ref: str) -> None:
        if _is_name(ref):
            writer.saveAsTable(ref)
        else:
            writer.save(ref)

    def _conflict(self, exc: Exception, ref: str) -> Exception:
        if "Concurrent" in type(exc).__name__ or "concurrent" in str(exc).lower():
            return ConcurrentWriteError(f"commit to {ref} conflicted with another writer: {exc}")
        return exc

    def append(self, df, path, partition_by, metadata, rows=None) -> None:
        if rows is not None and rows <= ONE_FILE_ROWS:
            df = df.coalesce(1)
        try:
            with self._failpoint("delta_commit", path):
                self._save(self._writer(df, "append", partition_by, metadata), path)
        except Exception as exc:
            raise self._conflict(exc, path) from exc

    def append_rows(self, rows: list[tuple], schema: StructType, path: str) -> None:
        """Bookkeeping rows in one file (a local frame is split over the default parallelism)."""
        if rows:
            self.append(self.spark.createDataFrame(rows, schema), path, [], None, len(rows))

    def commit_no_rows(self, df: DataFrame, path: str, partition_by: list[str], metadata: str | None) -> None:
        """An empty append, recorded: Delta skips commits that add nothing unless told not to."""
        with session_conf(self.spark, {"spark.databricks.delta.skipRecordingEmptyCommits": "false"}):
            self.append(df.limit(0), path, partition_by, metadata)

    def overwrite(self, df, path, partition_by, partitions, metadata, rows=None) -> None:
        writer = self._writer(df, "overwrite", partition_by, metadata)
        if partitions and self.exists(path):
            clauses = []
            for spec in partitions:
                parts = [
                    f"{_quote(k)} IS NULL" if v is None else f"{_quote(k)} = {_sql_string(str(v))}"
                    for k, v in spec.items()
                ]
                clauses.append("(" + " AND ".join(parts) + ")")
            writer = writer.option("replaceWhere", " OR ".join(clauses))
        try:
            with self._failpoint("delta_commit", path):
                self._save(writer, path)
        except Exception as exc:
            raise self._conflict(exc, path) from exc

    def merge(self, df, path, keys, delete_flag, metadata, rows=None) -> None:
        if not self.exists(path):
            to_insert = df.where(~F.col(delete_flag)).drop(delete_flag) if delete_flag else df
            self.append(to_insert, path, [], metadata)
            return
        columns = [c for c in df.columns if c != delete_flag]
        values = {_quote(c): f"s.{_quote(c)}" for c in columns}
        condition = " AND ".join(f"t.{_quote(k)} = s.{_quote(k)}" for k in keys)
        live = f"NOT s.{_quote(delete_flag)}" if delete_flag else None
        builder = self._delta_table(path).alias("t").merge(df.alias("s"), condition)
        if delete_flag:
            builder = builder.whenMatchedDelete(condition=f"s.{_quote(delete_flag)}")
        builder = builder.whenMatchedUpdate(condition=live, set=values).whenNotMatchedInsert(
            condition=live, values=values
        )
        with self._failpoint("merge_commit", path):
            self._with_metadata(metadata, builder.execute, path)

    def _with_metadata(self, metadata: str | None, action, ref: str):
        """Run `action` (a DeltaTable operation, which takes no write options) with `metadata`
        as the commit's userMetadata."""
        if metadata is not None:
            self.spark.conf.set(USER_METADATA, metadata)
        try:
            return action()
        except Exception as exc:
            raise self._conflict(exc, ref) from exc
        finally:
            if metadata is not None:
                self.spark.conf.unset(USER_METADATA)

    # -- history and maintenance -----------------------------------------------------------
    def history(self, path: str, limit: int | None = None) -> list[dict[str, Any]]:
        if not self.exists(path):
            return []
        table = self._delta_table(path)
        frame = table.history(limit) if limit else table.history()
        rows = [row.asDict(recursive=True) for row in frame.collect()]
        for row in rows:
            row["timestamp"] = int(row["timestamp"].timestamp() * 1000)
            row.setdefault(METADATA_KEY, row.get("userMetadata"))
        return sorted(rows, key=lambda r: r["version"], reverse=True)

    def compactable_files(self, path: str, target_bytes: int) -> int:
        """Live files smaller than `target_bytes` in partitions holding two or more of them,
        from the files' metadata columns (their footers only, no rows decoded)."""
        if not self.exists(path):
            return 0
        partitions = [F.col(_quote(c)) for c in self._partition_columns(path)]
        files = self.read(path).select("_metadata.file_path", "_metadata.file_size", *partitions).distinct()
        counts = (
            files.where(F.col("file_size") < target_bytes)
            .groupBy(*partitions)
            .agg(F.count(F.lit(1)).alias("n"))
            .collect()
        )
        return sum(row["n"] for row in counts if row["n"] > 1)

    def _partition_columns(self, path: str) -> list[str]:
        return list(self._delta_table(path).detail().select("partitionColumns").first()[0] or [])

    def compact(self, path: str, target_bytes: int) -> Compaction:
        """Delta's own `OPTIMIZE` (`DeltaTable.optimize().executeCompaction()`): bins the files
        below `target_bytes` per partition and commits with `dataChange: false`."""
        if not self.exists(path):
            raise FileNotFoundError(f"no Delta table at {path}")
        settings = {
            "spark.databricks.delta.optimize.maxFileSize": str(target_bytes),
            "spark.databricks.delta.optimize.minFileSize": str(target_bytes),
        }
        with session_conf(self.spark, settings):
            result = self._delta_table(path).optimize().executeCompaction().first()
        metrics = result["metrics"] if result is not None else None
        if metrics is None:
            return Compaction(files_removed=0, files_added=0)
        return Compaction(
            files_removed=int(metrics["numFilesRemoved"]), files_added=int(metrics["numFilesAdded"])
        )

    def delete_files_not_referenced(self, path: str, retention_hours: float, dry_run: bool) -> list[str]:
        """Delta's own VACUUM (retention below Delta's 7-day guard allowed: the caller chose it).
        The files are listed by a dry run first: VACUUM itself answers with the table's path only.
        Delta lists the table's folders in `parallelPartitionDiscovery.parallelism` tasks, 10,000
        by default: a local session spent minutes a table scheduling them, so the listing gets the
        session's default parallelism (a task a core)."""
        if not self.exists(path):
            return []
        self.spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
        vacuum = f"VACUUM {_sql_ref(path)} RETAIN {float(retention_hours)} HOURS"
        listing = {LISTING_PARALLELISM: str(self.spark.sparkContext.defaultParallelism)}
        with session_conf(self.spark, listing):
            files = [row[0] for row in self.spark.sql(f"{vacuum} DRY RUN").collect()]
            if files and not dry_run:
                self.spark.sql(vacuum).collect()
        return files

    # -- the catalog -----------------------------------------------------------------------
    def register(self, name: str, path: str) -> None:
        schema = name.rsplit(".", 1)[0]
        self.spark.sql(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        self.spark.sql(f"CREATE TABLE IF NOT EXISTS {name} USING DELTA LOCATION {_sql_string(path)}")

    def catalog_tables(self, schema: str) -> list[str]:
        if not self.spark.catalog.databaseExists(schema.replace("`", "")):
            return []
        rows = self.spark.sql(f"SHOW TABLES IN {schema}").collect()
        return sorted(row["tableName"] for row in rows if not row["isTemporary"])
