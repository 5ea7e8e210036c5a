"""The table store: Delta tables of one warehouse, addressed as `<layer>.<table>`, over two engines.

    store = open_store(spark, "warehouse", "delta-rs")
    store.append(df, "bronze.datahub_entity_change_events", metadata={"run_id": run_id})
    store.read("silver.datahub_entity_changes")
    store.merge(df, "gold.tag_timeline", keys=["timeline_id"], delete_flag="_delete")
    store.replace_groups(rebuilt, "gold.tag_timeline", "root_urn", touched, keys=["timeline_id"])
    store.read("gold.tag_timeline", version=3)          # time travel
    store.last_metadata("silver.datahub_entity_changes", "source_version")

Where tables live: with the delta-rs engine, at `<warehouse>/<layer>/<table>`. With delta-spark
they are catalog tables too, and the engine reaches them by name only: without a `catalog`,
`<schema_prefix><layer>.<table>` in Spark's session catalog, created at those folders (so
delta-rs, DuckDB and `lakehouse sql` read the same tables); with a `catalog` (Unity Catalog on
Databricks), that catalog's managed tables `<catalog>.<schema_prefix><layer>.<table>`, whose
folders the store never knows (`path` refuses), and the warehouse folder keeps only the run's
own files (lock, validation documents, reports). Nothing outside this package knows which
engine runs.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from pipelines.core.unity_catalog import catalog_unusable
from pipelines.core.warehouse_layout import LAYERS, folder_tables
from pipelines.store import known_logs
from pipelines.store.catalog_access import CatalogUnusable, identity
from pipelines.store.collected import CollectedRows, Rows, as_frame
from pipelines.store.engine import METADATA_KEY, Compaction, ConcurrentWriteError, Engine, TableRef
from pipelines.store.metadata import MetadataCache
from pipelines.store.parquet_files import STAGING, TEMPORARY, remove_stale
from pipelines.store.pruning import Bound, In

# Later tasks read the rows these tables gain: silver bronze's, gold silver's and, for the
# governance tables, other gold tables' (the timelines, the proposals).
CHANGES_READ_LAYERS = ("bronze", "silver", "gold")
SIDE_BY_SIDE = 8  # catalog commands asked at once (each mostly waits on the log's files)
WRITE_ATTEMPTS = 5  # a write that still conflicts with another writer's commit is tried again
T = TypeVar("T")

_WRITE_LOCKS: dict[str, threading.RLock] = {}
_WRITE_LOCKS_GUARD = threading.Lock()


@contextmanager
def _writing(table: str) -> Iterator[None]:
    """One writer per table in this process: tasks running in parallel share tables
    (`silver.quarantine`, `ops.*`), and a merge reads the table before it commits."""
    with _WRITE_LOCKS_GUARD:
        lock = _WRITE_LOCKS.setdefault(table, threading.RLock())
    with lock:
        yield


def _side_by_side(action: Callable[[str], None], names: list[str]) -> None:
    """`action` for each name, up to `SIDE_BY_SIDE` at once; the first error raised."""
    if len(names) <= 1:
        for name in names:
            action(name)
        return
    with ThreadPoolExecutor(min(SIDE_BY_SIDE, len(names)), thread_name_prefix="catalog") as pool:
        for _ in pool.map(action, names):
            pass


class CatalogTableError(ValueError):
    """A catalog's managed table was asked for its folder, which only the catalog knows."""


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
        # catalog names registered in this process, and the schemas found or created
        # (shared by the stores `for_session` and `for_run` make)
        self._registered = set() if registered is None else registered

    def _like(self, engine: Engine) -> TableStore:
        return TableStore(self.warehouse, engine, self.catalog, self.schema_prefix, self._registered)

    def for_session(self, spark: SparkSession) -> TableStore:
        """The same warehouse and engine kind, reading and writing through `spark` (a task's
        own session, so its SQL settings apply to the plans the store runs); what the run knows
        of the tables (`for_run`) is shared."""
        return self._like(self.engine.with_session(spark))

    def for_run(self) -> TableStore:
        """This store for one run: it keeps what it learns of each table's log (version,
        commits, row counts) until it writes that table (`pipelines.store.metadata`)."""
        return self._like(type(self.engine)(self.spark, MetadataCache()))

    # -- names -------------------------------------------------------------------------------
    @property
    def engine_name(self) -> str:
        """`delta-rs` or `delta-spark`, for the run's first line."""
        return self.engine.name

    @property
    def names_tables(self) -> bool:
        """Whether Spark SQL knows the tables by name (delta-spark): `lakehouse sql` then
        queries them natively, `DESCRIBE HISTORY gold.x` included."""
        return self.engine.names_tables

    @property
    def knows_folders(self) -> bool:
        """Whether the tables are folders of the warehouse (False for a catalog's managed tables)."""
        return not self.catalog

    def path(self, name: str) -> str:
        """The table's folder, `<warehouse>/<layer>/<table>`; refused for a catalog's managed
        table, whose files are the catalog's (Unity Catalog reads them by name only)."""
        layer, table = _split(name)
        if not self.knows_folders:
            raise CatalogTableError(
                f"{name} is the catalog table {self.catalog_name(name)}: its folder is the catalog's, "
                "read it by name"
            )
        return str(self.warehouse / layer / table)

    def catalog_name(self, name: str) -> str | None:
        """The name Spark SQL knows the table by (delta-spark), None where tables are folders only."""
        if not self.engine.names_tables:
            return None
        layer, table = _split(name)
        parts = [self.catalog] if self.catalog else []
        return ".".join(f"`{p}`" for p in [*parts, f"{self.schema_prefix}{layer}", table])

    def ref(self, name: str) -> TableRef:
        """How the engine reaches `name`. Where the session catalog names the tables (delta-spark
        without a `catalog`), the name is first made this warehouse's (`register`): a session
        that names another warehouse's table so (a Spark Connect server others use, a process
        that opened another warehouse) is refused rather than read or written."""
        self.register(name)
        return self._ref(name)

    def _ref(self, name: str) -> TableRef:
        layer, _ = _split(name)
        return TableRef(
            name,
            path=self.path(name) if self.knows_folders else None,
            catalog_name=self.catalog_name(name),
            changes_read=layer in CHANGES_READ_LAYERS,
        )

    def register(self, name: str) -> None:
        """Make `name` the session catalog's table at this warehouse's folder (delta-spark without a
        `catalog`), once per process: registered where the folder holds a table, checked where
        the catalog names one already."""
        qualified = self.catalog_name(name)
        if qualified is None or self.catalog or qualified in self._registered:
            return
        self._create_schema(name)
        self.engine.register(self._ref(name))
        self._registered.add(qualified)

    def register_all(self) -> list[str]:
        """Register every table of the warehouse (a new process's session catalog starts empty),
        several at once."""
        names = self.tables()
        if self.engine.names_tables and not self.catalog:
            for name in {_split(name)[0]: name for name in names}.values():  # one per schema, first
                self._create_schema(name)
            _side_by_side(self.register, names)
        return names

    def prefetch(self, names: Iterable[str]) -> None:
        """Ask the logs of `names` what a run will ask of them, several tables at once, before
        its tasks ask one by one (a store `for_run` keeps the answers). On delta-spark each
        table's history is a Delta command of its own (about 0.1 s): a run with nothing new
        spent most of its time asking forty tables in turn. A table that cannot be asked now is
        left for the task that needs it to report."""

        known = known_logs.load(self.warehouse, self._identity()) if self.engine.keeps_known_logs else {}

        def ask(name: str) -> None:
            try:
                ref = self.ref(name)
                if name not in known or not self.engine.adopt(ref, known[name]):
                    self.engine.prefetch(ref)
            except Exception:  # noqa: BLE001 - the task asking the same question reports it
                pass

        _side_by_side(ask, list(dict.fromkeys(names)))

    def remember_logs(self, names: Iterable[str]) -> None:
        """At a run's end: record what it knows of the logs of `names` for the next run to start
        from (`pipelines.store.known_logs`), on engines where asking a log costs a Spark job. The
        tables it wrote are asked once more here, several at once, rather than by the next run.
        Entries of other tables stay as they were (the next run checks each before taking it)."""
        if not self.engine.keeps_known_logs:
            return
        names = list(dict.fromkeys(names))
        _side_by_side(self._ask_again, names)
        entries = known_logs.load(self.warehouse, self._identity())
        for name in names:
            entry = self.engine.known_log(self._ref(name))
            if entry is None:
                entries.pop(name, None)
            else:
                entries[name] = entry
        known_logs.save(self.warehouse, self._identity(), entries)

    def _ask_again(self, name: str) -> None:
        try:
            ref = self.ref(name)
            if self.engine.exists(ref):
                self.engine.prefetch(ref)
        except Exception:  # noqa: BLE001 - left out of the record; the next run asks it
            pass

    def _identity(self) -> str:
        """The names the tables are reached by (a record of other names is not this store's)."""
        return f"{self.catalog}|{self.schema_prefix}"

    def _create_schema(self, name: str) -> None:
        """Create the schema `name` goes in unless it exists (once per process), where tables are
        named: a table cannot be created in a missing schema, and a new Unity Catalog catalog
        holds none of `<schema_prefix><layer>`. Asked first, so schemas an administrator made
        beforehand need no right to create schemas."""
        if not self.engine.names_tables:
            return
        layer, _ = _split(name)
        parts = [self.catalog] if self.catalog else []
        schema = ".".join(f"`{p}`" for p in [*parts, f"{self.schema_prefix}{layer}"])
        if schema in self._registered:
            return
        if not self.spark.catalog.databaseExists(schema.replace("`", "")):
            try:
                self.spark.sql(f"CREATE SCHEMA IF NOT EXISTS {schema}")
            except Exception as exc:
                if self.catalog and not any(
                    c.name == self.catalog for c in self.spark.catalog.listCatalogs()
                ):
                    raise CatalogUnusable(catalog_unusable(self.catalog, identity(self.spark))) from exc
                raise
        self._registered.add(schema)

    # -- metadata ----------------------------------------------------------------------------
    def exists(self, name: str) -> bool:
        return self.engine.exists(self.ref(name))

    def version(self, name: str) -> int | None:
        """Latest committed version, None when the table does not exist."""
        return self.engine.version(self.ref(name))

    def columns(self, name: str) -> list[str]:
        """The table's column names, from its schema (no data read)."""
        return self.engine.columns(self.ref(name))

    def history(self, name: str, limit: int | None = None) -> list[dict[str, Any]]:
        """Commits newest first; our metadata decoded under `metadata`."""
        commits = [dict(commit) for commit in self.engine.history(self.ref(name), limit)]
        for commit in commits:
            commit["metadata"] = _decode(commit.get(METADATA_KEY))
        return commits

    def last_metadata(self, name: str, key: str, scan: int = 50) -> Any:
        """Value of `key` in the newest commit that recorded it (None if none did)."""
        return self.last_commit_metadata(name, key, scan).get(key)

    def last_commit_metadata(self, name: str, key: str, scan: int = 50) -> dict[str, Any]:
        """All our metadata of the newest commit that recorded `key` ({} if none did): values
        written together are read back together, never from two different commits."""
        limit = 1  # the newest commit mostly has it: asked alone, a run's kept commits answer
        while True:
            commits = self.history(name, limit=limit)
            for commit in commits:
                if key in commit["metadata"]:
                    return commit["metadata"]
            if len(commits) < limit or limit >= scan:
                return {}
            limit = min(limit * 4, scan)

    def only_appended_since(self, name: str, version: int) -> bool:
        """True when every commit after `version` only added rows, so `read_added_since` is the
        whole change since then (False when rows were removed or rewritten, or when unsure)."""
        return self.engine.only_appended_since(self.ref(name), version)

    def rows_changed_since(self, name: str, version: int) -> bool:
        """Whether a commit after `version` added or removed rows. Commits that change none (a
        compaction, a vacuum, a table property, an empty append) leave a reader of the table up
        to date: taken as changes, they would have every downstream task commit again for nothing."""
        if self.version(name) <= version:
            return False
        return not self.only_appended_since(name, version) or self.count_added_since(name, version) > 0

    def count_added_since(self, name: str, version: int | None) -> int:
        """How many rows `read_added_since` would return, from the log where the engine can."""
        return self.engine.count_added_since(self.ref(name), version)

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

    # -- reading -----------------------------------------------------------------------------
    def read(self, name: str, version: int | None = None, where: list[Bound] | None = None) -> DataFrame:
        """Current snapshot, or the snapshot at `version` (time travel). `where`: only the rows
        satisfying every bound (`pipelines.store.pruning`), reading only the files that may hold
        them."""
        if where:
            return self.read_any(name, [list(where)], version)
        return self.engine.read(self.ref(name), version)

    def read_any(self, name: str, selections: list[list[Bound]], version: int | None = None) -> DataFrame:
        """The rows matching any of `selections` (each a list of bounds that must all hold),
        reading only the files that may hold one."""
        return self.engine.read_where(self.ref(name), [list(s) for s in selections], version)

    def read_added_since(
        self, name: str, version: int | None, until: int | None = None, collected: bool = False
    ) -> DataFrame:
        """Rows added after `version` up to `until` (the latest when None); every row when
        `version` is None. For tables that only gain rows.

        `collected` (a few new rows, counted by the caller): the rows are read into the driver
        once per store (a run's: `for_run`), as Arrow, without a Spark job where the engine reads
        the files itself (delta-rs), and every task asking for the same rows gets a frame of a
        local relation over them: one read however many tables they feed, and a plan over them
        that scans no file (its projections and filters are computed as it is planned)."""
        if version is None:
            return self.read(name, until)
        ref = self.ref(name)
        if not collected:
            return self.engine.read_added_since(ref, version, until)
        until = self.version(name) if until is None else until
        rows, schema = self.engine.cache.get(
            name, ("added rows", version, until), lambda: self.engine.added_rows(ref, version, until)
        )
        return self.spark.createDataFrame(rows, schema=schema)

    def read_rows(
        self,
        name: str,
        columns: list[str],
        where: dict[str, Any] | None = None,
        selections: list[list[Bound]] | None = None,
    ) -> list[dict[str, Any]]:
        """A small table's rows matching `where` ({column: value}) or any of `selections` (lists of
        bounds, `pipelines.store.pruning`), as dicts of the `columns` the table has, without a
        Spark job where the engine can (ops bookkeeping: files, runs), reading only the files
        that may hold them."""
        if where is not None:
            selections = [[In(column, [value]) for column, value in where.items()]]
        return self.engine.read_rows(self.ref(name), columns, selections if selections is not None else [[]])

    def tally_added_since(
        self, name: str, version: int | None, by: str, flag: str
    ) -> dict[Any, tuple[int, int]]:
        """{value of `by`: (rows, rows with the boolean `flag` set)} over the rows `read_added_since`
        would return, without a Spark job where the engine can (bronze: records per landing file)."""
        return self.engine.tally_added_since(self.ref(name), version, by, flag)

    # -- writing -----------------------------------------------------------------------------
    def _write(self, name: str, write: Callable[[TableRef], T]) -> T:
        """The frame of every write: the schema exists, one writer of the table in this process,
        a commit that conflicts with another writer's tried again (`WRITE_ATTEMPTS`), and what
        the run knew of the table forgotten."""
        self._create_schema(name)
        ref = self.ref(name)
        with _writing(name):
            try:
                for attempt in range(1, WRITE_ATTEMPTS + 1):
                    try:
                        result = write(ref)
                        break
                    except ConcurrentWriteError:
                        if attempt == WRITE_ATTEMPTS:
                            raise
                        self.engine.cache.forget(name)
                        time.sleep(0.25 * 2**attempt)  # 0.5 s, then 1, 2, 4: the other writer's commit lands
            finally:
                self.engine.cache.forget(name)
        return result

    def _rows(self, rows: Rows) -> Rows:
        """`rows` as the engine writes them: collected rows stay Arrow for an engine that commits
        Arrow (delta-rs), and become a local relation's frame for one that writes frames."""
        if isinstance(rows, CollectedRows) and not self.engine.writes_collected:
            return as_frame(rows, self.spark)
        return rows

    def append_rows(self, rows: list[tuple], schema: StructType, name: str) -> None:
        """Append a few Python rows (bookkeeping) without the cost of a Spark job where possible."""
        if rows:
            self._write(name, lambda ref: self.engine.append_rows(rows, schema, ref))

    def append(
        self,
        df: Rows,
        name: str,
        partition_by: list[str] | None = None,
        metadata: dict | None = None,
        rows: int | None = None,
    ) -> None:
        """Add rows in one atomic commit (creates the table on first use). `rows`: how many rows
        `df` holds (or at most), when the caller counted them (a cached batch); an engine may
        then write a small frame without a Spark write. `df` may be rows already collected
        (`CollectedRows`): no Spark job computes them again."""
        df = self._rows(df)
        self._write(
            name, lambda ref: self.engine.append(df, ref, partition_by or [], _encode(metadata), rows)
        )

    def commit_no_rows(
        self, df: Rows, name: str, partition_by: list[str] | None = None, metadata: dict | None = None
    ) -> None:
        """Record `metadata` in a commit that adds no rows (creates the table with `df`'s columns
        on first use); cheaper than appending an empty frame."""
        df = self._rows(df)
        self._write(
            name, lambda ref: self.engine.commit_no_rows(df, ref, partition_by or [], _encode(metadata))
        )

    def overwrite(
        self,
        df: Rows,
        name: str,
        partition_by: list[str] | None = None,
        partitions: list[dict[str, Any]] | None = None,
        metadata: dict | None = None,
        rows: int | None = None,
    ) -> None:
        """Replace the table, or only `partitions` (e.g. [{"event_date": "2024-01-01"}]), atomically.
        `rows`: as for `append`."""
        df = self._rows(df)
        self._write(
            name,
            lambda ref: self.engine.overwrite(
                df, ref, partition_by or [], partitions, _encode(metadata), rows
            ),
        )

    def merge(
        self,
        df: Rows,
        name: str,
        keys: list[str],
        delete_flag: str | None = None,
        metadata: dict | None = None,
        rows: int | None = None,
    ) -> None:
        """Upsert on `keys`; a true `delete_flag` column deletes the matching row instead.
        `rows`: as for `append`."""
        df = as_frame(df, self.spark)
        self._write(name, lambda ref: self.engine.merge(df, ref, keys, delete_flag, _encode(metadata), rows))

    def replace_groups(
        self,
        df: Rows,
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
        df = self._rows(df)
        return self._write(
            name,
            lambda ref: self.engine.replace_groups(
                df, ref, group_key, groups, keys, _encode(metadata), group_values, rows
            ),
        )

    def replace_where(
        self,
        df: Rows,
        name: str,
        selections: list[list[Bound]],
        metadata: dict | None = None,
        rows: int | None = None,
    ) -> int:
        """Replace the rows matching any of `selections` (each a list of bounds that must all hold,
        `pipelines.store.pruning`) by `df`, in one commit; every row of `df` must match one of
        them, so that running it again changes nothing. Returns the rows of `df` written. The
        files the bounds rule out (by partition values and statistics) are neither read nor
        rewritten: the cost follows the files that hold replaced rows, not the table.

            store.replace_where(rows, "gold.tag_timeline", [[In("root_urn", touched), In("is_current", [True])]])
        """
        df = self._rows(df)
        return self._write(
            name,
            lambda ref: self.engine.replace_where(
                df, ref, [list(s) for s in selections], _encode(metadata), rows
            ),
        )

    # -- maintenance -------------------------------------------------------------------------
    @property
    def compacts(self) -> bool:
        """Whether this store's engine can compact tables (`compact`)."""
        return self.engine.supports_compaction

    def compactable_files(self, name: str, target_bytes: int) -> int:
        """Data files of `name` smaller than `target_bytes` that a compaction would merge
        (those in partitions holding two or more of them); read from the snapshot, no data."""
        return self.engine.compactable_files(self.ref(name), target_bytes)

    def small_files_written(self, name: str, target_bytes: int) -> int | None:
        """At least how many small files the commits since `name`'s last compaction wrote, from
        its history where the engine can tell (None otherwise): a cheap first look before
        `compactable_files`."""
        return self.engine.small_files_written(self.ref(name), target_bytes)

    def compact(self, name: str, target_bytes: int) -> Compaction:
        """Merge the table's small files into files of about `target_bytes`, atomically. The data,
        its versions' answers and every incremental reader's view stay the same: the commit adds
        no rows (`dataChange: false`), so `read_added_since` never returns the rewritten rows."""
        return self._write(name, lambda ref: self.engine.compact(ref, target_bytes))

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
