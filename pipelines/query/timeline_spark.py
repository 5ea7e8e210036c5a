"""`lakehouse timeline` through Spark: the rows of `gold.change_history` about one entity, for
`pipelines.query.timeline.transactions` (which DuckDB's rows feed the same way)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipelines.query.timeline import CHANGE_COLUMNS, wanted_categories


def entity_changes(
    history: DataFrame,
    urn: str,
    categories: Sequence[str] = (),
    start: datetime | None = None,
    end: datetime | None = None,
) -> DataFrame:
    """The rows of `gold.change_history` about `urn` or its fields, filtered, oldest first."""
    rows = history.filter((F.col("entity_urn") == urn) | (F.col("parent_urn") == urn))
    if categories:
        rows = rows.filter(F.col("category").isin(*wanted_categories(categories)))
    if start is not None:
        rows = rows.filter(F.col("event_time") >= F.lit(start))
    if end is not None:
        rows = rows.filter(F.col("event_time") < F.lit(end))
    return rows.select(*CHANGE_COLUMNS).orderBy("event_time", "change_id")
