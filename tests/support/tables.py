"""Small builders for readable fixtures, and the end-to-end checks the sample and scale tests share."""

from __future__ import annotations

import datetime as dt
import itertools
import json

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import MapType

from bronze.schema import BRONZE_COLUMNS
from pipelines.store import TableStore

LANDED_AT = dt.datetime(2025, 12, 31, 23, 0, tzinfo=dt.timezone.utc)  # bronze_frame's source_modified_at
INGESTED_AT = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)  # bronze_frame's ingested_at


def bronze_frame(
    spark: SparkSession,
    records: list,
    source_file: str = "/landing/test.jsonl",
    container: str | None = None,
    source_modified_at: dt.datetime | None = LANDED_AT,
) -> DataFrame:
    """Bronze rows for `records` (dicts are JSON-encoded; strings are used as raw text, corrupt if not an object)."""
    rows = []
    for index, record in enumerate(records):
        raw = record if isinstance(record, str) else json.dumps(record)
        try:
            corrupt = not isinstance(json.loads(raw), dict)
        except ValueError:
            corrupt = True
        rows.append(
            (
                raw,
                None,
                source_file,
                "hash",
                source_modified_at,
                index,
                index,
                container,
                INGESTED_AT,
                "run-test",
                corrupt,
                "malformed JSON" if corrupt else None,
            )
        )
    return spark.createDataFrame(rows, BRONZE_COLUMNS)


# End-to-end checks shared by the sample and the generated-scale tests ----------------------------

BRONZE_TABLES = {
    "datahub_ece": "bronze.datahub_entity_change_events",
    "datahub_audit": "bronze.datahub_audit_events",
    "openmetadata": "bronze.openmetadata_change_events",
    "dataworks": "bronze.dataworks_events",
}
# Columns a run stamps: two runs over the same data differ only in these (`newest_landed_at` of
# gold.feed_volume_daily is the newest `ingested_at` of a day's events).
RUN_SPECIFIC = frozenset(
    {
        "ingested_at",
        "ingest_run_id",
        "run_id",
        "quarantined_at",
        "validated_at",
        "logged_at",
        "newest_landed_at",
    }
)


def reconciliation(store: TableStore, by: str = "reconciles") -> dict[str, dict[str, int]]:
    """Sums of the successful silver runs in `ops.runs` per `by` (a source, or a table).

    Keys of each value: rows_in, rows_out, rows_quarantined, rows_duplicate.
    """
    runs = store.read("ops.runs").where(F.col("reconciles").isNotNull() & (F.col("status") == "SUCCESS"))
    sums = ("rows_in", "rows_out", "rows_quarantined", "rows_duplicate")
    rows = runs.groupBy(by).agg(*[F.sum(c).alias(c) for c in sums]).collect()
    return {r[by]: {c: r[c] for c in sums} for r in rows}


def assert_reconciles(store: TableStore) -> None:
    """bronze rows = silver rows + quarantined + duplicates removed, per source, as ops.runs reports."""
    totals = reconciliation(store)
    for source, table in BRONZE_TABLES.items():
        t = totals[source]
        accounted = t["rows_out"] + t["rows_quarantined"] + t["rows_duplicate"]
        assert accounted == t["rows_in"] == store.read(table).count(), (source, t)


def comparable(df: DataFrame, exclude: frozenset[str] = RUN_SPECIFIC) -> DataFrame:
    """One JSON string column `row` per row: every column but the run-stamped ones, by name, maps sorted."""
    columns = []
    for name in sorted(c for c in df.columns if c not in exclude):
        column = F.col(f"`{name}`")
        if isinstance(df.schema[name].dataType, MapType):
            column = F.array_sort(F.map_entries(column))
        columns.append(column.alias(name))
    return df.select(F.to_json(F.struct(*columns)).alias("row"))


def table_differences(
    left: DataFrame, right: DataFrame, limit: int = 5, exclude: frozenset[str] = RUN_SPECIFIC
) -> str | None:
    """None when both frames hold the same rows (as multisets), columns in `exclude` left out;
    else a readable sample of the differences.

    One Spark job in the usual case, equal frames: each distinct row's count on the left less
    its count on the right (`surplus`), summed by sign; a second job only for the sample."""
    a, b = comparable(left, exclude), comparable(right, exclude)
    surplus = (
        a.withColumn("side", F.lit(1))
        .unionByName(b.withColumn("side", F.lit(-1)))
        .groupBy("row")
        .agg(F.sum("side").alias("surplus"))
        .where(F.col("surplus") != 0)
    )
    n_left, n_right = surplus.agg(
        F.sum(F.greatest("surplus", F.lit(0))), F.sum(F.greatest(-F.col("surplus"), F.lit(0)))
    ).first()
    if not n_left and not n_right:
        return None
    lines = [f"{n_left or 0} rows only on the left, {n_right or 0} only on the right"]
    for sign, side in (("-", F.col("surplus") > 0), ("+", F.col("surplus") < 0)):
        for row in surplus.where(side).orderBy("row").limit(limit).collect():
            times = abs(row.surplus)
            lines.append(f"  {sign} {row.row}" + (f" (x{times})" if times > 1 else ""))
    return "\n".join(lines)


def set_differences(expected: set, actual: set, limit: int = 5) -> str:
    """A readable diff of two sets of tuples: counts, then the first few missing and unexpected."""
    missing, unexpected = sorted(expected - actual, key=repr), sorted(actual - expected, key=repr)
    lines = [f"{len(missing)} expected but absent, {len(unexpected)} present but not expected"]
    lines += [f"  missing    {m}" for m in missing[:limit]]
    lines += [f"  unexpected {u}" for u in unexpected[:limit]]
    return "\n".join(lines)


_JOB_GROUPS = itertools.count()


def spark_jobs(spark: SparkSession, action) -> tuple[object, int]:
    """`action()`'s result and how many Spark jobs it started (for "fewer jobs" checks).

    Each call gets its own job group: a group named after `id(action)` was reused when a freed
    lambda's address came back, and the second count then included the first one's jobs."""
    group = f"count-{next(_JOB_GROUPS)}"
    spark.sparkContext.setJobGroup(group, "counted")
    try:
        result = action()
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    return result, len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))
