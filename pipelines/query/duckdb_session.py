"""`lakehouse sql --engine duckdb`: the warehouse's tables in DuckDB, without a JVM.

A Spark session costs seconds to start; DuckDB answers a one-line query in about a second,
start-up included. Each table's current snapshot (or its version N) is read by delta-rs
(`deltalake.DeltaTable`, its live files as an Arrow dataset) and shown to DuckDB as the view
`<layer>.<table>` in the schemas `bronze`, `silver`, `gold` and `ops`; the current-state views
of `gold/current_views.py` are created from the same SQL the Spark path uses. Tables are
registered lazily, only those a statement mentions, like the Spark path.

Read-only by construction: the views read Arrow datasets, which cannot be written; once the
session is built, DuckDB's file-system access is switched off and its configuration locked
(no COPY, ATTACH, EXPORT or file reads); and statements pass the same check as on Spark
(`pipelines.query.statements.check_read_only`) before anything runs. The dialect is DuckDB's;
results read as Spark's: nulls sort first in ascending order, as in Spark, and a sum of
integers (DuckDB's HUGEINT) comes back as a BIGINT, as Spark's does.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from pipelines.core.warehouse_layout import LAYERS, folder_tables
from pipelines.query.names import referenced_names, table_listing, view_definitions
from pipelines.query.output import Interval
from pipelines.query.statements import Token, check_read_only, tokenize

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa
    import pyarrow.dataset as ds
    from deltalake import DeltaTable

_BATCH_ROWS = 10_000
SPARK_NULL_ORDER = "nulls_first_on_asc_last_on_desc"  # Spark's: ASC NULLS FIRST, DESC NULLS LAST


class DuckDbSession:
    """An in-memory DuckDB database where the warehouse's tables resolve as `<layer>.<table>`.

    with DuckDbSession("warehouse") as sql:
        columns, rows = sql.query("SELECT count(*) FROM silver.datahub_entity_changes")
    """

    def __init__(self, warehouse: str | Path, version: int | None = None):
        import duckdb

        self.warehouse = Path(warehouse).resolve()
        self.version = version
        self.query_errors: tuple[type[Exception], ...] = (duckdb.Error,)
        self.connection = duckdb.connect(":memory:")
        self.connection.execute("SET TimeZone = 'UTC'")  # as the Spark sessions' timeZone
        self.connection.execute(f"SET default_null_order = '{SPARK_NULL_ORDER}'")
        for layer in LAYERS:
            self.connection.execute(f"CREATE SCHEMA {layer}")
        self.all_tables = set(folder_tables(self.warehouse))
        self.views = {name: sql for name, sql in view_definitions().items() if name not in self.all_tables}
        self._missing: set[str] = set()
        self._registered: set[str] = set()
        self.notes: list[str] = []
        self.connection.execute("SET enable_external_access = false")
        self.connection.execute("SET lock_configuration = true")

    def __enter__(self) -> DuckDbSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.connection.close()

    @property
    def names(self) -> set[str]:
        return (self.all_tables - self._missing) | set(self.views)

    def ensure(self, name: str) -> bool:
        """Register `name` (table or view); False when it (or a view's base table) has no such version."""
        if name in self._registered:
            return True
        if name in self.all_tables:
            if not self._register_table(name):
                return False
        elif name in self.views:
            bases = {ref for _, _, ref in referenced_names(tokenize(self.views[name]))}
            if not all(self.ensure(base) for base in bases):
                return False
            self.connection.execute(f"CREATE VIEW {name} AS {self.views[name]}")
        else:
            return False
        self._registered.add(name)
        return True

    def _register_table(self, name: str) -> bool:
        from deltalake import DeltaTable

        layer, _, table = name.partition(".")
        path = str(self.warehouse / layer / table)
        if self.version is not None:
            latest = DeltaTable(path).version()
            if latest < self.version:
                self._missing.add(name)
                return False
        snapshot = DeltaTable(path, version=self.version) if self.version is not None else DeltaTable(path)
        arrow_name = f"__delta_{layer}_{table}"
        self.connection.register(arrow_name, snapshot_dataset(snapshot))
        self.connection.execute(f'CREATE VIEW {layer}."{table}" AS SELECT * FROM temp.main."{arrow_name}"')
        return True

    def ensure_all(self) -> None:
        for name in sorted(self.names):
            self.ensure(name)

    def prepare(self, tokens: list[Token]) -> str:
        """Register what the statement mentions and return its text."""
        words = [t.text.lower() for t in tokens if t.kind == "word"]
        if words[:1] == ["show"] or "information_schema" in words:  # lists what is registered
            self.ensure_all()
        for _, _, name in referenced_names(tokens):
            if name in self.all_tables and not self.ensure(name):
                self.notes.append(f"{name} has no version {self.version}")
            elif name in self.views and not self.ensure(name):
                self.notes.append(f"{name}: its base tables do not exist (at this version)")
        return "".join(t.text for t in tokens)

    def query(self, statement: str | list[Token]) -> tuple[list[str], Iterator[tuple]]:
        """Run one statement (after the read-only check): its column names and rows."""
        tokens = tokenize(statement) if isinstance(statement, str) else statement
        check_read_only(tokens)
        listing = table_listing(tokens, self.names)
        if listing is not None:
            return listing
        relation = self.connection.sql(self.prepare(tokens))
        if relation is None:  # a statement without a result
            return [], iter(())
        return result_rows(relation)

    def relation(self, query: str, tables: Iterable[str]) -> duckdb.DuckDBPyRelation | None:
        """`query` (DuckDB SQL that only reads `tables`) bound but not run, or None when one of
        the tables has no such version (a note says which)."""
        for name in sorted(tables):
            if not self.ensure(name):
                self.notes.append(f"{name} has no version {self.version}")
                return None
        return self.connection.sql(query)


def result_rows(relation: duckdb.DuckDBPyRelation) -> tuple[list[str], Iterator[tuple]]:
    """A relation's column names and rows, its HUGEINT columns (DuckDB's sum of integers) as
    BIGINT, Spark's type for them: the query runs here."""
    if any(str(kind) == "HUGEINT" for kind in relation.types):
        relation = relation.project(
            ", ".join(
                f"CAST({_quoted(c)} AS BIGINT) AS {_quoted(c)}" if str(kind) == "HUGEINT" else _quoted(c)
                for c, kind in zip(relation.columns, relation.types, strict=True)
            )
        )
    return list(relation.columns), _rows(relation.to_arrow_reader(_BATCH_ROWS))


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def snapshot_dataset(table: DeltaTable) -> ds.Dataset:
    """The snapshot's live files as an Arrow dataset, partition values included.

    Not `DeltaTable.to_pyarrow_dataset()`: it turns each file's statistics into a guarantee, and
    where a string column has no min/max statistics (Spark leaves long values out) an equality
    filter pushed down by DuckDB then skips files that hold matching rows.
    """
    import pyarrow as pa
    import pyarrow.dataset as ds
    from pyarrow import fs

    schema = pa.schema(table.schema().to_arrow())
    partition_columns = table.metadata().partition_columns
    adds = pa.table(table.get_add_actions(flatten=True)).to_pylist()
    root = table.table_uri.removeprefix("file://")
    paths, partitions = [], []
    for add in adds:
        paths.append(os.path.join(root, unquote(add["path"])))
        condition = ds.scalar(True)
        for column in partition_columns:
            value = add.get(f"partition.{column}")
            field = ds.field(column)
            equal = (
                field.is_null()
                if value is None
                else field == pa.scalar(value).cast(schema.field(column).type)
            )
            condition = condition & equal
        partitions.append(condition)
    return ds.FileSystemDataset.from_paths(
        paths, schema, ds.ParquetFileFormat(), fs.LocalFileSystem(), partitions=partitions
    )


def _rows(reader: pa.RecordBatchReader) -> Iterator[tuple]:
    """Rows as PySpark hands them back, so both engines print the same text: timestamps naive in
    the process's local time, structs as Rows (printed in field order), maps as dicts, intervals
    as timedeltas (`output.Interval` when they count months)."""
    for batch in reader:
        types = [field.type for field in batch.schema]
        columns = [column.to_pylist() for column in batch.columns]
        for values in zip(*columns, strict=True):
            yield tuple(_as_spark_returns(value, kind) for value, kind in zip(values, types, strict=True))


def _as_spark_returns(value: Any, kind: pa.DataType) -> Any:
    import pyarrow as pa
    from pyspark.sql import Row

    if value is None:
        return None
    if pa.types.is_map(kind):  # Arrow hands maps back as (key, value) pairs
        return {k: _as_spark_returns(v, kind.item_type) for k, v in value}
    if pa.types.is_struct(kind):
        return Row(**{f.name: _as_spark_returns(value[f.name], f.type) for f in kind})
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return [_as_spark_returns(v, kind.value_type) for v in value]
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone().replace(tzinfo=None)
    if pa.types.is_interval(kind):  # (months, days, nanoseconds): a timedelta as Spark's day-time intervals
        months, days, nanoseconds = value
        if months:
            return Interval(months, days, nanoseconds // 1000)
        return dt.timedelta(days=days, microseconds=nanoseconds // 1000)
    return value
