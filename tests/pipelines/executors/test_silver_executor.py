"""The silver executor's deduplication on real Delta tables.

A key's earliest landed row wins (ingested_at, source_file, record_index),
whatever order the rows come in; keys the table already holds are not written
again; rows that share key and bronze record (derived tables) collapse to one.

A table whose rows the source selects by one column's value (`RowSelector`, the
DataWorks families) is not typed at all when no new row is selected, and records
exactly what typing the empty batch would have recorded.

A table keyed from a deduplicated source (`source_unique`) appends a batch of distinct
keys as it is, without looking its keys up in the table, and deduplicates when a key repeats
or the source was rewritten.

The deduplication runs on both of the executor's paths (`both_paths`): a small batch's, whose
rows are collected once and split in the driver, and a large batch's, which stays in Spark.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipelines.core.context import RunContext
from pipelines.core.table_specs import ERRORS_COLUMN, RowSelector, SilverTableSpec
from pipelines.executors import silver as silver_executor
from pipelines.ops.bookkeeping import write_bookkeeping
from pipelines.quality import QualityGateError
from pipelines.store import open_store
from silver import dataworks_approvals
from silver import dataworks_catalog as catalog
from tests.support.dataworks_samples import SAMPLES, TYPE_CODES, events
from tests.support.tables import spark_jobs

SOURCE = "bronze.toy_events"
TABLE = "silver.toy_events"
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
SCHEMA = "raw string, source_file string, record_index long, ingested_at timestamp, copies int"


def _typed(bronze: DataFrame) -> DataFrame:
    """event_id = raw; a record with `copies` = 2 yields two rows (as an exploding derived table would),
    one with `copies` = 0 none (as a family table's filter would)."""
    rows = bronze.where(F.col("copies") > 0).withColumn(
        "_copy", F.explode(F.sequence(F.lit(1), F.col("copies")))
    )
    return rows.select(
        F.col("raw").alias("event_id"),
        F.lit(T0).cast("timestamp").alias("event_time"),
        F.lit(T0.date()).alias("event_date"),
        "raw",
        "source_file",
        "record_index",
        "ingested_at",
        F.array().cast("array<string>").alias(ERRORS_COLUMN),
    )


SPEC = SilverTableSpec(table=TABLE, source=SOURCE, transform=_typed)


@pytest.fixture(params=["collected", "in Spark"])
def both_paths(request, monkeypatch):
    """The test runs once with the batch collected (as every small batch is) and once in Spark
    (as a batch of more than `COLLECTED_ROWS` source rows is)."""
    if request.param == "in Spark":
        monkeypatch.setattr(silver_executor, "COLLECTED_ROWS", 0)
    return request.param


def _land(spark, store, rows):
    store.append(spark.createDataFrame(rows, SCHEMA), SOURCE)


def _run(spark, store, config, spec=SPEC):
    ctx = RunContext(spark, store, config, "run-1", T0)
    return silver_executor.run(spec, ctx)


def _written(store):
    return sorted((r.event_id, r.source_file, r.record_index) for r in store.read(TABLE).collect())


def test_the_earliest_landed_row_of_a_key_wins(spark, store, config, both_paths):
    later = T0 + dt.timedelta(hours=1)
    _land(
        spark,
        store,
        [
            ("a", "f2.jsonl", 0, T0, 1),  # same time, later file
            ("a", "f1.jsonl", 5, T0, 1),  # the winner: earliest file at the earliest time
            ("a", "f0.jsonl", 0, later, 1),  # earlier file, landed later
            ("b", "f1.jsonl", 7, T0, 1),
            ("b", "f1.jsonl", 3, T0, 1),  # same file, earlier record
        ],
    )

    result = _run(spark, store, config)

    assert _written(store) == [("a", "f1.jsonl", 5), ("b", "f1.jsonl", 3)]
    assert (result.rows_in, result.rows_out, result.rows_duplicate) == (5, 2, 3)


def test_rows_sharing_key_and_record_collapse_to_one(spark, store, config, both_paths):
    _land(spark, store, [("a", "f.jsonl", 0, T0, 2), ("b", "f.jsonl", 1, T0, 1), ("b", "f.jsonl", 2, T0, 2)])

    result = _run(spark, store, config)

    assert _written(store) == [("a", "f.jsonl", 0), ("b", "f.jsonl", 1)]
    assert (result.rows_in, result.rows_out, result.rows_duplicate) == (5, 2, 3)


def _counted_spec(calls) -> SilverTableSpec:
    """SPEC with `event_id` typed by a Python function that counts its calls in the accumulator
    `calls`: how often the executor types a row. A record "bad" fails typing (quarantined)."""

    @F.udf("string")
    def key(raw):
        calls.add(1)
        return raw

    def transform(bronze: DataFrame) -> DataFrame:
        failed = F.when(F.col("raw") == "bad", F.array(F.lit("cast:raw"))).otherwise(F.col(ERRORS_COLUMN))
        return _typed(bronze).withColumns({"event_id": key("raw"), ERRORS_COLUMN: failed})

    return dataclasses.replace(SPEC, transform=transform)


def test_each_row_is_typed_once_for_the_checks_quarantine_deduplication_and_write(
    spark, store, config, both_paths
):
    calls = spark.sparkContext.accumulator(0)
    cached_before = len(spark.sparkContext._jsc.getPersistentRDDs())
    _land(
        spark,
        store,
        [("a", "f1.jsonl", 0, T0, 1), ("a", "f2.jsonl", 0, T0, 1), ("bad", "f1.jsonl", 1, T0, 1)]
        + [("b", "f1.jsonl", 2, T0, 2)],
    )

    result = _run(spark, store, config, _counted_spec(calls))

    assert (result.rows_in, result.rows_quarantined, result.rows_out, result.rows_duplicate) == (5, 1, 2, 2)
    assert _written(store) == [("a", "f1.jsonl", 0), ("b", "f1.jsonl", 2)]
    assert store.read(silver_executor.QUARANTINE).count() == 1
    assert calls.value == 5  # four records, one typed into two rows: each typed once, not per pass
    assert len(spark.sparkContext._jsc.getPersistentRDDs()) == cached_before  # the cache is released


def test_a_run_stopped_by_a_failed_check_releases_its_cached_rows(spark, store, config, tmp_path):
    rule = {
        "type": "expect_column_values_to_match_regex",
        "kwargs": {"column": "event_id", "regex": "^z$"},
        "meta": {"name": "only_z", "severity": "fail"},
    }
    (tmp_path / f"{TABLE}.json").write_text(json.dumps({"name": TABLE, "expectations": [rule]}))
    strict = config.with_overrides()
    strict.raw["quality"]["suites_dir"] = str(tmp_path)
    cached_before = len(spark.sparkContext._jsc.getPersistentRDDs())
    _land(spark, store, [("a", "f1.jsonl", 0, T0, 1)])

    with pytest.raises(QualityGateError, match="only_z"):
        _run(spark, store, strict)

    assert len(spark.sparkContext._jsc.getPersistentRDDs()) == cached_before
    assert not store.exists(TABLE)


@pytest.mark.parametrize(
    "collected_rows, broadcast_rows",
    [(silver_executor.COLLECTED_ROWS, 0), (0, silver_executor.BROADCAST_ROWS), (0, 0)],
    ids=["collected", "probed", "joined"],
)
@pytest.mark.parametrize("width", [1, 64], ids=["short-keys", "event-id-keys"])
def test_keys_already_in_the_table_are_not_written_again(
    spark, store, config, monkeypatch, collected_rows, broadcast_rows, width
):
    """Every way of finding the keys already present: looked up by the table store for a
    collected batch, or in Spark by probing the table with a broadcast set of the batch's keys
    (few) or by a shuffled join (more than BROADCAST_ROWS). Keys as long as an event id (64 hex
    digits) have no min/max in the Delta log, and are found all the same."""
    monkeypatch.setattr(silver_executor, "COLLECTED_ROWS", collected_rows)
    monkeypatch.setattr(silver_executor, "BROADCAST_ROWS", broadcast_rows)
    a, b, c = (letter * width for letter in "abc")
    _land(spark, store, [(a, "f1.jsonl", 0, T0, 1), (b, "f1.jsonl", 1, T0, 1)])
    _run(spark, store, config)
    _land(spark, store, [(b, "f2.jsonl", 0, T0, 1), (c, "f2.jsonl", 1, T0, 1), (c, "f2.jsonl", 2, T0, 1)])

    result = _run(spark, store, config)

    assert _written(store) == [(a, "f1.jsonl", 0), (b, "f1.jsonl", 1), (c, "f2.jsonl", 1)]
    assert (result.rows_in, result.rows_out, result.rows_duplicate) == (3, 1, 2)
    assert _run(spark, store, config).status == "SKIPPED"  # nothing new: nothing changes
    assert store.read(TABLE).count() == 3


UNIQUE = dataclasses.replace(SPEC, source_unique=True)  # as if bronze.toy_events held each key once


def test_a_source_unique_table_appends_new_keys_without_deduplicating(
    spark, store, config, tmp_path, both_paths, monkeypatch
):
    """In Spark the probe of the table's keys is jobs of its own; on the collected path it is a
    look-up by the table store (no Spark job on delta-rs), which the unique table never makes."""
    looked_up = []
    lookup = type(store).read_rows

    def recorded(self, name, *args, **kwargs):
        looked_up.append(name)
        return lookup(self, name, *args, **kwargs)

    monkeypatch.setattr(type(store), "read_rows", recorded)
    other = open_store(spark, tmp_path / "other", "delta-rs")  # the same batches, deduplicated
    jobs, probes = {}, {}
    for name, spec, target in (("unique", UNIQUE, store), ("dedup", SPEC, other)):
        _land(spark, target, [("a", "f1.jsonl", 0, T0, 1), ("b", "f1.jsonl", 1, T0, 1)])
        _run(spark, target, config, spec)
        _land(spark, target, [("c", "f2.jsonl", 0, T0, 1), ("d", "f2.jsonl", 1, T0, 1)])
        looked_up.clear()
        result, jobs[name] = spark_jobs(spark, lambda t=target, j=spec: _run(spark, t, config, j))
        probes[name] = looked_up.count(TABLE)
        assert (result.rows_in, result.rows_out, result.rows_duplicate) == (2, 2, 0)
        written = [("a", "f1.jsonl", 0), ("b", "f1.jsonl", 1), ("c", "f2.jsonl", 0), ("d", "f2.jsonl", 1)]
        assert _written(target) == written
    if both_paths == "in Spark":
        assert jobs["unique"] < jobs["dedup"]
    else:
        assert (probes["unique"], probes["dedup"]) == (0, 1)
        assert jobs["unique"] == jobs["dedup"] == 1  # the batch's one job: typed, checked and ranked


def test_a_repeated_key_in_a_source_unique_batch_is_deduplicated_after_all(spark, store, config, both_paths):
    _land(
        spark, store, [("a", "f2.jsonl", 0, T0, 1), ("a", "f1.jsonl", 0, T0, 1), ("b", "f1.jsonl", 1, T0, 2)]
    )

    result = _run(spark, store, config, UNIQUE)

    assert _written(store) == [("a", "f1.jsonl", 0), ("b", "f1.jsonl", 1)]
    assert (result.rows_in, result.rows_out, result.rows_duplicate) == (4, 2, 2)


def test_a_source_unique_table_deduplicates_after_its_source_was_rewritten(spark, store, config, both_paths):
    _land(spark, store, [("a", "f1.jsonl", 0, T0, 1), ("b", "f1.jsonl", 1, T0, 1)])
    _run(spark, store, config, UNIQUE)
    rebuilt = [("a", "f1.jsonl", 0, T0, 1), ("b", "f1.jsonl", 1, T0, 1), ("c", "f1.jsonl", 2, T0, 1)]
    store.overwrite(spark.createDataFrame(rebuilt, SCHEMA), SOURCE)  # every row added again

    result = _run(spark, store, config, UNIQUE)

    assert _written(store) == [("a", "f1.jsonl", 0), ("b", "f1.jsonl", 1), ("c", "f1.jsonl", 2)]
    assert (result.rows_in, result.rows_out, result.rows_duplicate) == (3, 1, 2)


def test_a_batch_with_nothing_to_write_moves_the_watermark_without_writing_rows(
    spark, store, config, both_paths
):
    _land(spark, store, [("a", "f1.jsonl", 0, T0, 1)])
    _run(spark, store, config)
    _land(spark, store, [("a", "f2.jsonl", 0, T0, 0)])  # no copies: the transform yields no row
    files_before = len(store.read(TABLE).inputFiles())

    result = _run(spark, store, config)

    assert (result.status, result.rows_in, result.rows_out) == ("SUCCESS", 0, 0)
    assert store.last_metadata(TABLE, silver_executor.WATERMARK) == store.version(SOURCE)
    assert len(store.read(TABLE).inputFiles()) == files_before
    assert _written(store) == [("a", "f1.jsonl", 0)]
    assert _run(spark, store, config).status == "SKIPPED"


def test_a_first_batch_with_no_rows_creates_the_empty_table(spark, store, config, both_paths):
    _land(spark, store, [("a", "f1.jsonl", 0, T0, 0)])

    result = _run(spark, store, config)

    assert (result.rows_in, result.rows_out) == (0, 0)
    assert store.read(TABLE).count() == 0
    assert {"event_id", "event_time", "raw"} <= set(store.read(TABLE).columns)
    assert ERRORS_COLUMN not in store.read(TABLE).columns


def _counting_spec(typed: list) -> SilverTableSpec:
    """SPEC selecting the rows with copies (as its transform does), noting each typing pass."""

    def transform(bronze: DataFrame) -> DataFrame:
        typed.append(1)
        return _typed(bronze)

    return dataclasses.replace(SPEC, transform=transform, selects=RowSelector("copies", lambda n: n > 0))


def test_a_batch_without_selected_rows_moves_the_watermark_without_typing(spark, store, config):
    typed: list = []
    spec = _counting_spec(typed)
    _land(spark, store, [("a", "f1.jsonl", 0, T0, 1)])
    _run(spark, store, config, spec)
    _land(spark, store, [("b", "f2.jsonl", 0, T0, 0), ("c", "f2.jsonl", 1, T0, 0)])

    result = _run(spark, store, config, spec)

    assert len(typed) == 1  # only the first batch was typed
    assert (result.status, result.source_rows, result.rows_in, result.rows_out) == ("SUCCESS", 2, 0, 0)
    assert store.last_metadata(TABLE, silver_executor.WATERMARK) == store.version(SOURCE)
    assert _written(store) == [("a", "f1.jsonl", 0)]
    _land(spark, store, [("d", "f3.jsonl", 0, T0, 1)])
    assert _run(spark, store, config, spec).rows_out == 1
    assert len(typed) == 2
    assert _written(store) == [("a", "f1.jsonl", 0), ("d", "f3.jsonl", 0)]


def test_a_first_batch_without_selected_rows_creates_the_table_from_the_plan(spark, store, config):
    _land(spark, store, [("a", "f1.jsonl", 0, T0, 0)])

    result = _run(spark, store, config, _counting_spec([]))

    assert (result.status, result.rows_in, result.rows_out) == ("SUCCESS", 0, 0)
    assert store.read(TABLE).count() == 0
    assert {"event_id", "event_time", "raw"} <= set(store.read(TABLE).columns)
    assert ERRORS_COLUMN not in store.read(TABLE).columns


def _dq_rows(store, table: str) -> list[tuple]:
    rows = store.read("ops.dq_results").where(F.col("table") == table).drop("run_id", "validated_at")
    return sorted(tuple(r) for r in rows.collect())


def test_skipping_a_family_records_what_typing_its_empty_batch_records(spark, store, config, tmp_path):
    """Two warehouses get the same DataWorks events, none an approval: one types the approvals
    batch (no selector), the other skips it. Table columns, watermark and DQ rows are equal."""
    spec = dataworks_approvals.SPEC
    others = {
        key: payload
        for key, payload in SAMPLES.items()
        if catalog.family_of(payload.get("eventCode") or TYPE_CODES.get(key)) != spec.table
    }
    typing = open_store(spark, tmp_path / "typing", "delta-rs")
    for target, variant in ((store, spec), (typing, dataclasses.replace(spec, selects=None))):
        for _ in range(2):  # the first batch creates the table, the second finds it
            target.append(events(spark, others), spec.source)
            ctx = RunContext(spark, target, config, "run-1", T0)
            assert silver_executor.run(variant, ctx).rows_in == 0
            write_bookkeeping(ctx)

    assert store.read(spec.table).schema == typing.read(spec.table).schema
    assert store.last_metadata(spec.table, silver_executor.WATERMARK) == store.version(spec.source)
    assert typing.last_metadata(spec.table, silver_executor.WATERMARK) == typing.version(spec.source)
    assert _dq_rows(store, spec.table) == _dq_rows(typing, spec.table)
    assert len(_dq_rows(store, spec.table)) >= 2  # the suite's rules, once per batch
