"""Which rows a read wants, said so that an engine can skip whole files before reading any.

Why: an incremental run asks a table for a few slices of its rows (the keys of the batch's
event dates, the quarantine rows of the last hour, the open intervals of some entities), and
without a way to say so every such question read every file. A `Bound` names one column and
the values (or the lowest value) wanted; a read given bounds returns exactly the rows that
satisfy all of them, and reads only the files whose partition values and statistics (min, max,
null count in the Delta log) can hold such rows. Engines that keep no statistics of a column,
or none of a file, read that file: pruning only ever skips what cannot match.

    store.read("silver.datahub_entity_changes", where=[In("event_month", months), In("event_date", dates)])
    store.read("silver.quarantine", where=[In("source_table", [table]), AtLeast("quarantined_at", since)])
    store.read_any("gold.tag_timeline", [[In("root_urn", g), In("is_current", [True])], [...]])
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipelines.runtime.sql_expressions import literal, literals, name

# Delta statistics of timestamps may hold milliseconds only (delta-spark and delta-rs' own
# rewrites truncate them): a file's max may be up to this much below its true max.
TIMESTAMP_SLACK = dt.timedelta(milliseconds=1)


@dataclass(frozen=True)
class In:
    """Rows whose `column` is one of `values` (a null matches nothing)."""

    column: str
    values: tuple

    def __init__(self, column: str, values: Sequence[Any]):
        object.__setattr__(self, "column", column)
        object.__setattr__(self, "values", tuple(sorted({v for v in values if v is not None}, key=_order)))

    def sql(self) -> str:
        if not self.values:
            return "false"
        return f"{name(self.column)} IN ({literals(self.values)})"


@dataclass(frozen=True)
class AtLeast:
    """Rows whose `column` is at least `value` (a null matches nothing)."""

    column: str
    value: Any

    def sql(self) -> str:
        return f"{name(self.column)} >= {literal(self.value)}"


@dataclass(frozen=True)
class Missing:
    """Rows whose `column` is null (or that a file written before the column existed holds)."""

    column: str

    def sql(self) -> str:
        return f"{name(self.column)} IS NULL"


Bound = In | AtLeast | Missing


def any_selection(selections: Sequence[Sequence[Bound]]) -> Column:
    """The Spark condition of rows matching any selection (each: all of its bounds), built from
    SQL text in one JVM call."""
    return F.expr(selections_sql(selections))


def select_matching(rows: DataFrame, selections: Sequence[Sequence[Bound]]) -> DataFrame:
    """The rows of `rows` matching any selection; a bound on a column `rows` lacks sees nulls
    there (a table written before the column existed)."""
    missing = sorted({b.column for s in selections for b in s} - set(rows.columns))
    if not missing:
        return rows.where(any_selection(selections))
    padded = rows.select("*", *[F.lit(None).alias(c) for c in missing])
    return padded.where(any_selection(selections)).drop(*missing)


def selections_sql(selections: Sequence[Sequence[Bound]]) -> str:
    """SQL text of rows matching any selection (each: all of its bounds), e.g. for Delta's
    `replaceWhere`; `false` for none."""
    terms = ["(" + " AND ".join(b.sql() for b in s) + ")" if s else "true" for s in selections]
    return " OR ".join(terms) if terms else "false"


def _order(value: Any) -> tuple:
    """A sort key that keeps values of one type in their order (dates, numbers, strings)."""
    return (type(value).__name__, value)


def _comparable(value: Any) -> Any:
    """`value` as the statistics columns hold it: timestamps in UTC, dates as dates."""
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=dt.timezone.utc)
    return value


def partition_text(value: Any) -> str:
    """A value as Delta writes it in `partitionValues` (dates ISO, booleans lower case)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value.isoformat()
    return str(value)


def files_that_may_match(
    files: pa.Table, bounds: Sequence[Bound], partition_columns: Sequence[str]
) -> pa.Array:
    """A boolean per row of `files` (a snapshot's add actions, flattened: `partition.<c>`,
    `min.<c>`, `max.<c>`, `null_count.<c>`, `num_records`): False only for files that cannot
    hold a row satisfying every bound."""
    keep = pa.array([True] * files.num_rows, pa.bool_())
    for bound in bounds:
        keep = pc.and_(keep, _may_match(files, bound, partition_columns))
    return keep


def _may_match(files: pa.Table, bound: Bound, partition_columns: Sequence[str]) -> pa.Array:
    name = bound.column
    everything = pa.array([True] * files.num_rows, pa.bool_())
    if isinstance(bound, In) and not bound.values:
        return pa.array([False] * files.num_rows, pa.bool_())  # nothing is wanted
    if isinstance(bound, Missing):
        return _may_hold_nulls(files, name, partition_columns)
    if name in partition_columns and f"partition.{name}" in files.column_names:
        values = files[f"partition.{name}"].to_pylist()
        return pa.array([partition_may_match(v, bound) for v in values], pa.bool_())
    low, high = f"min.{name}", f"max.{name}"
    if low not in files.column_names or high not in files.column_names:
        return everything
    lows, highs = files[low].to_pylist(), files[high].to_pylist()
    nulls = files[f"null_count.{name}"].to_pylist() if f"null_count.{name}" in files.column_names else None
    records = files["num_records"].to_pylist() if "num_records" in files.column_names else None
    result = []
    for index, (lo, hi) in enumerate(zip(lows, highs, strict=True)):
        if (
            nulls is not None
            and records is not None
            and nulls[index] is not None
            and records[index] is not None
        ):
            if records[index] > 0 and nulls[index] >= records[index]:
                result.append(False)  # only nulls: no value matches
                continue
        if lo is None or hi is None:
            result.append(True)  # no statistics of this column in this file
            continue
        result.append(_range_may_match(lo, hi, bound))
    return pa.array(result, pa.bool_())


def _may_hold_nulls(files: pa.Table, name: str, partition_columns: Sequence[str]) -> pa.Array:
    if name in partition_columns and f"partition.{name}" in files.column_names:
        return pc.is_null(files[f"partition.{name}"])
    nulls = f"null_count.{name}"
    if nulls not in files.column_names:
        return pa.array([True] * files.num_rows, pa.bool_())
    return pc.fill_null(pc.greater(files[nulls], 0), True)  # no count: cannot tell


def _widened(high: Any) -> Any:
    return high + TIMESTAMP_SLACK if isinstance(high, dt.datetime) else high


def _range_may_match(low: Any, high: Any, bound: Bound) -> bool:
    high = _widened(high)
    try:
        if isinstance(bound, AtLeast):
            return high >= _comparable(bound.value)
        values = [_comparable(v) for v in bound.values]  # sorted (`In` sorts them)
        first = bisect.bisect_left(values, low)
        return first < len(values) and values[first] <= high
    except TypeError:  # a statistic of another type than the bound's values: cannot tell
        return True


def partition_may_match(value: Any, bound: Bound) -> bool:
    """Whether rows of a file whose partition value of `bound.column` is `value` (as the log
    holds it: text, or typed) can satisfy `bound`."""
    if isinstance(bound, Missing):
        return value is None
    if value is None:
        return False  # a null partition holds only nulls, which match no other bound
    text = partition_text(value)
    if isinstance(bound, In):
        return text in {partition_text(v) for v in bound.values}
    try:
        return _comparable(_typed_like(text, bound.value)) >= _comparable(bound.value)
    except (TypeError, ValueError):
        return True


def _typed_like(text: str, example: Any) -> Any:
    """A partition value's text read as the type of `example`."""
    if isinstance(example, bool):
        return text == "true"
    if isinstance(example, dt.datetime):
        return dt.datetime.fromisoformat(text)
    if isinstance(example, dt.date):
        return dt.date.fromisoformat(text)
    if isinstance(example, int):
        return int(text)
    if isinstance(example, float):
        return float(text)
    return text
