"""Column helpers shared by the silver transforms: deterministic ids, safe casts, lineage.

Casts never fail a job: an uncastable value becomes null and the field's name
is added to the row's `_errors`, which sends the row to quarantine.

A helper ending in `_text` gives the same expression as Spark SQL text (`pipelines/runtime/sql_expressions.py`)
over operands that are themselves text, for transforms that build wide plans as text. Where every
caller can pass text the Column helper is a wrapper over it (`epoch_unit`, `epoch_millis_to_timestamp`);
`deterministic_id` and `cast_error` keep a Column form for their callers that pass Column
expressions, and `tests/silver/test_common.py` holds the two forms equal.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipelines.core.table_specs import ERRORS_COLUMN
from pipelines.runtime.sql_expressions import column, data_type, literal, name, when

LINEAGE = ("raw", "source_file", "record_index", "ingested_at")
_SEPARATOR = "\u001f"
_NULL = "\u0000"


def deterministic_id(*parts: Column | str) -> Column:
    """sha256 of the parts (nulls distinguished from empty strings): same record, same id."""
    cols = [F.coalesce(F.col(p) if isinstance(p, str) else p, F.lit(_NULL)) for p in parts]
    return F.sha2(F.concat_ws(_SEPARATOR, *[c.cast("string") for c in cols]), 256)


def deterministic_id_text(*parts: str) -> str:
    """`deterministic_id` of SQL text parts (an expression each, not a column name)."""
    cols = [f"CAST(coalesce({part}, {literal(_NULL)}) AS STRING)" for part in parts]
    return f"sha2(concat_ws({literal(_SEPARATOR)}, {', '.join(cols)}), 256)"


def canonical_map_text(value: str) -> str:
    """A map as sorted-entries JSON, so key order in the source never changes an id."""
    return f"CASE WHEN ({value}) IS NULL THEN NULL ELSE to_json(array_sort(map_entries({value}))) END"


def safe_cast(value: Column, to: str) -> Column:
    """`try_cast` (null instead of an error)."""
    return value.try_cast(to)


def cast_error(value: Column, to: str, field: str) -> Column:
    """`cast:<field>` when a present value cannot be cast to `to`, else null."""
    return F.when(value.isNotNull() & value.try_cast(to).isNull(), F.lit(f"cast:{field}"))


def cast_error_text(value: str, to: str, field: str) -> str:
    """`cast_error` of a SQL text value."""
    return when(
        f"({value}) IS NOT NULL AND try_cast({value} AS {data_type(to)}) IS NULL", literal(f"cast:{field}")
    )


_MIN_MILLIS, _MAX_MILLIS = -62135596800000, 253402300799999  # 0001-01-01 .. 9999-12-31 UTC


def epoch_millis_to_timestamp_text(value: str) -> str:
    """UTC timestamp from epoch milliseconds given as number or numeric string (SQL text).

    Null (not a job-killing DATETIME_OVERFLOW) when the number is outside Spark's timestamp range.
    """
    millis = f"try_cast({value} AS BIGINT)"
    return f"CASE WHEN {millis} BETWEEN {_MIN_MILLIS}L AND {_MAX_MILLIS}L THEN timestamp_millis({millis}) END"


def epoch_millis_to_timestamp(value: str) -> Column:
    """`epoch_millis_to_timestamp_text` of a SQL text value as a Column:
    `epoch_millis_to_timestamp(name("_data", "createTime"))`."""
    return column(epoch_millis_to_timestamp_text(value))


SECONDS_BELOW = 100_000_000_000  # 1e11: as ms that is March 1973, as seconds the year 5138


def _in_seconds(number: str) -> str:
    """An event epoch (BIGINT text) too small to be milliseconds: seconds."""
    return f"abs({number}) < {literal(SECONDS_BELOW)}"


def epoch_unit_text(value: str) -> str:
    """'seconds' when an event epoch is too small to be milliseconds, else 'milliseconds' (null if not a number).

    Feeds sometimes send seconds where milliseconds are specified (the DataHub
    proposal samples do); read as ms they would all fall in January 1970.
    """
    number = f"try_cast({value} AS BIGINT)"
    return (
        f"CASE WHEN {number} IS NULL THEN NULL"
        f" WHEN {_in_seconds(number)} THEN {literal('seconds')}"
        f" ELSE {literal('milliseconds')} END"
    )


def epoch_unit(value: str) -> Column:
    """`epoch_unit_text` of a SQL text value as a Column: `epoch_unit(name("_event", "timestamp"))`."""
    return column(epoch_unit_text(value))


def event_epoch_to_timestamp_text(value: str) -> str:
    """UTC timestamp of an event epoch in milliseconds, or in seconds when `epoch_unit` says so."""
    number = f"try_cast({value} AS BIGINT)"
    millis = f"CASE WHEN {_in_seconds(number)} THEN {number} * {literal(1000)} ELSE {number} END"
    return epoch_millis_to_timestamp_text(millis)


def event_epoch_to_timestamp(value: str) -> Column:
    """`event_epoch_to_timestamp_text` of a SQL text value as a Column."""
    return column(event_epoch_to_timestamp_text(value))


def collect_errors(*checks: Column) -> Column:
    """array<string> of the non-null error names (empty array when none)."""
    return F.filter(F.array(*checks), lambda c: c.isNotNull()) if checks else F.array().cast("array<string>")


def corrupt_error_text() -> str:
    """`bronze_corrupt:<reason>` for rows bronze could not parse as a JSON object."""
    reason = f"coalesce({name('corrupt_reason')}, {literal('?')})"
    return when(name("is_corrupt"), f"concat({literal('bronze_corrupt:')}, {reason})")


def corrupt_error() -> Column:
    """`corrupt_error_text` as a Column."""
    return column(corrupt_error_text())


def with_errors(df: DataFrame, *checks: Column) -> DataFrame:
    return df.withColumn(ERRORS_COLUMN, collect_errors(*checks))


def lineage() -> list[Column]:
    return [F.col(c) for c in LINEAGE]
