"""Rows a task has already computed, held in the driver as Arrow, that the store writes as they are.

Why: a small task's rows are computed in one Spark job (`toArrow`), its expectation suite is
measured on that table (`pipelines.quality.collected`), and the write takes the same table:
delta-rs commits Arrow files directly, with no second Spark job to compute the rows again;
Delta's own engine reads the table back as a local relation (`frame`), whose write is the only
job it runs.

    rows = CollectedRows(frame.toArrow(), frame.schema)
    store.append(rows, "gold.tag_timeline", metadata=...)
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructField, StructType

from pipelines.store.arrow_schema import spark_to_arrow


@dataclass(frozen=True)
class CollectedRows:
    """`table`: the rows, as `DataFrame.toArrow` gave them; `schema`: the Spark schema of the frame
    they came from (its names in `table`'s order), which a write keeps (Arrow alone loses Spark's
    exact types, e.g. a map's or a decimal's)."""

    table: pa.Table
    schema: StructType

    def __post_init__(self) -> None:
        if self.table.column_names != self.schema.names:
            raise ValueError(f"collected columns {self.table.column_names} differ from {self.schema.names}")

    @property
    def columns(self) -> list[str]:
        return list(self.schema.names)

    @property
    def num_rows(self) -> int:
        return self.table.num_rows

    def frame(self, spark: SparkSession) -> DataFrame:
        """The rows as a frame of a local relation: reading it runs no scan of any table. One
        partition: the rows are few, and a write of them makes one file, not one per core."""
        return spark.createDataFrame(self.table, schema=self.schema).coalesce(1)

    def with_null_columns(self, fields: list[StructField]) -> CollectedRows:
        """These rows with `fields` added last, null in every row (a table's columns the rows lack)."""
        table, schema = self.table, StructType(list(self.schema.fields))
        for field, arrow_field in zip(fields, spark_to_arrow(StructType(fields)), strict=True):
            table = table.append_column(
                pa.field(field.name, arrow_field.type), pa.nulls(table.num_rows, arrow_field.type)
            )
            schema = schema.add(field)
        return CollectedRows(table, schema)


Rows = DataFrame | CollectedRows  # what the store's writes take


def as_frame(rows: Rows, spark: SparkSession) -> DataFrame:
    """`rows` as a frame (collected rows as a local relation)."""
    return rows.frame(spark) if isinstance(rows, CollectedRows) else rows
