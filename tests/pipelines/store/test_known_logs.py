"""On delta-spark a run starts from what the run before it learnt of each table's log, once the
table proves to be at the version recorded: no `DESCRIBE HISTORY` (a Spark job each) for a table
that did not move. A table that moved since (another writer, another engine), one dropped and
made again, or a record written for other table names, is asked as if there were no record, so
the answers a run works from are the log's own in every case."""

from __future__ import annotations

import json
import shutil

import pytest

from pipelines.store import open_store
from pipelines.store.known_logs import RECORD
from tests.support.engines import skip_without_delta_spark

pytestmark = pytest.mark.slow  # Delta's JVM engine: seconds per commit
TABLE = "silver.events"
OTHER = "gold.summary"


@pytest.fixture
def store(spark, warehouse):
    skip_without_delta_spark("delta-spark")
    return open_store(spark, warehouse, "delta-spark")


def _timed(store, spark, name: str, first: int) -> None:
    """Three rows (`id` from `first`, `at` a day apart) in one commit, its watermark `first`."""
    frame = spark.sql(
        f"SELECT id, TIMESTAMP'2026-01-01' + make_interval(0, 0, 0, CAST(id AS INT)) AS at "
        f"FROM range({first}, {first + 3})"
    )
    store.append(frame, name, metadata={"watermark": first})


class _Jobs:
    """The Spark jobs started inside (a job group of their own)."""

    def __init__(self, spark, label: str):
        self.spark, self.label = spark, label

    def __enter__(self):
        self.spark.sparkContext.setJobGroup(self.label, self.label)
        return self

    def __exit__(self, *exc):
        self.count = len(self.spark.sparkContext.statusTracker().getJobIdsForGroup(self.label))
        self.spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)


def _a_run(store, names, spark, label):
    """A run's store: it starts from the record, answers what a task asks, and records its own."""
    run = store.for_run()
    with _Jobs(spark, label) as jobs:
        for name in names:  # one at a time, on this thread: its job group counts every job
            run.prefetch([name])
        answers = {
            name: (run.version(name), run.last_metadata(name, "watermark"), run.max_micros(name, "at"))
            for name in names
        }
    return run, answers, jobs.count


def test_a_run_starts_from_the_last_runs_record_without_a_job_for_tables_that_did_not_move(store, spark):
    names = [TABLE, OTHER]
    for name in names:
        _timed(store, spark, name, 0)
        _timed(store, spark, name, 3)
    first, asked, jobs_asking = _a_run(store, names, spark, "first")
    first.remember_logs(names)
    assert (store.warehouse / RECORD).is_file()

    _, adopted, jobs_adopting = _a_run(store, names, spark, "second")

    assert adopted == asked  # the same versions, watermarks and newest times as the logs gave
    assert asked[TABLE][:2] == (1, 3)
    assert jobs_asking >= 2 * len(names)  # a history and an aggregate per table
    assert jobs_adopting == 0


def test_a_table_moved_since_the_record_is_asked_again(store, spark):
    names = [TABLE, OTHER]
    for name in names:
        _timed(store, spark, name, 0)
    run, _, _ = _a_run(store, names, spark, "first")
    run.remember_logs(names)
    _timed(store, spark, TABLE, 3)  # a writer the record never saw

    _, answers, _ = _a_run(store, names, spark, "after")

    assert answers[TABLE][:2] == (1, 3)
    assert answers[OTHER][:2] == (0, 0)


def test_a_table_made_again_with_fewer_versions_is_not_taken_for_the_recorded_one(store, spark):
    for first in (0, 3, 6):
        _timed(store, spark, TABLE, first)
    run, before, _ = _a_run(store, [TABLE], spark, "first")
    run.remember_logs([TABLE])
    assert before[TABLE][:2] == (2, 6)
    spark.sql(f"DROP TABLE {store.catalog_name(TABLE)}")  # the session catalog's: its folder stays
    shutil.rmtree(store.path(TABLE))
    made_again = open_store(spark, store.warehouse, "delta-spark")
    _timed(made_again, spark, TABLE, 100)

    _, answers, _ = _a_run(made_again, [TABLE], spark, "again")

    assert answers[TABLE][:2] == (0, 100)


def test_a_record_for_other_table_names_or_unreadable_is_not_used(store, spark):
    _timed(store, spark, TABLE, 0)
    run, _, _ = _a_run(store, [TABLE], spark, "first")
    run.remember_logs([TABLE])
    path = store.warehouse / RECORD
    recorded = json.loads(path.read_text())
    recorded["tables"][TABLE]["commits"][0]["userMetadata"] = json.dumps({"watermark": 99})
    path.write_text(json.dumps({**recorded, "tables_of": "another_catalog|"}))

    _, answers, _ = _a_run(store, [TABLE], spark, "foreign")
    assert answers[TABLE][:2] == (0, 0)

    path.write_text("{not json")
    _, answers, _ = _a_run(store, [TABLE], spark, "unreadable")
    assert answers[TABLE][:2] == (0, 0)
