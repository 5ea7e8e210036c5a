"""`lakehouse sql` without `--engine`: each statement answered by DuckDB where it gives Spark
SQL's answer (`pipelines.query.portable`), else by Spark SQL, whose session starts only when a
statement needs it. A note after each statement says which engine answered, and why Spark when
it was Spark.

After the syntax check, DuckDB binds the query and its result types are checked too: a type
DuckDB prints otherwise than Spark (a timestamp without time zone, a UUID) sends the statement
to Spark, and so does an error of DuckDB's (Spark then gives its own answer or its own error).
Intervals print alike (`pipelines.query.output`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from pipelines.query.duckdb_session import DuckDbSession, result_rows
from pipelines.query.names import table_listing
from pipelines.query.portable import DUCKDB, SPARK, to_duckdb
from pipelines.query.statements import Token, text_of, tokenize

if TYPE_CHECKING:
    import duckdb

    from pipelines.query.spark_session import SqlSession

# DuckDB result types that print as Spark's do (through `duckdb_session._rows`); nested types
# are checked by their parts
ALIKE_TYPES = {
    "BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "FLOAT", "DOUBLE", "VARCHAR",
    "DATE", "TIMESTAMP WITH TIME ZONE", "DECIMAL", "NULL", "INTERVAL",
}  # fmt: skip


INFORMATION_SCHEMA = "information_schema"


class AutoSession:
    """DuckDB where it answers alike, else Spark SQL (started on first need).

    with AutoSession(DuckDbSession("warehouse"), lambda: SqlSession(spark, "warehouse")) as sql:
        columns, rows = sql.query("SELECT count(*) FROM gold.tag_timeline")  # DuckDB
        sql.notes  # ["answered by DuckDB"]
    """

    def __init__(self, duck: DuckDbSession, start_spark: Callable[[], SqlSession]):
        self.duck = duck
        self._start_spark = start_spark
        self.spark: SqlSession | None = None
        self.notes: list[str] = []

    def __enter__(self) -> AutoSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.duck.close()
        if self.spark is not None:
            self.spark.close()

    @property
    def names(self) -> set[str]:
        return self.duck.names

    @property
    def query_errors(self) -> tuple[type[Exception], ...]:
        return self.duck.query_errors + (self.spark.query_errors if self.spark is not None else ())

    def query(self, statement: str | list[Token]) -> tuple[list[str], Iterator]:
        """Run one statement on the engine that answers it alike: its column names and rows."""
        tokens = tokenize(statement) if isinstance(statement, str) else statement
        listing = table_listing(tokens, self.duck.names)
        if listing is not None:  # the same rows on every engine, from the warehouse's names
            self.notes.append(f"answered by {DUCKDB}")
            return listing
        if any(t.name == INFORMATION_SCHEMA for t in tokens):  # DuckDB's own; Spark SQL has none
            answer = self.duck.query(tokens)
            self.notes.append(f"answered by {DUCKDB}: {INFORMATION_SCHEMA} is DuckDB's (Spark SQL has none)")
            return answer
        translation = to_duckdb(text_of(tokens), self.duck.names)
        reason = translation.reason
        if translation.sql is not None:
            try:
                relation = self.duck.relation(translation.sql, translation.tables)
                reason = (
                    _types_unlike_spark(relation) if relation is not None else "a table has no such version"
                )
                if not reason:
                    answer = result_rows(relation)
                    self.notes.append(f"answered by {DUCKDB}")
                    return answer
            except self.duck.query_errors as exc:
                reason = f"{DUCKDB} could not answer it ({_first_line(exc)})"
            self.duck.notes.clear()  # Spark says the same in its own words
        if self.spark is None:
            self.spark = self._start_spark()
        try:
            return self.spark.query(tokens)
        finally:
            self.notes += self.spark.notes
            self.spark.notes.clear()
            self.notes.append(f"answered by {SPARK}: {reason}")


def _types_unlike_spark(relation: duckdb.DuckDBPyRelation) -> str:
    """Why a result column would print otherwise than Spark's, or "" when none would."""
    for column, kind in zip(relation.columns, relation.types, strict=True):
        unlike = _unlike(kind)
        if unlike:
            return f"its column {column} is a {unlike}, which {DUCKDB} prints otherwise"
    return ""


def _unlike(kind) -> str:  # kind: duckdb.DuckDBPyType
    name = kind.id.upper()
    if name in ("LIST", "ARRAY"):
        return _unlike(kind.child)
    if name == "MAP":
        return _unlike(kind.key) or _unlike(kind.value)
    if name == "STRUCT":
        return next((u for _, child in kind.children if (u := _unlike(child))), "")
    return "" if name in ALIKE_TYPES else name


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
