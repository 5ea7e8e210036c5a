"""The embedded engine: Spark computes and writes Parquet, delta-rs commits it.

Needs only PyPI packages (no Delta jars), so it is the default on laptops and
CI. Reads go through the snapshot's active file list, so files a killed write
left behind, or files an overwrite removed, are never read.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
from deltalake import CommitProperties, DeltaTable, write_deltalake
from deltalake import Schema as DeltaSchema
from deltalake.exceptions import CommitFailedError, TableNotFoundError
from deltalake.transaction import AddAction, RemoveAction, create_table_with_add_actions
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from pipelines.runtime import faults
from pipelines.store.arrow_rows import (
    RowMatch,
    copy_rows_except,
    holds_any,
    release_free_memory,
    selections_expression,
    use_system_memory_pool,
)
from pipelines.store.arrow_schema import arrow_to_spark, spark_to_arrow
from pipelines.store.collected import CollectedRows, Rows
from pipelines.store.delta_log import commit_actions, data_file_path
from pipelines.store.engine import METADATA_KEY, Compaction, ConcurrentWriteError, Engine, TableRef
from pipelines.store.parquet_files import (
    publish_staged_files,
    staging_dir,
    temporary_dir,
    write_arrow_file,
    write_arrow_partitions,
)
from pipelines.store.pruning import Bound, In, files_that_may_match, partition_text, select_matching
from pipelines.store.snapshots import LatestSnapshots

COMMIT_RETRIES = 5
CHANGE_DATA_FEED = {"delta.enableChangeDataFeed": "true"}  # tables whose new rows later tasks read
# An append (or a merge's source) of at most this many rows, counted by the caller, is collected
# as Arrow and written by pyarrow: a Spark write costs a fixed tenth of a second or so more than
# the collect however few the rows, paid by every silver table each run. Larger batches gain
# nothing and would pass through the driver's memory.
ARROW_WRITE_ROWS = 25_000


def _few(rows: int | None) -> bool:
    """A frame the caller counted and found small enough to collect as Arrow (`ARROW_WRITE_ROWS`)."""
    return rows is not None and rows <= ARROW_WRITE_ROWS


def _nullable_type(dtype: pa.DataType) -> pa.DataType:
    if pa.types.is_struct(dtype):
        return pa.struct([_nullable_field(dtype.field(i)) for i in range(dtype.num_fields)])
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return pa.list_(_nullable_field(dtype.value_field))
    if pa.types.is_map(dtype):
        return pa.map_(dtype.key_type, _nullable_type(dtype.item_type))
    return dtype


def _nullable_field(field: pa.Field) -> pa.Field:
    return pa.field(field.name, _nullable_type(field.type), nullable=True)


def _quote(column: str) -> str:
    return '"' + column.replace('"', '""') + '"'


def _partition_values(add: dict[str, Any]) -> dict[str, str | None]:
    values = add.get("partition_values") or add.get("partition") or {}
    return {k: (None if v is None else partition_text(v)) for k, v in values.items()}


def _remove(add: dict[str, Any], now: int) -> RemoveAction:
    """The remove action of a live file (an add action of the snapshot)."""
    return RemoveAction(
        path=add["path"],
        data_change=True,
        deletion_timestamp=now,
        size=add["size_bytes"],
        partition_values=_partition_values(add),
    )


def _local_path(uri: str) -> str:
    """A file URI as Spark reports it (`file:/...`, URL-encoded) or a plain path, as a local path."""
    parsed = urlparse(uri)
    return os.path.normpath(unquote(parsed.path) if parsed.scheme == "file" else uri)


def _records(actions: list[AddAction]) -> int:
    return sum(json.loads(a.stats)["numRecords"] for a in actions)


def _may_hold(files: pa.Table, selections: list[list[Bound]], partition_by: list[str]) -> pa.Array:
    """Per add action of `files` (flattened), whether it may hold a row of any selection."""
    may = pa.array([False] * files.num_rows, pa.bool_())
    for selection in selections:
        may = pc.or_(may, files_that_may_match(files, selection, partition_by))
    return may


def _files_that_may_hold(table: DeltaTable, selections: list[list[Bound]]) -> pa.Table:
    """The snapshot's add actions (flattened) of the files that may hold a row of any selection."""
    files = pa.table(table.get_add_actions(flatten=True))
    return files.filter(_may_hold(files, selections, table.metadata().partition_columns))


def _files_dataset(table: DeltaTable, selections: list[list[Bound]]) -> pads.FileSystemDataset:
    """A pyarrow dataset of the snapshot's files that may hold a row of any selection, each file
    knowing its partition values only. Not delta-rs' own dataset: it gives every file an
    expression from the log's statistics in which a column the log has no min/max of (a string
    longer than the statistics keep) reads as `>= null`, so a filter on that column would skip
    every file that holds it."""
    whole = table.to_pyarrow_dataset()
    partition_by = table.metadata().partition_columns
    chosen = _files_that_may_hold(table, selections)
    fragments = [
        whole.format.make_fragment(
            file["path"],
            filesystem=whole.filesystem,
            partition_expression=_partition_expression(file, partition_by, whole.schema),
        )
        for file in chosen.to_pylist()
    ]
    return pads.FileSystemDataset(fragments, whole.schema, whole.format, whole.filesystem)


def _partition_expression(
    file: dict[str, Any], partition_by: list[str], schema: pa.Schema
) -> pads.Expression:
    """What a file's partition values say of its rows (the values are not in the file itself)."""
    said = pads.scalar(True)
    for column in partition_by:
        value = file.get(f"partition.{column}")
        field = pads.field(column)
        said = said & (
            field.is_null() if value is None else field == pa.scalar(value).cast(schema.field(column).type)
        )
    return said


def _folder(ref: TableRef) -> str:
    """The table's folder: delta-rs reaches tables through their folders only."""
    if ref.path is None:
        raise ValueError(
            f"{ref.name}: the delta-rs engine reads tables through their folders, and this one has none"
        )
    return ref.path


def _configuration(ref: TableRef) -> dict[str, str] | None:
    """Table properties a new table is created with: the change data feed where later tasks read
    its new rows, so Delta's own engine reads them by name if it continues the warehouse."""
    return CHANGE_DATA_FEED if ref.changes_read else None


class DeltaRsEngine(Engine):
    """Delta tables through `deltalake` (delta-rs); Spark only touches Parquet."""

    name = "delta-rs"
    writes_collected = True  # collected rows are written as the Arrow they are

    def __init__(self, spark, cache=None):
        super().__init__(spark, cache)
        self._snapshots = LatestSnapshots()
        use_system_memory_pool()  # this engine reads and copies data files with pyarrow in the driver

    # -- reading -----------------------------------------------------------
    def _table(self, path: str, version: int | None = None) -> DeltaTable | None:
        """The table at `version`, or its latest version (a kept handle brought forward)."""
        if version is None:
            return self._snapshots.latest(path)
        latest = self._snapshots.latest(path)
        if latest is None:
            return None
        if latest.version() == version:  # the kept handle: no log replay
            return latest
        try:
            return DeltaTable(path, version=version)
        except TableNotFoundError:
            return None

    def exists(self, ref: TableRef) -> bool:
        return DeltaTable.is_deltatable(_folder(ref))

    def version(self, ref: TableRef) -> int | None:
        table = self._table(_folder(ref))
        return None if table is None else table.version()

    def columns(self, ref: TableRef) -> list[str]:
        """From the log's schema: no data file is listed."""
        table = self._table(_folder(ref))
        if table is None:
            raise FileNotFoundError(f"no Delta table at {ref.path}")
        return list(pa.schema(table.schema().to_arrow()).names)

    def only_appended_since(self, ref: TableRef, version: int) -> bool:
        """Read from the commits in the table's `_delta_log`; a log that cannot be read here
        (commits expired) answers False."""
        path = _folder(ref)
        current = self.version(ref)
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

    def spark_schema(self, table: DeltaTable) -> StructType:
        return arrow_to_spark(pa.schema(table.schema().to_arrow()))

    def _read_files(self, table: DeltaTable, files: list[str], path: str) -> DataFrame:
        schema = self.spark_schema(table)
        if not files:
            return self.spark.createDataFrame([], schema)
        df = self.spark.read.schema(schema).option("basePath", path).parquet(*files)
        if df.columns == schema.names:
            return df
        # Spark moves partition columns last; a select puts them back in the table's order.
        # Only then: a select costs a Python->JVM round trip per column, ~50 ms a read.
        return df.select(*[F.col(f"`{name}`") for name in schema.names])

    def read_rows(
        self, ref: TableRef, columns: list[str], selections: list[list[Bound]]
    ) -> list[dict[str, Any]]:
        """Read by delta-rs and pyarrow in this process: a Spark job costs ~0.4 s even for a few
        rows. The log's statistics skip files (`_may_hold`, as `read_where`), pyarrow the row
        groups whose own statistics rule the selections out."""
        path = _folder(ref)
        table = self._table(path)
        if table is None:
            raise FileNotFoundError(f"no Delta table at {path}")
        dataset = _files_dataset(table, selections)
        present = [c for c in columns if c in dataset.schema.names]
        try:
            rows = dataset.to_table(columns=present, filter=selections_expression(selections, dataset.schema))
        except pa.ArrowNotImplementedError:
            # files a merge wrote hold strings as string_view, whose row-group statistics pyarrow
            # cannot compare with a string value: compare each column cast to the table's type
            rows = dataset.to_table(
                columns=present, filter=selections_expression(selections, dataset.schema, cast=True)
            )
        return rows.to_pylist()

    def tally_added_since(
        self, ref: TableRef, version: int | None, by: str, flag: str
    ) -> dict[Any, tuple[int, int]]:
        """Counted by pyarrow a batch at a time over the two columns: memory stays one batch, and
        no Spark job (~0.5 s a bronze task) reads back the commit just made."""
        table, files = self._files_added_since(_folder(ref), version)
        if {by, flag} & set(table.metadata().partition_columns):  # not in the files: Spark knows them
            return super().tally_added_since(ref, version, by, flag)
        tally: dict[Any, tuple[int, int]] = {}
        for batch in pads.dataset(files, format="parquet").to_batches(columns=[by, flag]) if files else []:
            counts = pa.table(batch).group_by(by).aggregate([([], "count_all"), (flag, "sum")])
            values, rows, flagged = (counts.column(c).to_pylist() for c in (by, "count_all", f"{flag}_sum"))
            for value, n, n_flagged in zip(values, rows, flagged, strict=True):
                before = tally.get(value, (0, 0))
                tally[value] = (before[0] + n, before[1] + int(n_flagged or 0))
        return tally

    def _data_added_since(self, path: str, version: int, current: int) -> list[dict[str, Any]]:
        """`add` actions with dataChange=true committed after `version`, still live or removed
        only by a rewrite (dataChange=false, e.g. compaction: the rows live on in that file).

        Reads only the JSON commits `version+1 .. current`, so the cost follows the new commits,
        not the history; files a rewrite added (dataChange=false) carry no new rows and are skipped.
        """
        added: dict[str, dict[str, Any]] = {}
        for number in range(version + 1, current + 1):
            for action in commit_actions(path, number):
                if "add" in action and action["add"].get("dataChange", True):
                    added[action["add"]["path"]] = action["add"]
                elif "remove" in action and action["remove"].get("dataChange", True):
                    added.pop(action["remove"]["path"], None)  # rows deleted, not rewritten
        return list(added.values())

    def max_micros(self, ref: TableRef, column: str, version: int | None = None) -> int | None:
        """From the add actions' `max` statistics when every file holding values has one (no
        data file is opened), else by a Spark aggregation."""
        path = _folder(ref)
        table = self._table(path, version)
        if table is None:
            raise FileNotFoundError(f"no Delta table at {path}")
        files = pa.table(table.get_add_actions(flatten=True))
        if files.num_rows == 0:
            return None
        highest, nulls = f"max.{column}", f"null_count.{column}"
        if highest not in files.column_names or nulls not in files.column_names:
            return super().max_micros(ref, column, version)
        holding = pc.less(files[nulls], files["num_records"])  # files with a non-null value
        unknown = pc.or_kleene(pc.is_null(holding), pc.and_(holding, pc.is_null(files[highest])))
        if pc.any(unknown).as_py():  # a file with values but no statistic
            return super().max_micros(ref, column, version)
        micros = pc.cast(pc.cast(files[highest], pa.timestamp("us", tz="UTC")), pa.int64())
        return pc.max(micros.filter(holding)).as_py()

    def count_added_since(self, ref: TableRef, version: int | None) -> int:
        """From the add actions' numRecords: no Spark job, no data read."""
        path = _folder(ref)
        table = self._table(path)
        if table is None:
            raise FileNotFoundError(f"no Delta table at {path}")
        if version is None:
            counts = pa.table(table.get_add_actions(flatten=True)).column("num_records").to_pylist()
        else:
            counts = [
                json.loads(add["stats"]).get("numRecords") if add.get("stats") else None
                for add in self._data_added_since(path, version, table.version())
            ]
        if any(c is None for c in counts):  # files committed without statistics
            rows = self.read(ref) if version is None else self.read_added_since(ref, version)
            return rows.count()
        return int(sum(counts))

    def append_rows(self, rows: list[tuple], schema: StructType, ref: TableRef) -> None:
        """Bookkeeping rows straight to delta-rs: no Spark job for a handful of rows."""
        if not rows:
            return
        path = _folder(ref)
        arrow_schema = spark_to_arrow(schema)
        columns = list(zip(*rows, strict=True))
        batch = pa.table(
            [pa.array(list(col), type=f.type) for col, f in zip(columns, arrow_schema, strict=True)],
            schema=arrow_schema,
        )
        target = self._table(path) or path  # an open handle spares write_deltalake loading the log
        write_deltalake(
            target,
            batch,
            mode="append",
            schema_mode="merge",
            configuration=_configuration(ref),
            commit_properties=self._props(None),
        )

    def read(self, ref: TableRef, version: int | None = None) -> DataFrame:
        path = _folder(ref)
        table = self._table(path, version)
        if table is None:
            raise FileNotFoundError(f"no Delta table at {path}")
        return self._read_files(table, table.file_uris(), path)

    def read_where(
        self, ref: TableRef, selections: list[list[Bound]], version: int | None = None
    ) -> DataFrame:
        """Only the files whose partition values and statistics may hold a matching row are read
        (from the snapshot's add actions: no data file opened to decide), then filtered exactly."""
        path = _folder(ref)
        table = self._table(path, version)
        if table is None:
            raise FileNotFoundError(f"no Delta table at {path}")
        chosen = _files_that_may_hold(table, selections)
        uris = [data_file_path(path, p) for p in chosen.column("path").to_pylist()]
        return select_matching(self._read_files(table, uris, path), selections)

    def _files_added_since(
        self, path: str, version: int | None, until: int | None = None
    ) -> tuple[DeltaTable, list[str]]:
        """The latest snapshot and the data files added after `version` up to `until` (all live
        files when `version` is None)."""
        table = self._table(path)
        if table is None:
            raise FileNotFoundError(f"no Delta table at {path}")
        if version is None:
            return table, table.file_uris()
        last = table.version() if until is None else min(until, table.version())
        adds = self._data_added_since(path, version, last)
        return table, [data_file_path(path, add["path"]) for add in adds]

    def read_added_since(self, ref: TableRef, version: int, until: int | None = None) -> DataFrame:
        path = _folder(ref)
        table, files = self._files_added_since(path, version, until)
        return self._read_files(table, files, path)

    def added_rows(self, ref: TableRef, version: int, until: int) -> tuple[pa.Table, StructType]:
        """The added files read by pyarrow in this process (no Spark job), their partition values
        from the files' folders, in the table's columns and types."""
        path = _folder(ref)
        table, files = self._files_added_since(path, version, until)
        schema = self.spark_schema(table)
        arrow_schema = spark_to_arrow(schema)
        if not files:
            return arrow_schema.empty_table(), schema
        partitions = table.metadata().partition_columns
        partitioning = pads.partitioning(
            pa.schema([arrow_schema.field(c) for c in partitions]), flavor="hive"
        )
        local = [_local_path(f) for f in files]
        dataset = pads.dataset(local, format="parquet", partitioning=partitioning, partition_base_dir=path)
        present = [name for name in schema.names if name in dataset.schema.names]
        rows = dataset.to_table(columns=present)
        columns = [
            rows.column(f.name).cast(f.type) if f.name in present else pa.nulls(rows.num_rows, f.type)
            for f in arrow_schema
        ]
        return pa.Table.from_arrays(columns, schema=arrow_schema), schema

    # -- writing -----------------------------------------------------------
    def _arrow_schema(self, df: Rows) -> pa.Schema:
        """All fields nullable: Spark's nullability flags do not survive unions and rebuilds
        reliably, and delta-rs would enforce them as invariants and refuse a merge."""
        return pa.schema([_nullable_field(f) for f in spark_to_arrow(df.schema)])

    def _aligned(self, df: Rows, table: DeltaTable) -> Rows:
        """Add new columns to the table, fill columns the rows lack with nulls."""
        table_schema = self.spark_schema(table)
        existing = {f.name: f for f in table_schema.fields}
        new_fields = [f for f in df.schema.fields if f.name not in existing]
        if new_fields:
            arrow_new = spark_to_arrow(StructType(new_fields))
            table.alter.add_columns(list(DeltaSchema.from_arrow(arrow_new).fields))
        missing = [f for f in table_schema.fields if f.name not in df.columns]
        if isinstance(df, CollectedRows):
            return df.with_null_columns(missing) if missing else df
        for field in missing:
            df = df.withColumn(field.name, F.lit(None).cast(field.dataType))
        return df

    def _write_parquet(self, df: Rows, folder: str, partition_by: list[str], rows: int | None = None) -> None:
        """`df` as Parquet files in the new `folder`: by pyarrow when they are collected already or
        the caller counted few `rows` (`ARROW_WRITE_ROWS`), one file (per partition), else a
        Spark write."""
        if isinstance(df, CollectedRows) or _few(rows):
            arrow = df.table if isinstance(df, CollectedRows) else df.toArrow()
            if partition_by:
                write_arrow_partitions(arrow, folder, partition_by)
            else:
                write_arrow_file(arrow, folder)
            return
        writer = df.write.mode("errorifexists")
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        writer.parquet(folder)

    def _write_staging(self, df: Rows, path: str, partition_by: list[str], rows: int | None = None) -> str:
        """`df` written into a fresh `<table>/_staging/<uuid>` folder, returned; nothing is published."""
        staging = staging_dir(path)
        self._write_parquet(df, staging, partition_by, rows)
        return staging

    def _stage(self, df: Rows, path: str, partition_by: list[str], rows: int | None = None):
        """Write `df`'s files into the table folder and describe them (add actions), uncommitted."""
        return publish_staged_files(self._write_staging(df, path, partition_by, rows), path, partition_by)

    @staticmethod
    def _props(metadata: str | None) -> CommitProperties:
        custom = {METADATA_KEY: metadata} if metadata is not None else None
        return CommitProperties(custom_metadata=custom, max_commit_retries=COMMIT_RETRIES)

    def _commit(self, ref: TableRef, df, partition_by, actions, mode, partition_filters, metadata) -> None:
        path = _folder(ref)
        faults.checkpoint("delta_commit", ref.name)
        table = self._table(path)
        schema = self._arrow_schema(df)
        try:
            if table is None:
                os.makedirs(path, exist_ok=True)
                create_table_with_add_actions(
                    path,
                    DeltaSchema.from_arrow(schema),
                    actions,
                    mode="append",
                    partition_by=partition_by or None,
                    configuration=_configuration(ref),
                    commit_properties=self._props(metadata),
                )
            else:
                table.create_write_transaction(
                    actions,
                    mode=mode,
                    schema=schema,
                    partition_by=partition_by or None,
                    partition_filters=partition_filters,
                    commit_properties=self._props(metadata),
                )
        except CommitFailedError as exc:
            raise ConcurrentWriteError(f"commit to {path} conflicted with another writer: {exc}") from exc

    def append(
        self,
        df: Rows,
        ref: TableRef,
        partition_by: list[str],
        metadata: str | None,
        rows: int | None = None,
    ) -> None:
        path = _folder(ref)
        table = self._table(path)
        if table is not None:
            df = self._aligned(df, table)
            partition_by = table.metadata().partition_columns
        actions = self._stage(df, path, partition_by, rows)
        self._commit(ref, df, partition_by, actions, "append", None, metadata)

    def commit_no_rows(self, df: Rows, ref: TableRef, partition_by: list[str], metadata: str | None) -> None:
        """No Spark job: a commit with no add actions (the schema comes from the plan)."""
        table = self._table(_folder(ref))
        if table is not None:
            df = self._aligned(df, table)
            partition_by = table.metadata().partition_columns
        self._commit(ref, df, partition_by, [], "append", None, metadata)

    def overwrite(self, df, ref, partition_by, partitions, metadata, rows=None) -> None:
        path = _folder(ref)
        table = self._table(path)
        if table is not None:
            df = self._aligned(df, table)
            partition_by = table.metadata().partition_columns
        actions = self._stage(df, path, partition_by, rows)
        if table is None:
            self._commit(ref, df, partition_by, actions, "append", None, metadata)
            return
        if partitions is None:
            self._commit(ref, df, partition_by, actions, "overwrite", None, metadata)
            return
        for spec in partitions:  # one commit per partition would not be atomic: use remove actions
            if set(spec) != set(partition_by):
                raise ValueError(f"partition spec {spec} must name exactly {partition_by}")
        removes = self._removes_for(table, partitions)
        self._commit(ref, df, partition_by, removes + actions, "append", None, metadata)

    def _removes_for(self, table: DeltaTable, partitions: list[dict[str, Any]]):
        wanted = {
            tuple(sorted((k, None if v is None else str(v)) for k, v in spec.items())) for spec in partitions
        }
        now = int(time.time() * 1000)
        removes = []
        for add in self._live_files(table):
            values = _partition_values(add)
            key = tuple(sorted(values.items()))
            if key in wanted:
                removes.append(_remove(add, now))
        return removes

    @staticmethod
    def _live_files(table: DeltaTable) -> list[dict[str, Any]]:
        """The snapshot's add actions (path as logged, size_bytes, partition values)."""
        return pa.table(table.get_add_actions(flatten=False)).to_pylist()

    # -- maintenance ------------------------------------------------------
    supports_compaction = True

    def compactable_files(self, ref: TableRef, target_bytes: int) -> int:
        """From the snapshot's add actions: no data file is opened."""
        table = self._table(_folder(ref))
        if table is None:
            return 0
        files = pa.table(table.get_add_actions(flatten=True))
        small = files.filter(pc.less(files["size_bytes"], target_bytes))
        partitions = [name for name in small.column_names if name.startswith("partition.")]
        if partitions:
            counts = Counter(zip(*(small[name].to_pylist() for name in partitions), strict=True)).values()
        else:
            counts = [small.num_rows]
        return sum(count for count in counts if count > 1)

    def compact(self, ref: TableRef, target_bytes: int) -> Compaction:
        """delta-rs' own `optimize.compact`: it bins the small files of each partition, rewrites
        them in file order and commits removes and adds with `dataChange: false`."""
        table = self._table(_folder(ref))
        if table is None:
            raise FileNotFoundError(f"no Delta table at {ref.path}")
        metrics = table.optimize.compact(target_size=target_bytes, commit_properties=self._props(None))
        return Compaction(files_removed=metrics["numFilesRemoved"], files_added=metrics["numFilesAdded"])

    def merge(self, df, ref, keys, delete_flag, metadata, rows=None) -> None:
        path = _folder(ref)
        table = self._table(path)
        if table is None:
            to_insert = df.where(~F.col(delete_flag)).drop(delete_flag) if delete_flag else df
            self.append(to_insert, ref, [], metadata, rows)
            return
        columns = [c for c in df.columns if c != delete_flag]
        source_dir = temporary_dir(path)
        try:
            self._write_parquet(df, source_dir, [], rows)
            source = pads.dataset(source_dir, format="parquet")
            if source.count_rows() == 0:
                return
            predicate = " AND ".join(f"t.{_quote(k)} = s.{_quote(k)}" for k in keys)
            values = {_quote(c): f"s.{_quote(c)}" for c in columns}
            live = f"NOT s.{_quote(delete_flag)}" if delete_flag else None
            merger = table.merge(
                source=source.scanner().to_reader(),
                predicate=predicate,
                source_alias="s",
                target_alias="t",
                merge_schema=True,
                commit_properties=self._props(metadata),
            )
            if delete_flag:
                merger = merger.when_matched_delete(predicate=f"s.{_quote(delete_flag)}")
            merger = merger.when_matched_update(updates=values, predicate=live)
            merger = merger.when_not_matched_insert(updates=values, predicate=live)
            faults.checkpoint("merge_commit", ref.name)
            try:
                merger.execute()
            except CommitFailedError as exc:
                raise ConcurrentWriteError(
                    f"merge into {path} conflicted with another writer: {exc}"
                ) from exc
        finally:
            shutil.rmtree(source_dir, ignore_errors=True)

    def replace_groups(self, df, ref, group_key, groups, keys, metadata, group_values=None, rows=None) -> int:
        """Copy-on-write, only for the data files holding affected rows: with the groups collected
        (`group_values`) and a key that holds the group column, `replace_where` of the groups; with
        one key column held in the files, of the groups and of `df`'s keys (found by pyarrow);
        else a Spark scan of the key and group columns finds the files, and a Spark rewrite
        copies their other rows."""
        path = _folder(ref)
        table = self._table(path)
        if table is None or (group_values is not None and group_key in keys):
            # a row's key names its group: a key of `df` held before is in one of the groups
            return self._replace(df, ref, [[In(group_key, group_values or [])]], metadata, rows)
        if group_values is not None and len(keys) == 1:
            return self._replace(df, ref, [[In(group_key, group_values)]], metadata, rows, key=keys[0])
        df = self._aligned(df, table)
        table = self._table(path)
        partition_by = table.metadata().partition_columns
        new_dir = self._write_staging(df, path, partition_by, rows)
        new_files = [str(f) for f in Path(new_dir).rglob("*.parquet")]
        doomed, kept_dir = self._copy_kept_rows_by_spark(
            table, path, df, group_key, groups, keys, new_dir, new_files, partition_by
        )
        return self._publish_replacement(ref, df, path, partition_by, new_dir, doomed, kept_dir, metadata)

    def replace_where(self, df, ref, selections, metadata, rows=None) -> int:
        """Copy-on-write of the files that hold a matching row, and only those: the files the
        selections' bounds rule out by partition values and statistics (`pruning`) are not
        opened; the others are scanned by pyarrow on the selections' columns, and those holding
        a match have their other rows copied. One commit removes them and adds the copies and
        `df`'s files."""
        return self._replace(df, ref, selections, metadata, rows)

    def _replace(self, df, ref, selections, metadata, rows, key: str | None = None) -> int:
        """`replace_where`, also deleting the rows whose `key` is one of `df`'s (when given)."""
        path = _folder(ref)
        table = self._table(path)
        if table is None:
            actions = self._stage(df, path, [], rows)
            self._commit(ref, df, [], actions, "append", None, metadata)
            return _records(actions)
        df = self._aligned(df, table)
        table = self._table(path)
        partition_by = table.metadata().partition_columns
        new_dir = self._write_staging(df, path, partition_by, rows)
        selections = [list(s) for s in selections]
        new_files = [str(f) for f in Path(new_dir).rglob("*.parquet")]
        if key is not None and new_files:
            new_keys = pads.dataset(new_files, format="parquet").to_table(columns=[key]).column(key)
            selections.append([In(key, new_keys.to_pylist())])
        doomed, kept_dir = self._copy_kept_rows_by_arrow(table, path, RowMatch.any_of(selections), selections)
        return self._publish_replacement(ref, df, path, partition_by, new_dir, doomed, kept_dir, metadata)

    def _publish_replacement(self, ref, df, path, partition_by, new_dir, doomed, kept_dir, metadata) -> int:
        """One commit: `doomed` files removed, `new_dir`'s and `kept_dir`'s files added, the copied
        rows' files with `dataChange: false` (rows the table held already), so `read_added_since`
        returns the rows of `df` alone, as delta-spark's change data feed does; returns the rows of
        `new_dir`."""
        added = publish_staged_files(new_dir, path, partition_by)
        rows = _records(added)
        if kept_dir is not None:  # rows copied unchanged out of the removed files: no new data
            kept = publish_staged_files(kept_dir, path, partition_by)
            added += [dataclasses.replace(add, data_change=False) for add in kept]
        now = int(time.time() * 1000)
        faults.checkpoint("merge_commit", ref.name)
        self._commit(
            ref, df, partition_by, [_remove(add, now) for add in doomed] + added, "append", None, metadata
        )
        return rows

    def _copy_kept_rows_by_arrow(self, table, path, match: RowMatch, selections):
        """(doomed add actions, staging folder of their other rows or None), by pyarrow. For the
        few thousand groups of an incremental run, Spark took several jobs to plan and schedule
        for what is a few columns read and a filter. Files the selections rule out by their
        partition values and statistics are not opened."""
        if match.nothing:
            return [], None
        partition_by = table.metadata().partition_columns
        files = pa.table(table.get_add_actions(flatten=True))
        may = _may_hold(files, selections, partition_by)
        live = {add["path"]: add for add in self._live_files(table)}
        doomed = []
        for file_path, possible in zip(files.column("path").to_pylist(), may.to_pylist(), strict=True):
            if not possible:
                continue
            add = live[file_path]
            within = match.for_file(_partition_values(add))
            if holds_any(data_file_path(path, add["path"]), within):
                doomed.append((add, within))
        if not doomed:
            return [], None
        kept_dir = staging_dir(path)
        os.makedirs(kept_dir)
        for add, within in doomed:
            # the copy goes to the same partition folder as its file, whose name holds the values
            file = data_file_path(path, add["path"])
            folder = os.path.join(kept_dir, os.path.relpath(os.path.dirname(file), path))
            os.makedirs(folder, exist_ok=True)
            copy_rows_except(file, within, folder)
        release_free_memory()
        return [add for add, _ in doomed], kept_dir

    def _copy_kept_rows_by_spark(
        self, table, path, df, group_key, groups, keys, new_dir, new_files, partition_by
    ):
        """(doomed add actions, staging folder of their other rows or None), by Spark jobs."""
        new_keys = None
        if new_files:
            reader = self.spark.read.schema(df.schema).option("basePath", new_dir)
            new_keys = reader.parquet(*new_files).select(*keys)
        doomed = self._files_holding(
            table, path, group_key, groups.select(group_key).distinct(), keys, new_keys
        )
        if not doomed:
            return [], None
        kept = self._read_files(table, [data_file_path(path, add["path"]) for add in doomed], path)
        kept = kept.join(groups.select(group_key), group_key, "left_anti")
        if new_keys is not None:
            kept = kept.join(new_keys, keys, "left_anti")
        return doomed, self._write_staging(kept.select(*df.columns), path, partition_by)

    def _files_holding(self, table, path, group_key, groups, keys, new_keys) -> list[dict[str, Any]]:
        """The live files (add actions) holding a row whose group is in `groups` or whose keys are in `new_keys`."""
        live = self._live_files(table)
        if not live:
            return []
        uris = [data_file_path(path, add["path"]) for add in live]
        scan = self.spark.read.schema(self.spark_schema(table)).option("basePath", path).parquet(*uris)
        target = scan.select(*dict.fromkeys([group_key, *keys]), F.col("_metadata.file_path").alias("_file"))
        hit = target.join(groups.withColumn("_by_group", F.lit(True)), group_key, "left")
        condition = F.col("_by_group").isNotNull()
        if new_keys is not None:
            hit = hit.join(new_keys.withColumn("_by_key", F.lit(True)), keys, "left")
            condition = condition | F.col("_by_key").isNotNull()
        files = {
            _local_path(row["_file"]) for row in hit.where(condition).select("_file").distinct().collect()
        }
        return [add for add, uri in zip(live, uris, strict=True) if os.path.normpath(uri) in files]

    def history(self, ref: TableRef, limit: int | None = None) -> list[dict[str, Any]]:
        return self.cache.get(ref.name, ("history", limit), lambda: self._history(_folder(ref), limit))

    def _history(self, path: str, limit: int | None) -> list[dict[str, Any]]:
        table = self._table(path)
        if table is None:
            return []
        commits = table.history(limit)
        for commit in commits:
            commit.setdefault(METADATA_KEY, None)
        return sorted(commits, key=lambda c: c["version"], reverse=True)

    def delete_files_not_referenced(self, ref: TableRef, retention_hours: float, dry_run: bool) -> list[str]:
        table = self._table(_folder(ref))
        if table is None:
            return []
        return table.vacuum(
            retention_hours=int(retention_hours), dry_run=dry_run, enforce_retention_duration=False, full=True
        )
