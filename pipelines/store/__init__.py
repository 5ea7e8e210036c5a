"""The table store: one interface over two Delta engines.

    store = open_store(spark, config)
    store.append(df, "bronze.datahub_entity_change_events", metadata={"run_id": run_id})
    store.read("silver.datahub_entity_changes")
    store.merge(df, "gold.tag_timeline", keys=["timeline_id"], delete_flag="_delete")
    store.replace_groups(rebuilt, "gold.tag_timeline", "root_urn", touched, keys=["timeline_id"])
    store.read("gold.tag_timeline", version=3)          # time travel
    store.last_metadata("silver.quarantine", "watermark")

Tables are named `<layer>.<table>` and live at `<warehouse>/<layer>/<table>`. With the
delta-spark engine they are also catalog tables: `<schema_prefix><layer>.<table>` in Spark's
session catalog, registered at their folders (so `spark.table("gold.tag_timeline")` and
`DESCRIBE HISTORY gold.tag_timeline` resolve natively); with a `catalog` (Unity Catalog on
Databricks) they are that catalog's managed tables, `<catalog>.<schema_prefix><layer>.<table>`,
and the warehouse folder keeps only the run's own files (lock, validation documents, reports).
Nothing outside this package knows which engine runs.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from pipelines.core.warehouse_layout import LAYERS, folder_tables
from pipelines.store.engine import METADATA_KEY, Compaction, ConcurrentWriteError, Engine
from pipelines.store.parquet_files import STAGING, TEMPORARY, remove_stale

__all__ = [
    "TableStore",
    "open_store",
    "open_configured_store",
    "Compaction",
    "ConcurrentWriteError",
    "make_engine",
    "folder_tables",
]

_WRITE_LOCKS: dict[str, threading.RLock] = {}
_WRITE_LOCKS_GUARD = threading.Lock()


@contextmanager
def _writing(path: str) -> Iterator[None]:
    """One writer per table path in this process: tasks running in parallel share tables
    (`silver.quarantine`, `ops.*`), and a merge reads the table before it commits."""
    with _WRITE_LOCKS_GUARD:
        lock = _WRITE_LOCKS.setdefault(path, threading.RLock())
    with lock:
        yield


def make_engine(spark: SparkSession, name: str = "auto") -> Engine:
    """`delta-spark` when asked for or when its JVM classes are present, else `delta-rs`."""
    from pipelines.runtime.spark import has_delta_jvm

    if name == "auto":
        name = "delta-spark" if has_delta_jvm(spark) else "delta-rs"
    if name == "delta-spark":
        if not has_delta_jvm(spark):
            raise RuntimeError(
                "storage.engine is delta-spark but Delta's JVM classes are not on the session's "
                "classpath (start it with pipelines.runtime.spark.get_spark, which adds them)"
            )
        from pipelines.store.delta_spark import DeltaSparkEngine

        return DeltaSparkEngine(spark)
    if name == "delta-rs":
        from pipelines.store.delta_rs import DeltaRsEngine

        return DeltaRsEngine(spark)
    raise ValueError(f"unknown storage engine '{name}'")


class TableStore:
    """Delta tables of one warehouse, addressed as `<layer>.<table>`."""

    def __init__(
        self,
        warehouse: str | Path,
        engine: Engine,
        catalog: str = "",
        schema_prefix: str = "",
        registered: set[str] | None = None,
    ):
        self.warehouse = Path(warehouse).resolve()
        self.engine = engine
        self.spark = engine.spark
        self.catalog = catalog if engine.names_tables else ""
        self.schema_prefix = schema_prefix
        # catalog names registered in this process, and with a `catalog` the schemas found or
        # created (shared by the stores `for_session` makes)
        self._registered = set() if registered is None else registered

    def for_session(self, spark: SparkSession) -> TableStore:
        """The same warehouse and engine kind, reading and writing through `spark` (a task's
        own session, so its SQL settings apply to the plans the store runs)."""
        return TableStore(
            self.warehouse, type(self.engine)(spark), self.catalog, self.schema_prefix, self._registered
        )

    def path(self, name: str) -> str:
        """The table's folder, `<warehouse>/<layer>/<table>`."""
        layer, table = _split(name)
        return str(self.warehouse / layer / table)

    def catalog_name(self, name: str) -> str | None:
        """The name Spark SQL knows the table by (delta-spark), None where tables are folders only."""
        if not self.engine.names_tables:
            return None
        layer, table = _split(name)
        parts = [self.catalog] if self.catalog else []
        return ".".join(f"`{p}`" for p in [*parts, f"{self.schema_prefix}{layer}", table])

    def ref(self, name: str) -> str:
        """What the engine addresses: the catalog table with a `catalog`, else the folder."""
        return self.catalog_name(name) if self.catalog else self.path(name)

    def register(self, name: str) -> None:
        """Make `name` a catalog table at its folder (delta-spark, session catalog), once per process."""
        qualified = self.catalog_name(name)
        if qualified is None or self.catalog or qualified in self._registered:
            return
        if self.engine.exists(self.path(name)):
            self.engine.register(qualified, self.path(name))
            self._registered.add(qualified)

    def _create_schema(self, name: str) -> None:
        """With a `catalog`: create the schema `name` goes in unless it exists (once per process).
        A table cannot be created in a missing schema, and a new Unity Catalog catalog holds none
        of `<schema_prefix><layer>`. Asked first, so schemas an administrator made beforehand
        need no right to create schemas."""
        if not self.catalog:
            return
        layer, _ = _split(name)
        schema = f"{self.catalog}.{self.schema_prefix}{layer}"
        if schema in self._registered:
            return
        if not self.spark.catalog.databaseExists(schema):
            self.spark.sql(f"CREATE SCHEMA IF NOT EXISTS `{self.catalog}`.`{self.schema_prefix}{layer}`")
        self._registered.add(schema)

    def register_all(self) -> list[str]:
        """Register every table of the warehouse (a new process's session catalog starts empty)."""
        names = self.tables()
        for name in names:
            self.register(name)
        return names

    def exists(self, name: str) -> bool:
        return self.engine.exists(self.ref(name))

    def version(self, name: str) -> int | None:
        """Latest committed version, None when the table does not exist."""
        return self.engine.version(self.ref(name))

    def read(self, name: str, version: int | None = None) -> DataFrame:
        """Current snapshot, or the snapshot at `version` (time travel)."""
        return self.engine.read(self.ref(name), version)

    def read_added_since(self, name: str, version: int | None) -> DataFrame:
        """Rows appended after `version` (all rows when None); for append-only tables."""
        if version is None:
            return self.read(name)
        return self.engine.read_added_since(self.ref(name), version)

    def read_rows(self, name: str, columns: list[str], where: dict[str, Any]) -> list[dict[str, Any]]:
        """A small table's rows matching `where` ({column: value}), as dicts of the `columns` the
        table has, without a Spark job where the engine can (ops bookkeeping: files, runs)."""
        return self.engine.read_rows(self.ref(name), columns, where)

    def only_appended_since(self, name: str, version: int) -> bool:
        """True when every commit after `version` only added rows, so `read_added_since` is the
        whole change since then (False when rows were removed or rewritten, or when unsure)."""
        return self.engine.only_appended_since(self.ref(name), version)

    def count_added_since(self, name: str, version: int | None) -> int:
        """How many rows `read_added_since` would return, from file statistics where the engine can."""
        return self.engine.count_added_since(self.ref(name), version)

    def tally_added_since(
        self, name: str, version: int | None, by: str, flag: str
    ) -> dict[Any, tuple[int, int]]:
        """{value of `by`: (rows, rows with the boolean `flag` set)} over the rows `read_added_since`
        would return, without a Spark job where the engine can (bronze: records per landing file)."""
        return self.engine.tally_added_since(self.ref(name), version, by, flag)

    def append_rows(self, rows: list[tuple], schema: StructType, name: str) -> None:
        """Append a few Python rows (bookkeeping) without the cost of a Spark job where possible."""
        self._create_schema(name)
        with _writing(self.ref(name)):
            self.engine.append_rows(rows, schema, self.ref(name))
        self.register(name)

    def append(
        self,
        df: DataFrame,
        name: str,
        partition_by: list[str] | None = None,
        metadata: dict | None = None,
        rows: int | None = None,
    ) -> None:
        """Add rows in one atomic commit (creates the table on first use). `rows`: how many rows
        `df` holds (or at most), when the caller counted them (a cached batch); an engine may
        then write a small frame without a Spark write."""
        self._create_schema(name)
        with _writing(self.ref(name)):
            self.engine.append(df, self.ref(name), partition_by or [], _encode(metadata), rows)
        self.register(name)

    def commit_no_rows(
        self, df: DataFrame, name: str, partition_by: list[str] | None = None, metadata: dict | None = None
    ) -> None:
        """Record `metadata` in a commit that adds no rows (creates the table with `df`'s columns
        on first use); cheaper than appending an empty frame."""
        self._create_schema(name)
        with _writing(self.ref(name)):
            self.engine.commit_no_rows(df, self.ref(name), partition_by or [], _encode(metadata))
        self.register(name)

    def overwrite(
        self,
        df: DataFrame,
        name: str,
        partition_by: list[str] | None = None,
        partitions: list[dict[str, Any]] | None = None,
        metadata: dict | None = None,
        rows: int | None = None,
    ) -> None:
        """Replace the table, or only `partitions` (e.g. [{"event_date": "2024-01-01"}]), atomically.
        `rows`: as for `append`."""
        self._create_schema(name)
        with _writing(self.ref(name)):
            self.engine.overwrite(df, self.ref(name), partition_by or [], partitions, _encode(metadata), rows)
        self.register(name)

    def merge(
        self,
        df: DataFrame,
        name: str,
        keys: list[str],
        delete_flag: str | None = None,
        metadata: dict | None = None,
        rows: int | None = None,
    ) -> None:
        """Upsert on `keys`; a true `delete_flag` column deletes the matching row instead.
        `rows`: as for `append`."""
        self._create_schema(name)
        with _writing(self.ref(name)):
            self.engine.merge(df, self.ref(name), keys, delete_flag, _encode(metadata), rows)
        self.register(name)

    def replace_groups(
        self,
        df: DataFrame,
        name: str,
        group_key: str,
        groups: DataFrame,
        keys: list[str],
        metadata: dict | None = None,
        group_values: list | None = None,
        rows: int | None = None,
    ) -> int:
        """Replace whole groups: delete the rows whose `group_key` is in `groups` (a frame holding a
        `group_key` column) or whose `keys` match a row of `df`, insert `df`, in one commit.
        Returns the rows of `df` written. With unique `keys` this equals a merge on `keys` that also
        deletes the groups' rows `df` no longer holds, which is how gold replaces recomputed groups.
        `group_values`: the same groups as Python values, when the caller has collected them;
        an engine may then find the rows to replace without a Spark job. `rows`: as for `append`.
        """
        self._create_schema(name)
        with _writing(self.ref(name)):
            written = self.engine.replace_groups(
                df, self.ref(name), group_key, groups, keys, _encode(metadata), group_values, rows
            )
        self.register(name)
        return written

    def history(self, name: str, limit: int | None = None) -> list[dict[str, Any]]:
        """Commits newest first; our metadata decoded under `metadata`."""
        commits = self.engine.history(self.ref(name), limit)
        for commit in commits:
            commit["metadata"] = _decode(commit.get(METADATA_KEY))
        return commits

    def last_metadata(self, name: str, key: str, scan: int = 50) -> Any:
        """Value of `key` in the newest commit that recorded it (None if none did)."""
        return self.last_commit_metadata(name, key, scan).get(key)

    def last_commit_metadata(self, name: str, key: str, scan: int = 50) -> dict[str, Any]:
        """All our metadata of the newest commit that recorded `key` ({} if none did): values
        written together are read back together, never from two different commits."""
        for commit in self.history(name, limit=scan):
            if key in commit["metadata"]:
                return commit["metadata"]
        return {}

    def max_micros(self, name: str, column: str, version: int | None = None) -> int | None:
        """The largest value of the timestamp `column` at `version` (latest when None), in epoch
        microseconds (None when it holds none), from file statistics where the engine can. Delta
        statistics may hold milliseconds only, so it may be up to 1 ms below the exact value."""
        return self.engine.max_micros(self.ref(name), column, version)

    def tables(self) -> list[str]:
        """Every Delta table in the warehouse, as `<layer>.<table>`."""
        if self.catalog:
            return [
                f"{layer}.{table}"
                for layer in LAYERS
                for table in self.engine.catalog_tables(f"`{self.catalog}`.`{self.schema_prefix}{layer}`")
            ]
        return folder_tables(self.warehouse)

    @property
    def compacts(self) -> bool:
        """Whether this store's engine can compact tables (`compact`)."""
        return self.engine.supports_compaction

    def compactable_files(self, name: str, target_bytes: int) -> int:
        """Data files of `name` smaller than `target_bytes` that a compaction would merge
        (those in partitions holding two or more of them); read from the snapshot, no data."""
        return self.engine.compactable_files(self.ref(name), target_bytes)

    def compact(self, name: str, target_bytes: int) -> Compaction:
        """Merge the table's small files into files of about `target_bytes`, atomically. The data,
        its versions' answers and every incremental reader's view stay the same: the commit adds
        no rows (`dataChange: false`), so `read_added_since` never returns the rewritten rows."""
        with _writing(self.ref(name)):
            return self.engine.compact(self.ref(name), target_bytes)

    def vacuum(self, name: str, retention_hours: float, dry_run: bool = False) -> list[str]:
        """Delete files no version within the retention references (and crashed writes' leftovers)."""
        return self.engine.delete_files_not_referenced(self.ref(name), retention_hours, dry_run)

    def vacuum_leftovers(self, retention_hours: float, dry_run: bool = False) -> list[str]:
        """Delete what killed writes left outside any table version, older than the retention:
        merge sources in `<warehouse>/_tmp/<uuid>` and Spark output in `<layer>/<table>/_staging/<uuid>`
        (also of folders that never became a table). Call it under the warehouse lock."""
        removed = remove_stale(str(self.warehouse / TEMPORARY), retention_hours, dry_run)
        for layer in LAYERS:
            for staging in sorted((self.warehouse / layer).glob(f"*/{STAGING}")):
                removed += remove_stale(str(staging), retention_hours, dry_run)
        return removed


def _encode(metadata: dict | None) -> str | None:
    return None if metadata is None else json.dumps(metadata, sort_keys=True, default=str)


def _decode(text: str | None) -> dict:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _split(name: str) -> tuple[str, str]:
    layer, _, table = name.partition(".")
    if layer not in LAYERS or not table or "/" in table or "`" in table or table.startswith("."):
        raise ValueError(f"table name '{name}' must be <layer>.<table> with layer in {LAYERS}")
    return layer, table


def open_store(
    spark: SparkSession,
    warehouse: str | os.PathLike,
    engine: str = "auto",
    catalog: str = "",
    schema_prefix: str = "",
) -> TableStore:
    """A store over `warehouse` with the engine chosen by `engine` (auto-detected by default);
    `catalog` and `schema_prefix` name the catalog tables of the delta-spark engine."""
    return TableStore(warehouse, make_engine(spark, engine), catalog, schema_prefix)


def open_configured_store(spark: SparkSession, config: Any) -> TableStore:
    """The store a run uses: the configuration's warehouse, engine (`auto` resolved for this
    session, `pipelines.runtime.spark.engine_in_use`) and catalog names; with delta-spark, the
    warehouse's tables are registered in the session catalog."""
    from pipelines.runtime.spark import engine_in_use

    storage = config.section("storage")
    store = open_store(
        spark,
        config.warehouse,
        engine_in_use(config, spark),
        storage.get("catalog") or "",
        storage.get("schema_prefix") or "",
    )
    store.register_all()
    return store
