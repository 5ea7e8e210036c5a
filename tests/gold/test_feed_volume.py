"""`gold.feed_volume_daily` and the feed checks, on real Delta tables through the gold executor.

Five weeks of hand-written silver rows (Mondays 2026-01-05 to 2026-02-02, and a few other days),
a full build, then one late event on 2026-01-12; the checks run after each run of the task, at a
clock the tests set (`gold.feed_checks.now`), 2026-02-03 10:00 UTC: yesterday is Monday
2026-02-02.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from pyspark.sql import functions as F

from gold import feed_checks, feed_volume_daily
from pipelines.core.config import load_config
from pipelines.core.context import RunContext
from pipelines.executors import gold as gold_executor
from pipelines.ops.bookkeeping import DQ_RESULTS, wait_for_documents, write_bookkeeping
from pipelines.quality import QualityGateError
from pipelines.quality.report import build_report
from tests.support.engines import engine_store, skip_without_delta_spark

UTC = dt.timezone.utc
CLOCK = dt.datetime(2026, 2, 3, 10, 0, tzinfo=UTC)
MONDAYS = [dt.date(2026, 1, 5) + dt.timedelta(weeks=n) for n in range(5)]
LATE_DAY = MONDAYS[1]
DH = "silver.datahub_entity_changes"
AUDIT = "silver.datahub_audit_events"
OM = "silver.openmetadata_change_events"
DW = "silver.dataworks_events"
SCHEMAS = {
    DH: "category string",
    AUDIT: "event_type string",
    OM: "event_type string",
    DW: "family string",
}
TAG_PER_MONDAY = [4, 2, 6, 4, 1]  # the last Monday is yesterday: far below its baseline
CONFIG = """
feeds:
  volume_min_baseline: 2
  openmetadata:
    families: {entityUpdated: 12}
"""


def _at(day: dt.date, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC)


def _events(table: str, label: str, day: dt.date, count: int, hour: int = 9) -> list[tuple]:
    """`count` events of `label` on `day` from `hour`:00, a minute apart, each landed an hour later."""
    rows = []
    for n in range(count):
        moment = _at(day, hour, n)
        rows.append((f"{table}:{label}:{day}:{hour}:{n}", moment, day, moment + dt.timedelta(hours=1), label))
    return rows


def _first_batch() -> dict[str, list[tuple]]:
    batch = {DH: [], AUDIT: [], OM: [], DW: []}
    for monday, tags in zip(MONDAYS, TAG_PER_MONDAY, strict=True):
        batch[DH] += _events(DH, "TAG", monday, tags)
        batch[OM] += _events(OM, "entityUpdated", monday, 2)
    batch[DH] += _events(DH, "OWNER", MONDAYS[2] + dt.timedelta(days=1), 1)  # counted as OWNERSHIP
    batch[AUDIT] += _events(AUDIT, "LogInEvent", MONDAYS[4], 1, hour=9)  # DataHub's newest: 09:00 yesterday
    batch[OM] += _events(OM, "entityCreated", CLOCK.date(), 1, hour=8)  # OpenMetadata's newest: 2 h ago
    batch[DW] += _events(DW, "silver.dataworks_node_changes", MONDAYS[4], 1, hour=23)
    batch[DW] += _events(DW, None, MONDAYS[3], 1)
    return batch


LATE = {DH: _events(DH, "TAG", LATE_DAY, 1, hour=15)}


def _land(store, spark, batch: dict[str, list[tuple]], tables=tuple(SCHEMAS)) -> None:
    for table, rows in batch.items():
        if table not in tables:
            continue
        schema = (
            f"event_id string, event_time timestamp, event_date date, ingested_at timestamp, {SCHEMAS[table]}"
        )
        store.append(spark.createDataFrame(rows, schema), table)


def _rows(frame, source=None, family=None) -> list[tuple]:
    picked = frame
    if source is not None:
        picked = picked.where((F.col("source") == source) & (F.col("family") == family))
    return sorted(
        (r.event_date.isoformat(), r.events, r.baseline_events, r.ratio)
        for r in picked.select(*feed_volume_daily.COLUMNS).collect()
    )


def _from_scratch(store):
    spec = feed_volume_daily.SPEC
    return spec.build({s: spec.relevant(s, store.read(s)) for s in spec.sources if store.exists(s)})


def _whole(frame) -> list[tuple]:
    return sorted(tuple(r) for r in frame.select(*feed_volume_daily.COLUMNS).collect())


def _context(spark, store, config, run_id: str) -> RunContext:
    return RunContext(spark, store, config, run_id, CLOCK)


def _scenario(spark, tmp_path, engine: str, config, tables=tuple(SCHEMAS)) -> dict:
    """Full build, then the late event; the checks at `CLOCK` after each; bookkeeping written
    (the two runs' rows in one commit a table). `tables`: the silver tables landed."""
    store = engine_store(spark, tmp_path / "warehouse", engine)
    spec = feed_volume_daily.configured_spec(config)
    found = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(feed_checks, "now", lambda: CLOCK)
        _land(store, spark, _first_batch(), tables)
        first = _context(spark, store, config, "run-1")
        found["first"] = gold_executor.run(spec, first)
        found["full"] = _rows(store.read(feed_volume_daily.TABLE), "datahub", "TAG")
        _land(store, spark, LATE, tables)
        second = dataclasses.replace(first, run_id="run-2")  # the same pending bookkeeping rows
        found["second"] = gold_executor.run(spec, second)
        write_bookkeeping(first)
    found["store"] = store
    return found


@pytest.fixture(scope="module")
def feed_config(tmp_path_factory):
    path = tmp_path_factory.mktemp("conf") / "lakehouse.yaml"
    path.write_text(CONFIG)
    return load_config(path)


@pytest.fixture(scope="module")
def built(spark, feed_config, tmp_path_factory):
    return _scenario(spark, tmp_path_factory.mktemp("feeds"), "delta-rs", feed_config)


def _results(store, run_id: str) -> dict[tuple[str, str], tuple]:
    rows = (
        store.read(DQ_RESULTS)
        .where((F.col("run_id") == run_id) & F.col("table").startswith("feeds."))
        .collect()
    )
    return {(r.table, r.expectation): (r.severity, r.success, r.element_count) for r in rows}


TAG_DAYS = [
    # the TAG family's days: its Mondays, then 4 weeks of baseline past its last events
    ("2026-01-05", 4, None, None),
    ("2026-01-12", 2, 1.0, 2.0),
    ("2026-01-19", 6, 1.5, 4.0),
    ("2026-01-26", 4, 3.0, 4 / 3),
    ("2026-02-02", 1, 4.0, 0.25),
    ("2026-02-09", 0, 3.25, 0.0),
    ("2026-02-16", 0, 2.75, 0.0),
    ("2026-02-23", 0, 1.25, 0.0),
    ("2026-03-02", 0, 0.25, 0.0),
]


def test_daily_counts_and_a_same_weekday_baseline_over_five_weeks(built):
    table = built["first"]
    assert table.message == "full build"
    store = built["store"]
    full = store.read(feed_volume_daily.TABLE)
    assert built["full"] == TAG_DAYS
    families = {(r.source, r.family) for r in full.select("source", "family").distinct().collect()}
    assert families == {
        ("datahub", "TAG"),
        ("datahub", "OWNERSHIP"),
        ("datahub", "LogInEvent"),
        ("openmetadata", "entityUpdated"),
        ("openmetadata", "entityCreated"),
        ("dataworks", "node_changes"),
        ("dataworks", "unknown"),
    }
    # a family's first day has no baseline; a day without events after it has a row of 0
    assert _rows(full, "datahub", "OWNERSHIP")[:2] == [
        ("2026-01-20", 1, None, None),
        ("2026-01-27", 0, 0.25, 0.0),
    ]
    newest = full.where((F.col("family") == "TAG") & (F.col("event_date") == MONDAYS[2])).first()
    assert (newest.newest_event_time, newest.newest_landed_at) == (
        dt.datetime(2026, 1, 19, 9, 5),
        dt.datetime(2026, 1, 19, 10, 5),
    )


def test_an_increment_on_one_day_rewrites_that_day_and_the_days_it_is_a_baseline_of(built):
    store = built["store"]
    later = built["second"]
    assert later.message == "incremental, new counts added"
    table = store.read(feed_volume_daily.TABLE)
    touched = [LATE_DAY + dt.timedelta(weeks=n) for n in range(5)]
    # every row of the touched days is written, and no other (the table holds far more)
    assert later.rows_out == table.where(F.col("event_date").isin(touched)).count()
    assert later.rows_out < table.count() / 2
    tag = _rows(table, "datahub", "TAG")
    assert tag[1:6] == [
        ("2026-01-12", 3, 1.0, 3.0),
        ("2026-01-19", 6, 1.75, 6 / 1.75),
        ("2026-01-26", 4, 3.25, 4 / 3.25),
        ("2026-02-02", 1, 4.25, 1 / 4.25),
        ("2026-02-09", 0, 3.5, 0.0),
    ]
    assert tag[6:] == TAG_DAYS[6:]  # days the late event is no baseline of: as they were
    assert _whole(table) == _whole(_from_scratch(store))


def test_a_stale_source_and_a_low_day_warn_and_fresh_normal_feeds_pass(built):
    results = _results(built["store"], "run-2")
    assert results == {
        # DataHub: newest event 25 h before the clock; yesterday's TAG events a quarter of usual
        ("feeds.datahub", "feed_is_fresh:all"): ("warn", False, 1),
        ("feeds.datahub", "feed_volume_near_baseline:TAG"): ("warn", False, 1),
        # OpenMetadata: fresh, with yesterday's usual volume; its `entityUpdated` family has 12 h
        ("feeds.openmetadata", "feed_is_fresh:all"): ("warn", True, 1),
        ("feeds.openmetadata", "feed_is_fresh:entityUpdated"): ("warn", False, 1),
        ("feeds.openmetadata", "feed_volume_near_baseline:entityUpdated"): ("warn", True, 1),
        ("feeds.dataworks", "feed_is_fresh:all"): ("warn", True, 1),
    }
    assert _results(built["store"], "run-1") == results


def test_the_dq_report_shows_a_stale_feed_as_a_warning(built):
    page = build_report(built["store"], last_runs=1)
    assert 'id="dq-feeds.datahub"' in page
    section = page.split('id="dq-feeds.datahub"', 1)[1]
    stale = section.split('data-expectation="feed_is_fresh:all"', 1)[1].split("</tr>", 1)[0]
    assert 'data-severity="warn" data-state="fail"' in stale
    assert "newest event 2026-02-02 09:00:00 UTC" in stale


def test_a_breach_configured_as_fail_stops_the_run_and_is_recorded_as_fail(built, spark, feed_config):
    store = built["store"]
    raw = dataclasses.replace(
        feed_config, raw={**feed_config.raw, "feeds": {**feed_config.raw["feeds"], "severity": "fail"}}
    )
    before = store.version(feed_volume_daily.TABLE)
    ctx = _context(spark, store, raw, "run-fail")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(feed_checks, "now", lambda: CLOCK)
        with pytest.raises(QualityGateError) as failure:
            gold_executor.run(feed_volume_daily.configured_spec(raw), ctx)
    assert "feeds.datahub" in str(failure.value) and "feed_is_fresh:all" in str(failure.value)
    assert store.version(feed_volume_daily.TABLE) == before  # up to date: nothing written
    wait_for_documents(ctx)
    # the rows the run's end would append to ops.dq_results (read here, so the table stays as
    # the other tests left it)
    pending = [row for table, _schema, rows in ctx.bookkeeping.take() if table == DQ_RESULTS for row in rows]
    results = {(r[1], r[2]): (r[5], r[6], r[8]) for r in pending}
    assert results[("feeds.datahub", "feed_is_fresh:all")] == ("fail", False, 1)
    assert results[("feeds.openmetadata", "feed_is_fresh:all")] == ("fail", True, 1)


# Delta's JVM engine: the task run twice, on two of the silver tables; make test-all builds this
# table on delta-spark in every whole-pipeline run of that engine, each compared with delta-rs
@pytest.mark.slow
@pytest.mark.exhaustive
def test_the_same_on_delta_spark(spark, feed_config, tmp_path):
    skip_without_delta_spark("delta-spark")
    found = _scenario(spark, tmp_path, "delta-spark", feed_config, tables=(DH, OM))
    store = found["store"]
    assert store.engine.name == "delta-spark"
    assert found["full"] == TAG_DAYS
    assert found["second"].message == "incremental, new counts added"
    assert _whole(store.read(feed_volume_daily.TABLE)) == _whole(_from_scratch(store))
    results = _results(store, "run-2")
    assert results[("feeds.datahub", "feed_is_fresh:all")] == ("warn", False, 1)
    assert results[("feeds.datahub", "feed_volume_near_baseline:TAG")] == ("warn", False, 1)
