"""The whole pipeline on the bundled samples: counts reconcile, samples come out typed, re-runs change nothing.

Every test runs on both table engines: each engine builds its own warehouse and reads it back.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from pipelines.core.config import PROJECT_ROOT
from pipelines.core.graph import load_graph
from pipelines.orchestration.runner import RunFailed, run_pipeline
from pipelines.quality.report import build_report
from pipelines.quality.suites import SUITES_DIR
from tests.support.engines import engine_store, skip_without_delta_spark, with_engine
from tests.support.tables import BRONZE_TABLES, assert_reconciles

SAMPLES = PROJECT_ROOT / "samples"
EXPECTED = json.loads((SAMPLES / "expected_counts.json").read_text())


# Spark jobs a run with nothing new may run once the run before it recorded what it learnt of the
# tables' logs: on delta-spark the bookkeeping tables bronze consults (landing folders, the
# ingestion log) and the feed checks' reads, where asking each table's history ran 130
IDLE_JOBS = {"delta-rs": 0, "delta-spark": 40}
# delta-spark builds the samples in about three times delta-rs' time
BOTH_ENGINES = [pytest.param("delta-rs"), pytest.param("delta-spark", marks=pytest.mark.slow)]


@pytest.fixture(scope="module", params=BOTH_ENGINES)
def demo(request, config, spark, tmp_path_factory):
    """A warehouse built from the samples by one full run of each engine, read by that engine
    (delta-rs' is the suite's shared sample warehouse)."""
    engine = request.param
    skip_without_delta_spark(engine)
    if engine == "delta-rs":
        demo_config, summary = request.getfixturevalue("sample_warehouse")
    else:
        root = tmp_path_factory.mktemp(f"demo-{engine}")
        landing = root / "landing"
        shutil.copytree(SAMPLES / "landing", landing)
        demo_config = with_engine(
            config.with_overrides(landing=str(landing), warehouse=str(root / "warehouse")), engine
        )
        summary = run_pipeline(demo_config, spark=spark)
    store = engine_store(spark, demo_config.warehouse, engine)
    assert store.engine.name == engine
    return demo_config, store, summary


def test_every_landed_record_is_in_bronze(demo):
    _config, store, _summary = demo
    for source, table in BRONZE_TABLES.items():
        bronze = store.read(table)
        assert bronze.count() == EXPECTED["records"][source], source
        assert bronze.where("is_corrupt").count() >= EXPECTED["malformed"][source], source


def test_bronze_rows_reconcile_with_silver_quarantine_and_duplicates(demo):
    _config, store, _summary = demo
    assert_reconciles(store)


def test_bad_records_are_quarantined_with_the_check_named(demo):
    _config, store, _summary = demo
    checks = {c for r in store.read("silver.quarantine").collect() for c in r.failed_checks}
    assert "cast:auditStamp.time" in checks
    assert "cast:data.projectId" in checks
    assert any(c.startswith("bronze_corrupt:") for c in checks)
    assert store.read("ops.dq_results").where(~F.col("success")).count() > 0


def test_spec_samples_come_out_typed(demo):
    _config, store, _summary = demo
    changes = store.read("silver.datahub_entity_changes")
    modify = changes.where(
        (F.col("category") == "STRUCTURED_PROPERTY") & (F.col("operation") == "MODIFY")
    ).first()
    assert modify.propertyValues == ["value1", "value2"]
    field = changes.where((F.col("category") == "TECHNICAL_SCHEMA") & (F.col("operation") == "ADD")).first()
    assert field.nullable is False and field.fieldPath == "newFieldName"
    owner = (
        store.read("silver.datahub_action_requests")
        .where(F.col("action_request_type") == "OWNER_ASSOCIATION")
        .first()
        .owners[0]
    )
    assert (owner.ownerUrn, owner.type) == ("urn:li:corpuser:jdoe", "TECHNICAL_OWNER")


@pytest.mark.slow  # runs the whole pipeline a second time
def test_second_run_changes_no_table(demo, spark, tmp_path):
    built, _store, _summary = demo
    shutil.copytree(built.landing, tmp_path / "landing")
    shutil.copytree(built.warehouse, tmp_path / "warehouse")
    moved = built.with_overrides(
        landing=str(tmp_path / "landing"), warehouse=str(tmp_path / "warehouse"), schema_prefix=""
    )
    config = with_engine(moved, built.engine)  # on delta-spark: the copy's own catalog names
    store = engine_store(spark, config.warehouse, built.engine)
    data_tables = [t for t in store.tables() if not t.startswith("ops.")]
    before = {t: store.version(t) for t in data_tables}
    run_pipeline(config, spark=spark)
    assert {t: store.version(t) for t in data_tables} == before

    tracker = spark.sparkContext.statusTracker()
    earlier = set(tracker.getJobIdsForGroup(None))  # jobs of no job group, the run's among them
    run_pipeline(config, spark=spark)
    jobs = len(set(tracker.getJobIdsForGroup(None)) - earlier)

    assert {t: store.version(t) for t in data_tables} == before
    # from what the run before recorded of the logs: no history asked of a table that did not move
    assert jobs <= IDLE_JOBS[built.engine], f"{jobs} Spark jobs for a run with nothing new"


def test_fail_severity_breach_stops_the_run_with_one_line(config, spark, engine, tmp_path):
    suites = tmp_path / "suites"
    suites.mkdir()
    rule = {
        "type": "expect_column_values_to_match_regex",
        "kwargs": {"column": "actor", "regex": "^urn:li:corpuser:nobody$"},
        "meta": {"name": "only_nobody_acts", "severity": "fail"},
    }
    (suites / "silver.datahub_entity_changes.json").write_text(
        json.dumps({"name": "silver.datahub_entity_changes", "expectations": [rule]})
    )
    landing = tmp_path / "landing"
    shutil.copytree(SAMPLES / "landing" / "datahub_ece", landing / "datahub_ece")
    strict = with_engine(config.with_overrides(landing=str(landing), warehouse=str(tmp_path / "w")), engine)
    strict.raw["quality"]["suites_dir"] = str(suites)
    with pytest.raises(RunFailed) as failure:
        run_pipeline(strict, ("bronze", "silver"), spark=spark)
    message = str(failure.value)
    assert "only_nobody_acts" in message and "\n" not in message
    assert not Path(tmp_path / "w" / "silver" / "datahub_entity_changes" / "_delta_log").exists()


def test_every_gold_table_records_its_suite_and_the_dq_report_shows_it(demo):
    _config, store, _summary = demo
    gold = sorted({task.spec().table for task in load_graph().tasks if task.layer == "gold"})
    results = store.read("ops.dq_results").where(F.col("table").startswith("gold.")).collect()
    recorded = {r.table for r in results}
    assert recorded == set(gold)
    failing = [(r.table, r.expectation) for r in results if not r.success]
    assert not failing, f"the samples' gold tables break {failing}"
    for table in gold:  # the rows checked are the rows written
        counted = {r.element_count for r in results if r.table == table}
        assert counted == {store.read(table).count()}, table
    assert {r.expectation for r in results if r.table == "gold.tag_timeline"} >= {
        "one_current_interval_per_key",
        "intervals_of_a_key_do_not_overlap",
        "valid_from_not_after_valid_to",
    }
    html = build_report(store)
    for table in [*gold, "silver.datahub_entity_changes"]:
        assert f'id="dq-{table}"' in html, table


def test_a_breached_gold_fail_rule_stops_the_run_with_one_line(config, spark, engine, tmp_path):
    """A gold suite whose rule the samples break (a coarser key for the current tags than the
    timeline's own): the run stops at that table, which is not written, and the outcome is recorded.
    The run builds the tag timeline and the tables it reads, as the whole pipeline would."""
    suites = tmp_path / "suites"
    suites.mkdir()
    suite = json.loads((SUITES_DIR / "gold.tag_timeline.json").read_text())
    for rule in suite["expectations"]:
        if rule["meta"]["name"] == "one_current_interval_per_key":
            rule["kwargs"]["column_list"] = ["source", "tag_urn"]  # one entity per tag at a time
    (suites / "gold.tag_timeline.json").write_text(json.dumps(suite))
    landing = tmp_path / "landing"
    shutil.copytree(SAMPLES / "landing" / "datahub_ece", landing / "datahub_ece")
    strict = with_engine(config.with_overrides(landing=str(landing), warehouse=str(tmp_path / "w")), engine)
    strict.raw["quality"]["suites_dir"] = str(suites)
    with pytest.raises(RunFailed) as failure:
        run_pipeline(strict, spark=spark, graph=load_graph().up_to(["gold_tag_timeline"]))
    message = str(failure.value)
    assert "gold.tag_timeline" in message and "one_current_interval_per_key" in message
    assert "failed for 2 of" in message and "(e.g. datahub|urn:li:tag:pii)" in message
    assert "\n" not in message
    assert not Path(tmp_path / "w" / "gold" / "tag_timeline" / "_delta_log").exists()
    store = engine_store(spark, strict.warehouse, engine)
    breached = store.read("ops.dq_results").where((F.col("table") == "gold.tag_timeline") & ~F.col("success"))
    assert [r.expectation for r in breached.collect()] == ["one_current_interval_per_key"]
