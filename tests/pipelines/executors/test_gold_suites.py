"""Gold suites: every gold table has one, and every build checks it on the rows it is about to write.

The interval invariants of the timelines are `fail` rules: a build whose rows break one stops with
a one-line reason (table, rule, rows, an example key), writes nothing and records the outcome.
A toy timeline whose builder passes its source's intervals through lets a real build, through the
real executor and Delta tables, produce any intervals, broken ones included.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import json

import pytest
from pyspark.sql import functions as F

from gold import GROUP
from pipelines import quality
from pipelines.core.config import Config
from pipelines.core.context import RunContext
from pipelines.core.graph import load_graph
from pipelines.core.table_specs import Extend, GoldTableSpec
from pipelines.executors import gold as gold_executor
from pipelines.ops.bookkeeping import DQ_RESULTS, write_bookkeeping
from pipelines.quality import QualityGateError, measure_output
from pipelines.quality.suites import COMPOUND_UNIQUE, NO_OVERLAP, SUITES_DIR
from pipelines.runtime.spark import small_input_mode
from pipelines.store import open_store
from tests.support.tables import spark_jobs

TOY = "gold.toy_timeline"
SOURCE = "silver.toy_intervals"
KEY = ("source", "entity_urn", "tag_urn")
SCHEMA = (
    "timeline_id string, source string, entity_urn string, parent_urn string, tag_urn string, "
    "valid_from timestamp, valid_to timestamp, is_current boolean, added_by string, removed_by string, "
    "end_reason string, valid_from_event_id string, valid_to_event_id string, root_urn string"
)
INVARIANTS = (
    "valid_from_not_after_valid_to",
    "current_interval_has_no_end",
    "closed_interval_has_an_end",
    "one_current_interval_per_key",
    "intervals_of_a_key_do_not_overlap",
)
TIMELINES = (  # the tables of intervals, and the key of their intervals
    ("gold.tag_timeline", ["source", "entity_urn", "tag_urn"]),
    ("gold.ownership_timeline", ["source", "entity_urn", "owner_urn", "owner_type"]),
    ("gold.glossary_term_timeline", ["source", "entity_urn", "term_urn"]),
    ("gold.domain_timeline", ["source", "entity_urn", "domain_urn"]),
    ("gold.entity_status_timeline", ["source", "entity_urn"]),
    ("gold.deprecation_timeline", ["source", "entity_urn"]),
    ("gold.schema_field_timeline", ["source", "dataset_urn", "field_path"]),
    ("gold.structured_property_timeline", ["source", "entity_urn", "property_urn"]),
    ("gold.entity_governance_timeline", ["source", "entity_urn"]),  # built from the timelines above
)


def _at(hour: int | None) -> dt.datetime | None:
    return None if hour is None else dt.datetime(2026, 1, 1, hour, tzinfo=dt.timezone.utc)


def interval(row_id, start, end, current=None, entity="urn:e1", tag="urn:li:tag:pii"):
    """A timeline row of `entity` and `tag` from hour `start` to hour `end` (None: open);
    `is_current` follows `end` unless given."""
    current = end is None if current is None else current
    ended = end is not None
    return (
        row_id, "datahub", entity, None, tag, _at(start), _at(end), current, "urn:li:corpuser:a",
        "urn:li:corpuser:a" if ended else None, "REMOVED" if ended else None, f"{row_id}-from",
        f"{row_id}-to" if ended else None, entity,
    )  # fmt: skip


def _relevant(_source, rows):
    return rows.withColumn(GROUP, F.col("root_urn"))


def _build(sources):
    return sources[SOURCE].drop(GROUP, "event_time")


def _extend_closing_nothing(current, sources, since):
    """A faulty extension: the new intervals are added, the open ones they follow stay open."""
    return current.unionByName(_build(sources))


# The toy timeline: its builder returns its source's intervals as they are (recomputed per root).
TOY_SPEC = GoldTableSpec(
    table=TOY,
    sources=(SOURCE,),
    relevant=_relevant,
    build=_build,
    group_key="root_urn",
    row_key=("timeline_id",),
)


# The same timeline extended in event-time order, by a faulty extension.
EXTENDED_SPEC = dataclasses.replace(TOY_SPEC, incremental=Extend(_extend_closing_nothing))


@pytest.fixture
def ctx(spark, config, tmp_path):
    """A warehouse whose suites folder holds the toy timeline's: the tag timeline's suite, as shipped."""
    suites = tmp_path / "suites"
    suites.mkdir()
    shipped = json.loads((SUITES_DIR / "gold.tag_timeline.json").read_text())
    shipped["name"] = shipped["meta"]["table"] = TOY
    (suites / f"{TOY}.json").write_text(json.dumps(shipped))
    raw = copy.deepcopy(config.raw)
    raw["quality"]["suites_dir"] = str(suites)
    store = open_store(spark, tmp_path / "warehouse", "delta-rs")
    started = dt.datetime(2026, 1, 2, tzinfo=dt.timezone.utc)
    return RunContext(spark, store, Config(raw), "run-gold-suites", started)


def _land(ctx, rows):
    intervals = ctx.spark.createDataFrame(rows, SCHEMA)
    ctx.store.append(intervals.withColumn("event_time", F.col("valid_from")), SOURCE)


def _dq(ctx):
    """The toy timeline's outcomes recorded by the run of `ctx`, by rule (written as its run ends)."""
    write_bookkeeping(ctx)
    rows = ctx.store.read(DQ_RESULTS).where((F.col("table") == TOY) & (F.col("run_id") == ctx.run_id))
    return {r.expectation: r for r in rows.collect()}


GOOD = [interval("a", 1, 2), interval("b", 3, None), interval("c", 1, None, tag="urn:li:tag:other")]
BROKEN = {  # the first fail rule each breaks (suite order), how many rows break it, the rows
    "overlapping intervals": ("intervals_of_a_key_do_not_overlap", 1, [interval("a", 1, 5), interval("b", 3, None)]),
    "two current intervals": ("one_current_interval_per_key", 2, [interval("a", 1, None), interval("b", 3, None)]),
    "valid_from after valid_to": ("valid_from_not_after_valid_to", 1, [interval("a", 5, 2)]),
    "current with a valid_to": ("current_interval_has_no_end", 1, [interval("a", 1, 2, current=True)]),
    "closed without a valid_to": ("closed_interval_has_an_end", 1, [interval("a", 1, None, current=False)]),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_build_breaking_an_interval_invariant_stops_with_one_line_and_writes_nothing(ctx, case):
    rule, count, rows = BROKEN[case]
    _land(ctx, rows + [interval("c", 1, None, tag="urn:li:tag:other")])
    with pytest.raises(QualityGateError) as stopped:
        gold_executor.run(TOY_SPEC, ctx)
    assert str(stopped.value) == (
        f"{TOY}: fail-severity expectation '{rule}' failed for {count} of {len(rows) + 1} rows "
        "(e.g. datahub|urn:e1|urn:li:tag:pii)"
    )
    assert not ctx.store.exists(TOY)
    recorded = _dq(ctx)
    assert recorded[rule].success is False and recorded[rule].unexpected_count == count
    assert recorded[rule].run_id == "run-gold-suites" and recorded[rule].severity == "fail"
    failing = json.loads(recorded[rule].examples)  # the failing key with its rows
    assert failing == [{"value": "datahub|urn:e1|urn:li:tag:pii", "rows": count, "row_keys": []}]


def test_an_incremental_rebuild_that_breaks_an_invariant_leaves_the_table_as_it_was(ctx):
    _land(ctx, GOOD)
    assert gold_executor.run(TOY_SPEC, ctx).rows_out == len(GOOD)
    passed = _dq(ctx)
    assert set(INVARIANTS) <= set(passed) and all(r.success for r in passed.values())
    version, before = ctx.store.version(TOY), sorted(ctx.store.read(TOY).collect())

    _land(ctx, [interval("d", 2, None)])  # opens while "b" is open: the rebuilt group overlaps
    ctx = dataclasses.replace(ctx, run_id="run-gold-suites-2")
    with pytest.raises(QualityGateError, match="'one_current_interval_per_key' failed for 2 of 4 rows"):
        gold_executor.run(TOY_SPEC, ctx)
    assert ctx.store.version(TOY) == version
    assert sorted(ctx.store.read(TOY).collect()) == before
    failed = {name for name, r in _dq(ctx).items() if not r.success}
    assert failed == {"one_current_interval_per_key", "intervals_of_a_key_do_not_overlap"}


def test_an_extension_that_leaves_two_intervals_open_is_stopped(ctx):
    _land(ctx, GOOD)
    gold_executor.run(EXTENDED_SPEC, ctx)
    version = ctx.store.version(TOY)
    _land(ctx, [interval("d", 4, None)])  # after every event seen: the group is extended
    versions = gold_executor._versions(EXTENDED_SPEC, ctx.warehouse)
    assert gold_executor.plan(EXTENDED_SPEC, ctx.warehouse, *versions).path is gold_executor.GoldPath.EXTEND
    # the extension's output is checked: the group's open rows and the new ones, not its closed rows
    with pytest.raises(QualityGateError, match="'one_current_interval_per_key' failed for 2 of 3 rows"):
        gold_executor.run(EXTENDED_SPEC, ctx)
    assert ctx.store.version(TOY) == version


def test_keyed_rules_count_per_key_in_one_spark_job_and_their_failing_values_in_one_more(spark):
    suite = quality.load_suite("gold.tag_timeline")
    rows = [
        *GOOD,
        interval("z", 3, 3, entity="urn:e2"),  # zero-length, then one starting at the same instant
        interval("y", 3, None, entity="urn:e2"),
        interval("x", 1, 4, entity="urn:e3"),  # overlaps the next two
        interval("w", 2, 3, entity="urn:e3"),
        interval("v", 2, None, entity="urn:e3"),
        interval("u", 1, None, entity="urn:e4"),  # two current, one of them ending
        interval("t", 2, 5, current=True, entity="urn:e4"),
    ]
    frame = spark.createDataFrame(rows, SCHEMA)
    with small_input_mode(spark, len(rows), len(rows) + 1):  # as the executor checks a small build
        (total, outcomes), jobs = spark_jobs(spark, lambda: measure_output(frame, suite))
    found = {o.expectation.name: o for o in outcomes}
    assert total == len(rows) and jobs == 2  # the counts; the failing values of the rules that failed
    assert [o.expectation.name for o in outcomes] == [e.name for e in suite.expectations]
    assert found["intervals_of_a_key_do_not_overlap"].unexpected_count == 3
    assert found["intervals_of_a_key_do_not_overlap"].examples == (
        "datahub|urn:e3|urn:li:tag:pii",
        "datahub|urn:e4|urn:li:tag:pii",
    )
    assert found["one_current_interval_per_key"].unexpected_count == 2
    assert found["one_current_interval_per_key"].examples == ("datahub|urn:e4|urn:li:tag:pii",)
    assert found["current_interval_has_no_end"].unexpected_count == 1
    assert sum(not o.success for o in outcomes) == 3
    assert [(v.value, v.rows) for v in found["intervals_of_a_key_do_not_overlap"].failing_values] == [
        ("datahub|urn:e3|urn:li:tag:pii", 2),
        ("datahub|urn:e4|urn:li:tag:pii", 1),
    ]
    good = spark.createDataFrame(GOOD, SCHEMA)
    with small_input_mode(spark, len(GOOD), len(GOOD) + 1):
        (_, passed), good_jobs = spark_jobs(spark, lambda: measure_output(good, suite))
    assert good_jobs == 1 and all(not o.failing_values for o in passed)


def test_built_in_rules_count_as_great_expectations_does(spark):
    import great_expectations as gx

    suite = quality.load_suite("gold.tag_timeline")
    comparable = [e for e in suite.expectations if e.type != NO_OVERLAP and "row_condition" not in e.kwargs]
    comparable.append(quality.Expectation("key_unique", COMPOUND_UNIQUE, {"column_list": list(KEY)}, "warn"))
    rows = [*GOOD, interval("a2", 1, 2), interval("x", 5, 2), interval("y", 4, None, entity="urn:e2")]
    frame = spark.createDataFrame(rows, SCHEMA)
    subset = quality.Suite(TOY, tuple(comparable), SUITES_DIR)
    _total, outcomes = measure_output(frame, subset)
    ours = {o.expectation.name: o.unexpected_count for o in outcomes}

    context = gx.get_context(mode="ephemeral")
    batch = (
        context.data_sources.add_pandas("intervals")
        .add_dataframe_asset("rows")
        .add_batch_definition_whole_dataframe("all")
        .get_batch(batch_parameters={"dataframe": frame.toPandas()})
    )
    expectations = [{"type": e.type, "kwargs": e.kwargs, "meta": {"name": e.name}} for e in comparable]
    result = batch.validate(gx.ExpectationSuite(name="parity", expectations=expectations))
    theirs = {r.expectation_config.meta["name"]: r.result["unexpected_count"] for r in result.results}
    assert theirs == ours
    assert ours["valid_from_not_after_valid_to"] == 1 and ours["key_unique"] == 4


def test_gx_result_document_holds_our_own_rule_types(spark):
    suite = quality.load_suite("gold.tag_timeline")
    frame = spark.createDataFrame(BROKEN["overlapping intervals"][2], SCHEMA)
    _total, outcomes = measure_output(frame, suite)
    document = quality.to_gx_result("gold.tag_timeline", outcomes, "run-1").to_json_dict()
    results = {r["expectation_config"]["meta"]["name"]: r for r in document["results"]}
    overlap = results["intervals_of_a_key_do_not_overlap"]
    assert overlap["expectation_config"]["type"] == NO_OVERLAP
    assert overlap["success"] is False and overlap["result"]["unexpected_count"] == 1
    assert document["success"] is False


def test_every_gold_table_in_the_graph_has_a_suite():
    tables = {task.spec().table for task in load_graph().tasks if task.layer == "gold"}
    assert len(tables) >= 17
    missing = sorted(t for t in tables if quality.load_suite(t) is None)
    assert not missing, f"gold tables without a suite in expectations/: {missing}"
    for table in tables:
        suite = quality.load_suite(table)
        assert suite.table == table
        assert {e.severity for e in suite.expectations} <= {"warn", "fail"}, table


@pytest.mark.parametrize(("table", "key"), TIMELINES, ids=[t for t, _ in TIMELINES])
def test_every_timeline_holds_its_interval_invariants_as_fail_rules(table, key):
    rules = {e.name: e for e in quality.load_suite(table).expectations}
    assert set(INVARIANTS) <= set(rules), table
    assert all(rules[name].severity == "fail" for name in INVARIANTS)
    assert rules["one_current_interval_per_key"].key == tuple(key)
    assert rules["intervals_of_a_key_do_not_overlap"].key == tuple(key)


def test_every_timeline_table_is_listed():
    """Every table built from `gold.intervals` (by its interval columns) is in `TIMELINES`."""
    listed = {t for t, _ in TIMELINES}
    for task in load_graph().tasks:
        if task.layer != "gold":
            continue
        suite = quality.load_suite(task.spec().table)
        columns = {e.column for e in suite.expectations} | {c for e in suite.expectations for c in e.key}
        if {"valid_from", "is_current"} & columns or "timeline" in task.spec().table:
            assert task.spec().table in listed, task.spec().table


@pytest.mark.parametrize(
    ("expectation", "message"),
    [
        (
            {"type": NO_OVERLAP, "kwargs": {"column_list": ["k"], "from_column": "a"}},
            "needs from_column and to_column",
        ),
        ({"type": COMPOUND_UNIQUE, "kwargs": {}}, "needs column_list"),
        ({"type": COMPOUND_UNIQUE, "kwargs": {"column_list": ["k"]}}, "at least two columns"),
        (
            {
                "type": "expect_column_values_to_not_be_null",
                "kwargs": {"column": "k"},
                "meta": {"severity": "drop"},
            },
            "no quarantine",
        ),
    ],
)
def test_bad_gold_suites_are_refused(tmp_path, expectation, message):
    path = tmp_path / "gold.bad.json"
    path.write_text(json.dumps({"name": "gold.bad", "expectations": [expectation]}))
    with pytest.raises(quality.SuiteError, match=message):
        quality.parse_suite(path)


def test_keyed_rules_are_refused_outside_gold(tmp_path):
    path = tmp_path / "silver.bad.json"
    rule = {"type": COMPOUND_UNIQUE, "kwargs": {"column_list": ["k", "j"]}}
    path.write_text(json.dumps({"name": "silver.bad", "expectations": [rule]}))
    with pytest.raises(quality.SuiteError, match="gold tables only"):
        quality.parse_suite(path)
