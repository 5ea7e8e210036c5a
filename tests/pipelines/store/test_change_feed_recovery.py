"""On delta-spark, the rows a reader has yet to read come from Delta's change data feed. Commits the
platform writes on its own (compaction, vacuum, statistics) change no row and are read as such; a
feed that a compaction and a vacuum have aged out past a reader's version is noticed before the
reader depends on it, and the reader gets the table's current state instead, with the reason on
stderr: what a task then computes (silver deduplicates, gold rebuilds) equals reading the feed."""

from __future__ import annotations

import logging

import pytest

from pipelines.runtime.spark import session_conf
from pipelines.store import open_store
from pipelines.store.delta_operations import NO_DATA_CHANGE
from pipelines.store.delta_spark import LISTING_PARALLELISM, _appends_only, _rows_added
from tests.support.engines import skip_without_delta_spark

pytestmark = pytest.mark.slow  # Delta's JVM engine: seconds per commit
TABLE = "bronze.events"  # a table later tasks read the new rows of: created with the feed on
VACUUM_LOGGED = {
    "spark.databricks.delta.vacuum.logging.enabled": "true",  # as Databricks logs its vacuums
    LISTING_PARALLELISM: "2",  # Delta lists the folder in 10,000 tasks by default: minutes on one machine
}


@pytest.fixture
def store(spark, warehouse):
    skip_without_delta_spark("delta-spark")
    return open_store(spark, warehouse, "delta-spark")


def _append(store, spark, first: int, rows: int = 3) -> None:
    frame = spark.createDataFrame([(i, f"e{i}") for i in range(first, first + rows)], "id int, name string")
    store.append(frame, TABLE)


def _ids(frame) -> list[int]:
    return sorted(row.id for row in frame.collect())


@pytest.mark.parametrize("operation", sorted(NO_DATA_CHANGE))
def test_every_data_neutral_operation_counts_as_adding_nothing(operation):
    commit = {"operation": operation, "operationParameters": {}, "operationMetrics": {"numOutputRows": "7"}}
    assert _appends_only(commit) and _rows_added(commit) == 0


def test_compaction_and_vacuum_commits_are_skipped_as_data_neutral(store, spark):
    for first in (0, 3, 6):
        _append(store, spark, first)
    seen = store.version(TABLE)
    # what predictive optimization runs: a compaction, then a vacuum within Delta's retention
    spark.sql(f"OPTIMIZE {store.ref(TABLE).catalog_name}").collect()
    with session_conf(spark, VACUUM_LOGGED):
        spark.sql(f"VACUUM {store.ref(TABLE).catalog_name} RETAIN 168 HOURS").collect()
    operations = [c["operation"] for c in store.history(TABLE)[:3]]
    assert operations == ["VACUUM END", "VACUUM START", "OPTIMIZE"]
    run = store.for_run()
    assert run.only_appended_since(TABLE, seen)
    assert run.count_added_since(TABLE, seen) == 0
    assert _ids(run.read_added_since(TABLE, seen)) == []
    _append(store, spark, 9)
    run = store.for_run()
    assert run.only_appended_since(TABLE, seen) and run.count_added_since(TABLE, seen) == 3
    assert _ids(run.read_added_since(TABLE, seen)) == [9, 10, 11]


def test_a_reader_behind_a_vacuumed_feed_reads_the_current_state_and_says_why(store, spark, caplog):
    _append(store, spark, 0)
    seen = store.version(TABLE)  # the reader's watermark: it has read ids 0-2
    for first in (3, 6):
        _append(store, spark, first)
    store.compact(TABLE, 64 * 1024 * 1024)  # the files of ids 3-8 are replaced ...
    run = store.for_run()
    assert run.only_appended_since(TABLE, seen)  # ... but still there: the feed holds them
    assert _ids(run.read_added_since(TABLE, seen)) == [3, 4, 5, 6, 7, 8]
    store.vacuum(TABLE, 0)  # ... and now gone
    run = store.for_run()
    with caplog.at_level(logging.WARNING, logger="pipelines.store.change_feed"):
        assert not run.only_appended_since(TABLE, seen)
        assert _ids(run.read_added_since(TABLE, seen)) == list(range(9))
        assert run.count_added_since(TABLE, seen) == 9
    (message,) = {r.getMessage() for r in caplog.records}
    assert f"{TABLE}: the change data feed no longer covers its reader's version {seen}" in message
    assert "OPTIMIZE rewrote them" in message and "reading the table's current state instead" in message
