"""Spark SQL over every table of a warehouse as `<layer>.<table>`: the Spark query engine of
`lakehouse sql`.

How the names resolve. With the delta-spark engine the tables are catalog tables
(`pipelines.store`): a reference `gold.tag_timeline` resolves natively (rewritten to its
catalog name where the configuration gives a catalog or schema prefix), and
`DESCRIBE HISTORY gold.tag_timeline` works. Otherwise, and for `--as-of-version`:
Spark's in-memory session catalog cannot hold a view of a
DataFrame inside a database (temporary views take single-part names; persistent
views may not reference DataFrames or temporary views), and the delta-rs engine's
snapshots are DataFrames over an explicit file list, not something a catalog table
can point at. So each table the statement mentions is read through the table store
(`store.read(name, version)`: the engine's snapshot, time travel included) and
registered as a temporary view whose single-part name *contains* the dot,
`` `silver.datahub_entity_changes` ``. Before a statement runs, each reference
`silver.datahub_entity_changes` (any case, parts optionally back-quoted) to a
known table is rewritten to that quoted name (`pipelines.query.names`). Unknown names are
left alone, so Spark's own "table not found" error names them. The gold current-state views
of `gold/current_views.py` are registered the same way over the rewritten SQL.
Views live in a session of their own (`pipelines.runtime.spark.task_session`; a Spark Connect
client's own session), so nothing leaks into other sessions, and are registered lazily (only
what a statement mentions), so start-up stays fast.

Read-only by construction (the views only read Parquet files) and by check
(`pipelines.query.statements.check_read_only`, before anything runs).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pipelines.query.names import quote, referenced_names, table_listing, view_definitions
from pipelines.query.output import Interval
from pipelines.query.statements import Token, check_read_only, tokenize
from pipelines.runtime.compute_rules import rules_of
from pipelines.runtime.spark import REQUIRED_CONF, task_session
from pipelines.store import TableStore, open_store


class SqlSession:
    """A private Spark session where the warehouse's tables resolve as `<layer>.<table>`.

    with SqlSession(spark, "warehouse") as sql:
        sql.execute("SELECT count(*) FROM silver.datahub_entity_changes").show()
    """

    def __init__(
        self,
        spark: SparkSession,
        warehouse: Any,
        engine: str = "auto",
        version: int | None = None,
        catalog: str = "",
        schema_prefix: str = "",
    ):
        # over Spark Connect the views are registered in `spark` itself: no session to end later
        self.spark = task_session(spark, connect_sibling=False)
        settings = {**REQUIRED_CONF, **_shuffle_conf(spark)}
        for key, value in rules_of(self.spark).settable_part(settings).items():  # serverless: a few
            self.spark.conf.set(key, value)
        self.store: TableStore = open_store(self.spark, warehouse, engine, catalog, schema_prefix)
        self.version = version
        # delta-spark: the tables are catalog tables, resolved by Spark itself (time travel
        # still goes through the store's snapshots)
        self.native = self.store.names_tables and version is None
        if self.native:
            self.store.register_all()
        self.all_tables = set(self.store.tables())
        self.tables = {name for name in self.all_tables if self._exists_at_version(name)}
        self.views = {name: sql for name, sql in view_definitions().items() if name not in self.tables}
        self._registered: set[str] = set()
        self.notes: list[str] = []

    def __enter__(self) -> SqlSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for name in self._registered:
            self.spark.catalog.dropTempView(name)  # takes the name as is, unlike createOrReplaceTempView
        self._registered.clear()

    def _exists_at_version(self, name: str) -> bool:
        if self.version is None:
            return True
        latest = self.store.version(name)
        return latest is not None and latest >= self.version

    @property
    def names(self) -> set[str]:
        return set(self.tables) | set(self.views)

    def ensure(self, name: str) -> bool:
        """Register `name` (table or view) if it can be; False when a view's base tables are missing."""
        if name in self._registered:
            return True
        if name in self.tables and self.native:
            return True
        if name in self.tables:
            self.store.read(name, self.version).createOrReplaceTempView(quote(name))
        elif name in self.views:
            tokens = tokenize(self.views[name])
            bases = {ref for _, _, ref in referenced_names(tokens)}
            if not all(base in self.names and self.ensure(base) for base in bases):
                return False
            self.spark.sql(self._rewrite(tokens)).createOrReplaceTempView(quote(name))
        else:
            return False
        self._registered.add(name)
        return True

    def ensure_all(self) -> None:
        for name in sorted(self.names):
            self.ensure(name)

    def _rewrite(self, tokens: list[Token]) -> str:
        replaced = {
            first: (last, name) for first, last, name in referenced_names(tokens) if name in self.names
        }
        out, i = [], 0
        while i < len(tokens):
            if i in replaced:
                last, name = replaced[i]
                out.append(self._resolved(name))
                i = last + 1
            else:
                out.append(tokens[i].text)
                i += 1
        return "".join(out)

    def _resolved(self, name: str) -> str:
        """What a reference to `name` becomes: the catalog table, or the registered view."""
        if self.native and name in self.tables:
            return self.store.catalog_name(name) or quote(name)
        return quote(name)

    def prepare(self, tokens: list[Token]) -> str:
        """Register what the statement mentions and return its text with names rewritten."""
        for _, _, name in referenced_names(tokens):
            if name in self.names and not self.ensure(name):
                self.notes.append(f"{name}: its base tables do not exist (at this version)")
            elif name in self.all_tables - self.tables:
                self.notes.append(f"{name} has no version {self.version}")
        return self._rewrite(tokens)

    def execute(self, statement: str | list[Token]) -> DataFrame:
        """Run one statement (after the read-only check) and return its result."""
        tokens = tokenize(statement) if isinstance(statement, str) else statement
        check_read_only(tokens)
        return self.spark.sql(self.prepare(tokens))

    def query(self, statement: str | list[Token]) -> tuple[list[str], Iterator]:
        """Run one statement: its column names and rows (the interface `run_script` reads)."""
        tokens = tokenize(statement) if isinstance(statement, str) else statement
        listing = table_listing(tokens, self.names)
        if listing is not None:
            check_read_only(tokens)
            return listing
        result = self.execute(tokens)
        months = _year_month_columns(result)
        if not months:
            return result.columns, result.toLocalIterator()
        return result.columns, _with_intervals(_months_cast(result, months).toLocalIterator(), months)

    @property
    def query_errors(self) -> tuple[type[Exception], ...]:
        from pyspark.errors import PySparkException

        return (PySparkException,)


def _year_month_columns(result: DataFrame) -> dict[int, int]:
    """{position: months per unit} of the year-month interval columns, which PySpark cannot hand
    back: cast to whole numbers of their last field (years or months) instead."""
    from pyspark.sql.types import YearMonthIntervalType

    return {
        i: 12 if kind.dataType.endField == YearMonthIntervalType.YEAR else 1
        for i, kind in enumerate(result.schema.fields)
        if isinstance(kind.dataType, YearMonthIntervalType)
    }


def _months_cast(result: DataFrame, months: dict[int, int]) -> DataFrame:
    names = [f"_{i}" for i in range(len(result.columns))]
    renamed = result.toDF(*names)
    return renamed.select(*[F.col(n).cast("int") if i in months else F.col(n) for i, n in enumerate(names)])


def _with_intervals(rows: Iterator, months: dict[int, int]) -> Iterator[tuple]:
    for row in rows:
        yield tuple(
            Interval(value * months[i]) if i in months and value is not None else value
            for i, value in enumerate(row)
        )


def _shuffle_conf(spark: SparkSession) -> dict[str, str]:
    key = "spark.sql.shuffle.partitions"
    return {key: spark.conf.get(key)} if spark.conf.get(key, None) else {}


def quiet_spark_errors() -> None:
    """PySpark logs every SQL error as a JSON record on stderr; the CLI prints one line instead."""
    from pyspark.logger import PySparkLogger

    PySparkLogger.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
