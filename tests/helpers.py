"""Small builders for readable fixtures."""

from __future__ import annotations

import datetime as dt
import json

from pyspark.sql import DataFrame, SparkSession

from bronze.schema import BRONZE_COLUMNS

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
