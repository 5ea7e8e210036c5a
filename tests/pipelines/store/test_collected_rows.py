"""Rows collected as Arrow are written as a frame of the same rows would be, on every engine, and a
run's store reads a table's few new rows once, as Spark would have read them."""

from __future__ import annotations

import pytest

from pipelines.store import open_store
from pipelines.store.collected import CollectedRows
from tests.support.engines import engine_store
from tests.support.tables import spark_jobs

pytestmark = pytest.mark.usefixtures("small_input")  # a few rows per table: run as a small input

TYPED = (
    "id",
    "CAST(id AS DECIMAL(12, 2)) AS amount",
    "timestamp_seconds(1700000000 + id) AS at",
    "IF(id = 2, NULL, map('k', CAST(id AS STRING))) AS tags",
    "array(named_struct('x', id, 'y', CAST(NULL AS STRING))) AS parts",
    "IF(id = 3, NULL, date_add(DATE'2024-01-31', CAST(id AS INT))) AS day",
)


def _frame(spark, first: int = 0, rows: int = 4):
    return spark.range(first, first + rows).selectExpr(*TYPED)


def _collected(frame) -> CollectedRows:
    return CollectedRows(frame.toArrow(), frame.schema)


def _sorted(df):
    return sorted(df.collect())


def test_collected_rows_read_back_as_a_local_table_of_the_same_rows_and_types(spark, capsys):
    frame = _frame(spark)

    local = _collected(frame).frame(spark)

    assert local.schema == frame.schema
    assert _sorted(local) == _sorted(frame)
    local.explain()
    plan = capsys.readouterr().out
    assert "LocalTableScan" in plan and "Range" not in plan  # read back, not computed again


def test_collected_rows_are_written_as_their_frame_is(engine, spark, tmp_path):
    by_frame = engine_store(spark, tmp_path / "frames", engine)
    by_arrow = engine_store(spark, tmp_path / "arrow", engine)
    for first in (0, 10):
        frame = _frame(spark, first)
        by_frame.append(frame, "silver.t", partition_by=["day"], rows=4)
        by_arrow.append(_collected(frame), "silver.t", partition_by=["day"], rows=4)

    assert by_arrow.read("silver.t").schema == by_frame.read("silver.t").schema
    assert _sorted(by_arrow.read("silver.t")) == _sorted(by_frame.read("silver.t"))


def test_collected_rows_lacking_a_column_of_the_table_write_it_null(engine, spark, warehouse):
    store = engine_store(spark, warehouse, engine)
    store.append(_frame(spark), "silver.t", rows=4)
    fewer = _frame(spark, 10).drop("tags", "parts")

    store.append(_collected(fewer), "silver.t", rows=4)

    later = store.read("silver.t").where("id >= 10")
    assert later.columns == store.read("silver.t").columns
    assert [(r.id, r.tags, r.parts) for r in sorted(later.collect())] == [
        (i, None, None) for i in range(10, 14)
    ]


def test_a_runs_store_reads_a_tables_new_rows_once_and_as_spark_reads_them(engine, spark, warehouse):
    store = engine_store(spark, warehouse, engine)
    store.append(_frame(spark), "bronze.t", partition_by=["day"], rows=4)
    before = store.version("bronze.t")
    store.append(_frame(spark, 10), "bronze.t", partition_by=["day"], rows=4)
    store.append(_frame(spark, 20), "bronze.t", partition_by=["day"], rows=4)
    run = store.for_run()

    first = run.read_added_since("bronze.t", before, collected=True)
    again, jobs = spark_jobs(
        spark, lambda: run.read_added_since("bronze.t", before, collected=True).collect()
    )

    assert first.schema == store.read_added_since("bronze.t", before).schema
    assert _sorted(first) == _sorted(store.read_added_since("bronze.t", before))
    assert sorted(again) == _sorted(first) and jobs == 0  # the run's second read: no job, no scan


def test_delta_rs_reads_new_rows_into_the_driver_without_spark(spark, warehouse):
    store = open_store(spark, warehouse, "delta-rs")
    store.append(_frame(spark), "bronze.t", partition_by=["day"], rows=4)
    store.append(_frame(spark, 10), "bronze.t", partition_by=["day"], rows=4)

    rows, jobs = spark_jobs(spark, lambda: store.for_run().read_added_since("bronze.t", 0, collected=True))

    assert jobs == 0
    assert sorted(r.id for r in rows.collect()) == list(range(10, 14))
