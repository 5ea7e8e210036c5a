"""Find and copy the rows of Parquet files that match a selection, with pyarrow.

For an incremental gold run, which replaces a few thousand groups in a table of a few hundred
thousand rows: deciding which data files hold a replaced row, and copying those files' other
rows, is a few columns read and a filter, which pyarrow does in this process in a fraction of
the time a Spark job takes to plan and schedule. Files are read `BATCH_ROWS` rows at a time,
so memory stays one batch however large a file grows with the table's history.

A `RowMatch` is a disjunction of selections, each a conjunction of `pipelines.store.pruning`
bounds. A bound on a partition column is decided by the file's partition value (Parquet files
of a partitioned Delta table do not hold those columns); a bound on a column a file does not
have (written before the column existed: all null there) matches none of its rows. As in a
join, a null matches nothing.
"""

from __future__ import annotations

import datetime as dt
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from pipelines.store.pruning import AtLeast, Bound, In, Missing, partition_may_match

BATCH_ROWS = 16_384  # pyarrow's default is 65,536


def _scalar_like(value: Any, dtype: pa.DataType) -> pa.Scalar:
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    return pa.scalar(value).cast(dtype)


@dataclass(frozen=True)
class RowMatch:
    """Rows matching any of `selections` (each: all of its bounds)."""

    selections: tuple[tuple[Bound, ...], ...]

    @classmethod
    def any_of(cls, selections: Sequence[Sequence[Bound]]) -> RowMatch:
        return cls(tuple(tuple(s) for s in selections if s))

    def columns(self) -> list[str]:
        return list(dict.fromkeys(b.column for s in self.selections for b in s))

    def for_file(self, partition_values: dict[str, str | None]) -> RowMatch:
        """This match within one file: selections its partition values rule out dropped, bounds
        its partition values satisfy removed (`partition_values`: the file's, by column)."""
        kept = []
        for selection in self.selections:
            rest, possible = [], True
            for bound in selection:
                if bound.column in partition_values:
                    possible = possible and partition_may_match(partition_values[bound.column], bound)
                else:
                    rest.append(bound)
            if possible:
                kept.append(tuple(rest))
        return RowMatch(tuple(kept))

    @property
    def nothing(self) -> bool:
        return not self.selections

    @property
    def everything(self) -> bool:
        return any(not s for s in self.selections)

    def mask(self, batch: pa.RecordBatch) -> pa.Array:
        """True for the rows of `batch` that match."""
        found = pa.array([False] * batch.num_rows, pa.bool_())
        for selection in self.selections:
            hit = pa.array([True] * batch.num_rows, pa.bool_())
            for bound in selection:
                hit = pc.and_(hit, _bound_mask(batch, bound))
            found = pc.or_(found, hit)
        return pc.fill_null(found, False)


def _bound_mask(batch: pa.RecordBatch, bound: Bound) -> pa.Array:
    index = batch.schema.get_field_index(bound.column)
    if index < 0:  # a file written before the column existed: all null there
        return pa.array([isinstance(bound, Missing)] * batch.num_rows, pa.bool_())
    data = batch.column(index)
    if isinstance(bound, Missing):
        return pc.is_null(data)
    if isinstance(bound, In):
        if not bound.values:
            return pa.array([False] * batch.num_rows, pa.bool_())
        values = pa.array(list(bound.values)).cast(data.type)
        return pc.fill_null(pc.is_in(data, value_set=values), False)
    if isinstance(bound, AtLeast):
        return pc.fill_null(pc.greater_equal(data, _scalar_like(bound.value, data.type)), False)
    raise TypeError(f"unknown bound {bound!r}")


def selections_expression(
    selections: Sequence[Sequence[Bound]], schema: pa.Schema, cast: bool = False
) -> pads.Expression:
    """A pyarrow dataset filter of rows matching any selection, over a dataset of `schema` (a bound
    on a column it lacks: a null column). `cast`: each column cast to the schema's type first,
    for datasets whose files hold a column in another type (`string_view` in the files a
    delta-rs merge writes, which pyarrow cannot compare with a `string` value)."""
    found = pads.scalar(False)
    for selection in selections:
        hit = pads.scalar(True)
        for bound in selection:
            hit = hit & _bound_expression(bound, schema, cast)
        found = found | hit
    return found


def _bound_expression(bound: Bound, schema: pa.Schema, cast: bool = False) -> pads.Expression:
    if bound.column not in schema.names:
        return pads.scalar(isinstance(bound, Missing))
    dtype = schema.field(bound.column).type
    field = pads.field(bound.column).cast(dtype) if cast else pads.field(bound.column)
    if isinstance(bound, Missing):
        return field.is_null()
    if isinstance(bound, In):
        if not bound.values:
            return pads.scalar(False)
        return field.isin(pa.array(list(bound.values)).cast(dtype))
    return field >= _scalar_like(bound.value, dtype)


def holds_any(file: str, match: RowMatch) -> bool:
    """Whether a row of the Parquet `file` matches (reads only the columns the match names)."""
    if match.nothing:
        return False
    parquet = pq.ParquetFile(file)
    if match.everything:
        return parquet.metadata.num_rows > 0
    columns = [c for c in match.columns() if c in parquet.schema_arrow.names]
    columns = columns or parquet.schema_arrow.names[:1]  # the match's columns are all absent: nulls
    for batch in parquet.iter_batches(BATCH_ROWS, columns=columns):
        if pc.any(match.mask(batch)).as_py():
            return True
    return False


def copy_rows_except(file: str, match: RowMatch, folder: str) -> str | None:
    """Copy the rows of `file` that do not match to a new Parquet file in `folder`, with the same
    schema (and Spark's footer metadata); returns its path, None when no row is left.
    Each batch becomes a row group of at most `BATCH_ROWS` rows."""
    parquet = pq.ParquetFile(file)
    target = os.path.join(folder, f"part-kept-{uuid.uuid4().hex}.parquet")
    writer = None
    try:
        for batch in parquet.iter_batches(BATCH_ROWS):
            kept = batch.filter(pc.invert(match.mask(batch)))
            if kept.num_rows:
                writer = writer or pq.ParquetWriter(target, parquet.schema_arrow)
                writer.write_batch(kept)
    finally:
        if writer is not None:
            writer.close()
    return target if writer is not None else None


def use_system_memory_pool() -> None:
    """Allocate pyarrow's buffers with the C library's allocator from now on (process-wide).
    Its default, mimalloc, held about twice the resident memory for the same copies, at the
    same speed."""
    pa.set_memory_pool(pa.system_memory_pool())


def release_free_memory() -> None:
    """Hand the pages pyarrow's allocator keeps for reuse back to the OS. After copying large
    files they would stay in the driver's resident memory until the process ends."""
    pa.default_memory_pool().release_unused()
