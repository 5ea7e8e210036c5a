"""Delta's own engine (delta-spark, the Databricks runtime's Delta), through Spark SQL by name only.

Used on Databricks, on clusters, over Spark Connect, and locally with `storage.engine:
delta-spark`. Every table is reached by its catalog name (`TableRef.catalog_name`), never
through its folder: Unity Catalog refuses path access to its managed tables, and Spark
Connect clients (serverless jobs, standard access mode) reach Delta through SQL and the
DataFrame API only. A folder is named once, when a table of the local session catalog is
created there (so delta-rs, DuckDB and `lakehouse sql` read the same tables).

What a run asks of a table's log comes from `DESCRIBE HISTORY <name>`, once per table per run
(`MetadataCache`): versions, our commit metadata, whether commits only appended, and how
many rows they added (Delta's operation metrics). The rows added since a version come from
Delta's change data feed (tables later tasks read are created with it), a batch read of the
commits' added files by name: unlike the streaming source it needs no checkpoint or sink,
and a compaction (`dataChange: false`) adds no change data, so rewritten rows are never read
as new (docs/engines.md, "Reading what is new").
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from pipelines.core.locations import NotALocalPath, local_path
from pipelines.core.warehouse_layout import holds_delta_table
from pipelines.runtime import faults
from pipelines.runtime.spark import session_conf, tuning_conf
from pipelines.store import change_feed, delta_spark_writes
from pipelines.store.delta_operations import APPENDS, NO_DATA_CHANGE, REPLACES
from pipelines.store.engine import (
    METADATA_KEY,
    Compaction,
    ConcurrentWriteError,
    Engine,
    TableRef,
    max_micros_key,
)
from pipelines.store.pruning import selections_sql

CHANGE_DATA_FEED = "delta.enableChangeDataFeed"
# The change data feed as the legacy protocol (1, 4) has it, which delta-rs creates too: both
# engines then write each other's tables without table features (docs/engines.md, "Protocol").
CHANGE_DATA_PROTOCOL = {CHANGE_DATA_FEED: "true", "delta.minWriterVersion": "4"}
LISTING_PARALLELISM = "spark.sql.sources.parallelPartitionDiscovery.parallelism"
# An append the caller counted at no more than this many rows is written as one file: Spark would
# write one a partition, and a table taking a few rows a run would gather small files.
ONE_FILE_ROWS = 25_000
HISTORY_WINDOW = 20  # commits a first look at a table's history reads; more only when asked
COMPACTION_LOOKBACK = 100  # commits searched back for the last compaction
VERSION_NOT_FOUND = "DELTA_VERSION_NOT_FOUND"  # what Delta says of a time travel past the newest commit
CHANGE_COLUMNS = ("_change_type", "_commit_version", "_commit_timestamp")
NEW_ROWS = ("insert", "update_postimage")


def _quote(column: str) -> str:
    return "`" + column.replace("`", "``") + "`"


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


# What Delta (and the catalog) say when another writer's commit or creation came first: the
# operation was not applied, and trying it again against the new state is safe.
CONFLICTS = (
    "DELTA_CONCURRENT",  # ConcurrentAppend, ConcurrentDeleteRead, ConcurrentTransaction, ...
    "DELTA_PROTOCOL_CHANGED",
    "DELTA_METADATA_CHANGED",
    "TABLE_OR_VIEW_ALREADY_EXISTS",  # two first writes of a shared table, side by side
    "DELTA_TABLE_ALREADY_EXISTS",  # ... as Delta's own catalog check words it
    "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION",  # ... the other one's files already in its folder
    "ConcurrentAppendException",
    "ProtocolChangedException",
    "MetadataChangedException",
)


def _conflict(exc: Exception, ref: TableRef) -> Exception:
    """A commit Delta refused because another writer's commit conflicts, as `ConcurrentWriteError`."""
    text = f"{type(exc).__name__} {exc}"
    if any(marker in text for marker in CONFLICTS) or "concurrent update" in text.lower():
        return ConcurrentWriteError(f"commit to {ref.name} conflicted with another writer: {exc}")
    return exc


def _folder_of(location: str) -> str:
    """A catalog's table location as a local path where it has one (else as given)."""
    try:
        return local_path(location, encoded=True).rstrip("/")
    except NotALocalPath:
        return location


def _metric(commit: dict[str, Any], name: str) -> int | None:
    value = (commit.get("operationMetrics") or {}).get(name)
    return None if value is None else int(value)


def _mode(commit: dict[str, Any]) -> str:
    return str((commit.get("operationParameters") or {}).get("mode", "Append"))


def _enables_change_data(commit: dict[str, Any]) -> bool:
    """The commit switched the change data feed on (changes before it were not recorded)."""
    if commit["operation"] != "SET TBLPROPERTIES":
        return False
    properties = (commit.get("operationParameters") or {}).get("properties") or "{}"
    try:
        return str(json.loads(properties).get(CHANGE_DATA_FEED, "")).lower() == "true"
    except ValueError:
        return False


def _analysed(frame: DataFrame) -> StructType:
    """The frame's schema: its plan analysed (over Spark Connect too, which analyses lazily)."""
    return frame.schema


def _appends_only(commit: dict[str, Any]) -> bool:
    """The commit added rows and removed none (or changed no data)."""
    operation = commit["operation"]
    if operation in NO_DATA_CHANGE:
        return True
    return operation in APPENDS and (operation != "WRITE" or _mode(commit) == "Append")


def _rows_added(commit: dict[str, Any]) -> int | None:
    """Rows an appending commit added, from Delta's operation metrics (None when not recorded)."""
    if commit["operation"] in NO_DATA_CHANGE:
        return 0
    return _metric(commit, "numOutputRows")


class DeltaSparkEngine(Engine):
    """Delta tables through Delta's Spark SQL, by name."""

    name = "delta-spark"
    supports_compaction = True
    names_tables = True
    keeps_known_logs = True  # each `DESCRIBE HISTORY` is a Spark job

    @staticmethod
    def _name(ref: TableRef) -> str:
        if ref.catalog_name is None:
            raise ValueError(f"{ref.name}: the delta-spark engine reaches tables by catalog name only")
        return ref.catalog_name

    # -- metadata: the table's history, once per run -------------------------------------------
    def exists(self, ref: TableRef) -> bool:
        name = self._name(ref)
        return self.cache.get(
            ref.name, "exists", lambda: bool(self.spark.catalog.tableExists(name.replace("`", "")))
        )

    def _commits(
        self, ref: TableRef, since: int | None = None, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Commits newest first: every one after `since`, or at least the newest `limit` (or
        `HISTORY_WINDOW`), from `DESCRIBE HISTORY` (one Delta command reading commit files in a
        Spark job), kept for the run."""
        if not self.exists(ref):
            return []
        kept = self.cache.peek(ref.name, "commits")
        wanted = max(limit or 0, HISTORY_WINDOW)
        if kept is not None:
            commits, complete = kept
            oldest = commits[-1]["version"] if commits else 0
            covers = complete or (
                (since is None or oldest <= since + 1) and (limit is None or len(commits) >= limit)
            )
            if covers:
                return commits
            if since is not None and commits:
                wanted = max(wanted, commits[0]["version"] - since)
        commits = self._describe_history(ref, wanted)
        complete = len(commits) < wanted or (bool(commits) and commits[-1]["version"] == 0)
        if since is not None and not complete and commits[-1]["version"] > since + 1:
            wanted = commits[0]["version"] - since
            commits = self._describe_history(ref, wanted)
            complete = len(commits) < wanted or commits[-1]["version"] == 0
        self.cache.put(ref.name, "commits", (commits, complete))
        return commits

    def _describe_history(self, ref: TableRef, limit: int) -> list[dict[str, Any]]:
        rows = self.spark.sql(f"DESCRIBE HISTORY {self._name(ref)} LIMIT {int(limit)}").collect()
        commits = []
        for row in rows:
            commit = row.asDict(recursive=True)
            commit["timestamp"] = int(commit["timestamp"].timestamp() * 1000)
            commit.setdefault(METADATA_KEY, commit.get("userMetadata"))
            commits.append(commit)
        return sorted(commits, key=lambda c: c["version"], reverse=True)

    def prefetch(self, ref: TableRef) -> None:
        self._commits(ref)

    def adopt(self, ref: TableRef, known: dict[str, Any]) -> bool:
        """The commits, newest event times and change data setting an earlier run recorded
        (`known_log`), kept as this run's once the table proves to be at the version they describe."""
        try:
            version, commits = int(known["version"]), list(known["commits"])
        except (KeyError, TypeError, ValueError):
            return False
        if not commits or commits[0].get("version") != version or not self._newest_is(ref, version):
            return False
        self.cache.put(ref.name, "exists", True)
        self.cache.put(ref.name, "commits", (commits, bool(known.get("complete"))))
        if isinstance(known.get("change_data_on"), bool):
            self.cache.put(ref.name, "change data on", known["change_data_on"])
        for column, micros in (known.get("max_micros") or {}).items():
            self.cache.put(ref.name, max_micros_key(ref, column, version), micros)
        return True

    def _newest_is(self, ref: TableRef, version: int) -> bool:
        """Whether `version` is the table's newest: it reads at `version` and not at the next. Each
        is the analysis of a time-travel read (the log's listing and its newest checkpoint or
        checksum), not a Spark job."""
        try:
            _analysed(self.read(ref, version))
        except Exception:  # noqa: BLE001 - gone, renamed, recreated shorter: ask the log itself
            return False
        try:
            _analysed(self.read(ref, version + 1))
        except Exception as exc:  # noqa: BLE001 - only "no such version" says it is the newest
            return VERSION_NOT_FOUND in f"{type(exc).__name__} {exc}"
        return False

    def known_log(self, ref: TableRef) -> dict[str, Any] | None:
        """The newest commits this run knows, down to the newest that changed data with the
        pipeline's metadata (what a task's watermark comes from), and the answers kept for that
        version; None when the run knows none (a table it wrote and did not ask again)."""
        kept = self.cache.peek(ref.name, "commits")
        if not kept or not kept[0]:
            return None
        commits, complete = kept
        ours = next(
            (
                i
                for i, c in enumerate(commits)
                if c.get(METADATA_KEY) and c["operation"] not in NO_DATA_CHANGE
            ),
            len(commits) - 1,
        )
        head = commits[: ours + 1]
        version = head[0]["version"]
        known: dict[str, Any] = {
            "version": version,
            "commits": head,
            "complete": complete and ours == len(commits) - 1,
        }
        change_data_on = self.cache.peek(ref.name, "change data on")
        if change_data_on is not None:
            known["change_data_on"] = change_data_on
        micros = {
            key[2]: value
            for key, value in self.cache.items(ref.name)
            if isinstance(key, tuple) and len(key) == 4 and key == max_micros_key(ref, key[2], version)
        }
        if micros:
            known["max_micros"] = micros
        return known

    def version(self, ref: TableRef) -> int | None:
        commits = self._commits(ref)
        return commits[0]["version"] if commits else None

    def history(self, ref: TableRef, limit: int | None = None) -> list[dict[str, Any]]:
        commits = self._commits(ref, limit=limit) if limit else self._commits(ref, since=-1)
        return commits[:limit] if limit else commits

    def _window(self, ref: TableRef, since: int, until: int | None = None) -> list[dict[str, Any]]:
        """The commits after `since` up to `until` (the latest when None), newest first."""
        return [
            c
            for c in self._commits(ref, since=since)
            if c["version"] > since and (until is None or c["version"] <= until)
        ]

    def _changes_recorded(self, ref: TableRef, since: int, until: int | None = None) -> bool:
        """Whether the change data feed holds every commit after `since` up to `until`. A table
        created without it gets it here (its readers read it whole this once)."""
        if not self._change_data_on(ref):
            return False
        until = self.version(ref) if until is None else until
        window = self._window(ref, since, until)
        if any(_enables_change_data(c) for c in window):
            return False
        return self.cache.get(
            ref.name,
            ("feed covers", since, until),
            lambda: change_feed.covers(
                ref.name,
                since,
                window,
                any(c["version"] <= since + 1 for c in self._commits(ref, since=since)),
                lambda: self._changes(ref, since, until).count(),
            ),
        )

    def _changes(self, ref: TableRef, since: int, until: int) -> DataFrame:
        return change_feed.read_changes(self.spark, self._name(ref), since, until)

    def _change_data_on(self, ref: TableRef) -> bool:
        """The table records its change data. A table later tasks read the new rows of
        (`TableRef.changes_read`) that another engine or an older release created without it
        gets it here, in a commit of its own; the others (ops) are left as they are."""

        def ask() -> bool:
            name = self._name(ref)
            rows = self.spark.sql(f"SHOW TBLPROPERTIES {name} ({_sql_string(CHANGE_DATA_FEED)})").collect()
            if rows and str(rows[0]["value"]).lower() == "true":
                return True
            if not ref.changes_read:
                return False
            properties = ", ".join(
                f"{_sql_string(k)} = {_sql_string(v)}" for k, v in CHANGE_DATA_PROTOCOL.items()
            )
            try:
                self.spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ({properties})")
            except Exception as exc:
                raise _conflict(exc, ref) from exc
            self.cache.forget(ref.name)
            return False

        return self.cache.get(ref.name, "change data on", ask)

    def only_appended_since(self, ref: TableRef, version: int) -> bool:
        if not self.exists(ref) or not self._changes_recorded(ref, version):
            return False
        return all(_appends_only(c) for c in self._window(ref, version))

    def count_added_since(self, ref: TableRef, version: int | None) -> int:
        """From Delta's operation metrics of the commits since (no Spark job) where each only
        appended and recorded its rows; else by counting what `read_added_since` returns."""
        if version is not None:
            added = [_rows_added(c) if _appends_only(c) else None for c in self._window(ref, version)]
            if all(n is not None for n in added) and self._changes_recorded(ref, version):
                return sum(added)
            return self.read_added_since(ref, version).count()
        total = self._rows_since_replaced(ref)
        return total if total is not None else self.read(ref).count()

    def _rows_since_replaced(self, ref: TableRef) -> int | None:
        """The table's rows from the metrics of the commits since the last that replaced it whole,
        None when one of them removed rows or recorded no metrics."""
        total = 0
        for commit in self._commits(ref):  # the first look's window: past it, a count is cheaper
            replaced = commit["operation"] in REPLACES or (
                commit["operation"] == "WRITE"
                and _mode(commit) == "Overwrite"
                and not (commit.get("operationParameters") or {}).get("predicate")
            )
            if not (replaced or _appends_only(commit)):
                return None
            added = _rows_added(commit)
            if added is None:
                return None
            total += added
            if replaced:
                return total
        commits = self._commits(ref)
        return total if commits and commits[-1]["version"] == 0 else None

    # -- reading -------------------------------------------------------------------------------
    def read(self, ref: TableRef, version: int | None = None) -> DataFrame:
        reader = self.spark.read.format("delta")
        if version is not None:
            reader = reader.option("versionAsOf", version)
        return reader.table(self._name(ref))

    def read_added_since(self, ref: TableRef, version: int, until: int | None = None) -> DataFrame:
        """The change data feed's inserted rows of the commits after `version` up to `until`; the
        whole table at `until` where the feed does not hold them all."""
        until = self.version(ref) if until is None else until
        if until is None or version >= until:
            return self.read(ref, until).limit(0)
        if not self._changes_recorded(ref, version, until):
            return self.read(ref, until)
        changes = self._changes(ref, version, until)
        return changes.where(F.col("_change_type").isin(*NEW_ROWS)).drop(*CHANGE_COLUMNS)

    # -- writing -------------------------------------------------------------------------------
    @contextmanager
    def _committing(self, failpoint: str, ref: TableRef) -> Iterator[None]:
        """A Delta write or command: refused commits as `ConcurrentWriteError`; where the crash
        tests arm `failpoint`, Delta reaches it as it begins to commit (`faults`)."""
        try:
            with faults.at_delta_commit(self.spark, failpoint, ref.name):
                yield
        except ConcurrentWriteError:
            raise
        except Exception as exc:
            raise _conflict(exc, ref) from exc

    def _save(
        self,
        df: DataFrame,
        ref: TableRef,
        mode: str,
        partition_by: list[str],
        metadata: str | None,
        options: dict[str, str] | None = None,
    ) -> None:
        mode = delta_spark_writes.save_mode(mode, self.exists(ref), metadata)  # records `metadata`
        writer = df.write.format("delta").mode(mode).option("mergeSchema", "true")
        for key, value in {**(options or {}), **delta_spark_writes.metadata_options(metadata)}.items():
            writer = writer.option(key, value)
        if not self.exists(ref):  # a table keeps the layout it was created with
            if partition_by:
                writer = writer.partitionBy(*partition_by)
            if ref.path is not None:  # a table of the session catalog, at its warehouse folder
                writer = writer.option("path", ref.path)
            if ref.changes_read:
                for key, value in CHANGE_DATA_PROTOCOL.items():
                    writer = writer.option(key, value)
        with self._committing("delta_commit", ref):
            writer.saveAsTable(self._name(ref))

    def append(self, df, ref, partition_by, metadata, rows=None) -> None:
        if rows is not None and rows <= ONE_FILE_ROWS:
            df = df.coalesce(1)
        self._save(df, ref, "append", partition_by, metadata)

    def commit_no_rows(
        self, df: DataFrame, ref: TableRef, partition_by: list[str], metadata: str | None
    ) -> None:
        """An empty append, recorded: Delta skips commits that add nothing unless they carry a
        transaction identifier (`delta_spark_writes.recorded_options`)."""
        options = delta_spark_writes.recorded_options(self.version(ref)) if self.exists(ref) else {}
        self._save(df.limit(0), ref, "append", partition_by, metadata, options)

    def append_rows(self, rows: list[tuple], schema: StructType, ref: TableRef) -> None:
        """Bookkeeping rows in one file (a local frame is split over the default parallelism)."""
        if rows:
            self.append(self.spark.createDataFrame(rows, schema), ref, [], None, len(rows))

    def overwrite(self, df, ref, partition_by, partitions, metadata, rows=None) -> None:
        options = {}
        if partitions and self.exists(ref):
            clauses = []
            for spec in partitions:
                parts = [
                    f"{_quote(k)} IS NULL" if v is None else f"{_quote(k)} = {_sql_string(str(v))}"
                    for k, v in spec.items()
                ]
                clauses.append("(" + " AND ".join(parts) + ")")
            options["replaceWhere"] = " OR ".join(clauses)
        self._save(df, ref, "overwrite", partition_by, metadata, options)

    def replace_where(self, df, ref, selections, metadata, rows=None) -> int:
        """Delta's `replaceWhere`: one overwrite commit that deletes the rows matching the
        selections and inserts `df` (Delta checks that each of its rows matches); only the files
        partition pruning and data skipping cannot rule out are read and rewritten."""
        count = df.count() if rows is None else rows
        if not self.exists(ref):
            self.append(df, ref, [], metadata, count)
            return count
        if count is not None and count <= ONE_FILE_ROWS:
            df = df.coalesce(1)
        options = {
            **delta_spark_writes.recorded_options(self.version(ref)),
            "replaceWhere": selections_sql(selections),
        }
        self._save(df, ref, "overwrite", [], metadata, options)  # recorded even when nothing moves
        return count

    def merge(self, df, ref, keys, delete_flag, metadata, rows=None) -> None:
        """`MERGE INTO` by name, with schema evolution, the source as a temporary view."""
        if not self.exists(ref):
            to_insert = df.where(~F.col(delete_flag)).drop(delete_flag) if delete_flag else df
            self.append(to_insert, ref, [], metadata, rows)
            return
        columns = [c for c in df.columns if c != delete_flag]
        view = f"lakehouse_merge_{uuid.uuid4().hex}"
        condition = " AND ".join(f"t.{_quote(k)} = s.{_quote(k)}" for k in keys)
        assignments = ", ".join(f"t.{_quote(c)} = s.{_quote(c)}" for c in columns)
        names = ", ".join(_quote(c) for c in columns)
        values = ", ".join(f"s.{_quote(c)}" for c in columns)
        live = f" AND NOT s.{_quote(delete_flag)}" if delete_flag else ""
        clauses = [f"WHEN MATCHED AND s.{_quote(delete_flag)} THEN DELETE"] if delete_flag else []
        clauses += [
            f"WHEN MATCHED{live} THEN UPDATE SET {assignments}",
            f"WHEN NOT MATCHED{live} THEN INSERT ({names}) VALUES ({values})",
        ]
        statement = (
            f"MERGE WITH SCHEMA EVOLUTION INTO {self._name(ref)} AS t USING {view} AS s ON {condition} "
            + " ".join(clauses)
        )
        df.createOrReplaceTempView(view)
        try:
            self._run_command(statement, ref, metadata, failpoint="merge_commit")
        finally:
            self.spark.catalog.dropTempView(view)

    def replace_groups(self, df, ref, group_key, groups, keys, metadata, group_values=None, rows=None) -> int:
        """One overwrite carrying `metadata` (`delta_spark_writes.replace_groups`): no MERGE,
        which can record commit metadata only through a session setting."""
        return delta_spark_writes.replace_groups(
            self, df, ref, group_key, groups, keys, metadata, group_values, rows
        )

    def _run_command(
        self, statement: str, ref: TableRef, metadata: str | None, failpoint: str = "delta_commit"
    ):
        """A Delta SQL command that commits, with `metadata` as its commit's userMetadata
        (commands take no write options: the session setting, where the compute allows it).
        Returns its result rows."""
        settings = delta_spark_writes.command_settings(self.spark, metadata)
        with session_conf(self.spark, settings), self._committing(failpoint, ref):
            return self.spark.sql(statement).collect()

    # -- maintenance ---------------------------------------------------------------------------
    def compactable_files(self, ref: TableRef, target_bytes: int) -> int:
        """Live files smaller than `target_bytes` in partitions holding two or more of them,
        from the files' metadata columns (their footers only, no rows decoded)."""
        if not self.exists(ref):
            return 0
        partitions = [F.col(_quote(c)) for c in self._partition_columns(ref)]
        files = self.read(ref).select("_metadata.file_path", "_metadata.file_size", *partitions).distinct()
        counts = (
            files.where(F.col("file_size") < target_bytes)
            .groupBy(*partitions)
            .agg(F.count(F.lit(1)).alias("n"))
            .collect()
        )
        return sum(row["n"] for row in counts if row["n"] > 1)

    def small_files_written(self, ref: TableRef, target_bytes: int) -> int | None:
        """From the operation metrics of the commits since the last `OPTIMIZE` (or the table's
        replacement): the files of those whose average file is under `target_bytes`."""
        small = 0
        for commit in self._commits(ref, limit=COMPACTION_LOOKBACK):
            if commit["operation"] == "OPTIMIZE":
                break
            files = _metric(commit, "numFiles") or _metric(commit, "numTargetFilesAdded") or 0
            written = _metric(commit, "numOutputBytes") or 0
            if files and written / files < target_bytes:
                small += files
            if commit["operation"] in REPLACES:  # the table's first files, or a replacement's
                break
        return small

    def _partition_columns(self, ref: TableRef) -> list[str]:
        detail = self.spark.sql(f"DESCRIBE DETAIL {self._name(ref)}").select("partitionColumns").first()
        return list(detail[0] or [])

    def compact(self, ref: TableRef, target_bytes: int) -> Compaction:
        """Delta's own `OPTIMIZE`: bins the files below `target_bytes` per partition and commits
        with `dataChange: false`."""
        if not self.exists(ref):
            raise FileNotFoundError(f"no Delta table {ref.name}")
        settings = {
            "spark.databricks.delta.optimize.maxFileSize": str(target_bytes),
            "spark.databricks.delta.optimize.minFileSize": str(target_bytes),
        }
        with tuning_conf(self.spark, settings):  # serverless: Delta's own file sizes
            result = self._run_command(f"OPTIMIZE {self._name(ref)}", ref, None)
        metrics = result[0]["metrics"] if result else None
        if metrics is None:
            return Compaction(files_removed=0, files_added=0)
        return Compaction(
            files_removed=int(metrics["numFilesRemoved"]), files_added=int(metrics["numFilesAdded"])
        )

    def delete_files_not_referenced(self, ref: TableRef, retention_hours: float, dry_run: bool) -> list[str]:
        """Delta's own VACUUM (retention below Delta's 7-day guard allowed: the caller chose it).
        The files are listed by a dry run first: VACUUM itself answers with the table's path only.
        Delta lists the table's folders in `parallelPartitionDiscovery.parallelism` tasks, 10,000
        by default: a local session spent minutes a table scheduling them, so the listing gets a
        task a core."""
        if not self.exists(ref):
            return []
        vacuum = f"VACUUM {self._name(ref)} RETAIN {float(retention_hours)} HOURS"
        settings = {
            "spark.databricks.delta.retentionDurationCheck.enabled": "false",
            LISTING_PARALLELISM: str(os.cpu_count() or 2),
        }
        with tuning_conf(self.spark, settings):  # serverless: Delta's 7-day guard stays
            files = [row[0] for row in self.spark.sql(f"{vacuum} DRY RUN").collect()]
            if files and not dry_run:
                self.spark.sql(vacuum).collect()
        return files

    # -- the catalog ---------------------------------------------------------------------------
    def register(self, ref: TableRef) -> None:
        """The Delta table at `ref.path` as the session catalog's `ref.catalog_name`. A catalog
        that already names another folder so (a Spark Connect server other warehouses use too)
        is refused: the warehouse needs a schema prefix of its own."""
        if ref.path is None:
            return
        name = self._name(ref)
        if self.spark.catalog.tableExists(name.replace("`", "")):
            rows = self.spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()
            location = next((r["data_type"] for r in rows if r["col_name"] == "Location"), None)
            if location is not None and _folder_of(location) != ref.path.rstrip("/"):
                raise ValueError(
                    f"{name} names the table at {location} in this session's catalog, not {ref.path}: "
                    "give this warehouse a schema prefix of its own (storage.schema_prefix)"
                )
            return
        if holds_delta_table(ref.path):  # else created there by its first write
            self.spark.sql(f"CREATE TABLE IF NOT EXISTS {name} USING DELTA LOCATION {_sql_string(ref.path)}")
            self.cache.forget(ref.name)

    def catalog_tables(self, schema: str) -> list[str]:
        if not self.spark.catalog.databaseExists(schema.replace("`", "")):
            return []
        rows = self.spark.sql(f"SHOW TABLES IN {schema}").collect()
        return sorted(row["tableName"] for row in rows if not row["isTemporary"])
