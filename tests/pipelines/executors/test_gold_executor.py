"""The gold executor on real Delta tables: batches applied incrementally equal one full build."""

from __future__ import annotations

import datetime as dt
import uuid

import pyarrow as pa
import pytest
from deltalake import DeltaTable
from pyspark.sql import functions as F

from gold import (
    actor_activity_daily,
    change_history,
    entity_governance_timeline,
    entity_status_timeline,
    governance_coverage_daily,
    proposal_events,
    proposals,
    schema_field_timeline,
    tag_timeline,
)
from pipelines.core.context import RunContext
from pipelines.core.table_specs import ERRORS_COLUMN
from pipelines.executors import gold as gold_executor
from pipelines.store import open_store
from silver import datahub_action_requests, datahub_entity_changes
from tests.support.engines import schema_prefix_of
from tests.support.tables import bronze_frame

RESOURCE = "urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)"
T0 = 1_700_000_000_000


def _ece(
    category, operation, params, time, entity=RESOURCE, entity_type="dataset", actor="urn:li:corpuser:a"
):
    return {
        "entityUrn": entity,
        "entityType": entity_type,
        "category": category,
        "operation": operation,
        "parameters": params,
        "auditStamp": {"actor": actor, "time": time},
    }


PROPOSE_TAG = _ece(
    "LIFECYCLE",
    "CREATE",
    {
        "actionRequestType": "TAG_ASSOCIATION",
        "resourceUrn": RESOURCE,
        "resourceType": "dataset",
        "tagUrn": "urn:li:tag:pii",
    },
    T0,
    entity="urn:li:actionRequest:p1",
    entity_type="actionRequest",
)
ACCEPT_WITHOUT_RESOURCE = _ece(
    "LIFECYCLE",
    "COMPLETED",
    {"actionRequestStatus": "COMPLETED", "actionRequestResult": "ACCEPTED"},
    T0 + 2000,
    entity="urn:li:actionRequest:p1",
    entity_type="actionRequest",
    actor="urn:li:corpuser:reviewer",
)
TAG_ADD = _ece("TAG", "ADD", {"tagUrn": "urn:li:tag:pii"}, T0 + 3000)
TAG_REMOVE = _ece("TAG", "REMOVE", {"tagUrn": "urn:li:tag:pii"}, T0 + 5000)
LATE_TAG_ADD = _ece("TAG", "ADD", {"tagUrn": "urn:li:tag:pii"}, T0 + 1000)  # arrives last, happened first
BATCHES = [[PROPOSE_TAG], [ACCEPT_WITHOUT_RESOURCE], [TAG_ADD, TAG_REMOVE], [LATE_TAG_ADD]]


SPECS = (proposals.SPEC, tag_timeline.SPEC, change_history.SPEC)


def _context(spark, warehouse, config, engine="delta-rs"):
    store = open_store(spark, warehouse, engine, schema_prefix=schema_prefix_of(warehouse))
    return RunContext(spark, store, config, "run-test", dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc))


def _land(ctx, records, batch):
    bronze = bronze_frame(ctx.spark, records, source_file=f"/landing/batch{batch}.jsonl")
    for module in (datahub_entity_changes, datahub_action_requests):
        typed = module.transform(bronze).drop(ERRORS_COLUMN)
        ctx.store.append(typed, module.SPEC.table)


def _iso(millis: int) -> str:
    moment = dt.datetime.fromtimestamp(millis / 1000, dt.timezone.utc)
    return moment.isoformat(timespec="milliseconds")


def _rows(ctx, table, *columns):
    return sorted(tuple(r) for r in ctx.store.read(table).select(*columns).collect())


def _in_spark(config):
    """`config` with no task weighed small (`small_input_rows` 0): rows cached, measured by an
    aggregation and written by Spark, as a large task's are."""
    large = config.with_overrides()
    large.profile["small_input_rows"] = 0
    return large


@pytest.fixture(
    scope="module",
    params=[
        pytest.param((inline, small), marks=pytest.mark.slow)
        for inline, small in (
            (gold_executor.INLINE_GROUPS, True),
            (0, True),
            (gold_executor.INLINE_GROUPS, False),
        )
    ],
    ids=["groups-in-list", "groups-joined", "rows-in-spark"],
)
def built(request, spark, config, tmp_path_factory):
    """Warehouse A: gold after every batch (incremental). Warehouse B: one full build at the end.
    Touched groups filter the rows as an IN list, or (no inline groups) by a semi join; a small
    task's rows are collected once and written from the driver, or (`rows-in-spark`) they stay in
    Spark as a large task's do."""
    inline, small = request.param
    config = config if small else _in_spark(config)
    stepwise = _context(spark, tmp_path_factory.mktemp("stepwise"), config)
    once = _context(spark, tmp_path_factory.mktemp("once"), config)
    modes = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gold_executor, "INLINE_GROUPS", inline)
        for batch, records in enumerate(BATCHES):
            _land(stepwise, records, batch)
            _land(once, records, batch)
            for spec in SPECS:
                modes.append(gold_executor.run(spec, stepwise).message)
        for spec in SPECS:
            gold_executor.run(spec, once)
    return stepwise, once, modes


ODD_GROUPS = ["plain", "it's", "back\\slash", "${var}", "new\nline", "urn:li:dataset:(a,b,PROD)"]


@pytest.mark.parametrize("inline", [gold_executor.INLINE_GROUPS, 0])
def test_rows_of_touched_groups_are_kept_whatever_their_text(spark, monkeypatch, inline):
    monkeypatch.setattr(gold_executor, "INLINE_GROUPS", inline)
    rows = spark.createDataFrame(
        [(g, i) for i, g in enumerate([*ODD_GROUPS, "other", None])], "_group string, n int"
    )
    wanted = [*ODD_GROUPS[1:], None]
    groups = spark.createDataFrame([(g,) for g in wanted], "_group string")
    kept = gold_executor._of_groups(rows.withColumnRenamed("_group", "g"), "g", groups, wanted)
    assert sorted(r.g for r in kept.collect()) == sorted(ODD_GROUPS[1:])
    assert gold_executor._of_groups(rows, "_group", groups.limit(0), []).count() == 0


def test_later_runs_are_incremental(built):
    """Each batch adds rows to a source of the proposals and of the change history; the tag
    timeline's batches are the next test's."""
    _stepwise, _once, modes = built
    assert modes[: len(SPECS)] == ["full build"] * len(SPECS)
    later = modes[len(SPECS) :]
    others = [mode for i, mode in enumerate(later) if SPECS[i % len(SPECS)] is not tag_timeline.SPEC]
    assert all(mode.startswith("incremental") for mode in others), others


def test_timeline_extends_in_order_groups_and_rebuilds_late_ones(built):
    _stepwise, _once, modes = built
    timeline = modes[SPECS.index(tag_timeline.SPEC) :: len(SPECS)]
    assert (
        timeline
        == [
            "full build",  # no tag event yet
            "up to date",  # an entity change table's commit without a row: nothing to read
            "incremental, 1 groups extended, 0 rebuilt",  # ADD, REMOVE after every known event
            f"incremental, 0 groups extended, 1 rebuilt, from their events since {_iso(T0 + 1000)}",  # the late ADD
        ]
    )


def test_an_extension_closing_an_open_interval_commits_on_each_engine(spark, config, tmp_path, engine):
    """The interval an in-order event closes is written closed where the replacement removed it
    open: Delta's own `replaceWhere` accepts it as within what it replaces."""
    stepwise = _context(spark, tmp_path / "stepwise", config, engine)
    once = _context(spark, tmp_path / "once", config, engine)
    for batch, records in enumerate([[TAG_ADD], [TAG_REMOVE]]):
        _land(stepwise, records, batch)
        _land(once, records, batch)
        message = gold_executor.run(tag_timeline.SPEC, stepwise).message
    gold_executor.run(tag_timeline.SPEC, once)
    assert message == "incremental, 1 groups extended, 0 rebuilt"
    columns = ("tag_urn", "valid_from", "valid_to", "is_current")
    assert _rows(stepwise, tag_timeline.SPEC.table, *columns) == _rows(
        once, tag_timeline.SPEC.table, *columns
    )
    assert [r[-1] for r in _rows(stepwise, tag_timeline.SPEC.table, *columns)] == [False]


def test_status_event_without_resource_decides_incrementally(built):
    stepwise, once, _modes = built
    columns = ("proposal_urn", "status", "status_rule", "resolved_by")
    expected = [("urn:li:actionRequest:p1", "ACCEPTED", "STATUS_EVENT", "urn:li:corpuser:reviewer")]
    assert _rows(stepwise, "gold.proposals", *columns) == expected
    assert _rows(once, "gold.proposals", *columns) == expected


def test_late_add_rewrites_the_interval_like_a_full_build(built):
    stepwise, once, _modes = built
    columns = ("entity_urn", "tag_urn", "valid_from", "valid_to", "is_current", "end_reason")
    intervals = _rows(stepwise, "gold.tag_timeline", *columns)
    assert intervals == _rows(once, "gold.tag_timeline", *columns)
    assert len(intervals) == 1 and intervals[0][5] == "REMOVED"
    start = stepwise.store.read("gold.tag_timeline").select(F.unix_millis("valid_from")).first()[0]
    assert start == T0 + 1000  # the late ADD opened it; the later ADD opened nothing


@pytest.mark.slow  # runs gold more than once
def test_an_event_at_the_newest_known_instant_is_rebuilt_not_appended(spark, config, tmp_path):
    """At one instant an ADD sorts before a REMOVE, so an ADD arriving after a REMOVE of the
    same millisecond changes nothing; appended after it, it would reopen the tag. The extension
    only takes events strictly after the newest one known (by more than the statistics'
    precision); this one is rebuilt from the history, equal to a full build."""
    stepwise = _context(spark, tmp_path / "stepwise", config)
    once = _context(spark, tmp_path / "once", config)
    same_instant_add = _ece("TAG", "ADD", {"tagUrn": "urn:li:tag:pii"}, T0 + 5000, actor="urn:li:corpuser:b")
    messages = []
    for batch, records in enumerate([[TAG_ADD, TAG_REMOVE], [same_instant_add]]):
        _land(stepwise, records, batch)
        _land(once, records, batch)
        messages.append(gold_executor.run(tag_timeline.SPEC, stepwise).message)
    gold_executor.run(tag_timeline.SPEC, once)
    assert messages == [
        "full build",
        f"incremental, 0 groups extended, 1 rebuilt, from their events since {_iso(T0 + 5000)}",
    ]
    columns = ("entity_urn", "tag_urn", "valid_from", "valid_to", "is_current", "end_reason")
    intervals = _rows(stepwise, "gold.tag_timeline", *columns)
    assert intervals == _rows(once, "gold.tag_timeline", *columns)
    assert [(i[4], i[5]) for i in intervals] == [(False, "REMOVED")]


def test_nothing_new_means_no_commit(built):
    stepwise, _once, _modes = built
    version = stepwise.store.version("gold.tag_timeline")
    assert gold_executor.run(tag_timeline.SPEC, stepwise).status == "SKIPPED"
    assert stepwise.store.version("gold.tag_timeline") == version


def test_append_only_history_grows_by_appends_equal_to_a_full_build(built):
    stepwise, once, _modes = built
    columns = ("change_id", "source", "entity_urn", "category", "operation", "actor", "event_time", "details")
    changes = _rows(stepwise, "gold.change_history", *columns)
    assert changes == _rows(once, "gold.change_history", *columns)
    assert len(changes) == sum(len(batch) for batch in BATCHES)
    path = stepwise.store.path("gold.change_history")
    versions = [DeltaTable(path, version=v) for v in range(DeltaTable(path).version() + 1)]
    files = [set(v.file_uris()) for v in versions]
    assert all(earlier < later for earlier, later in zip(files, files[1:], strict=False))  # nothing removed
    rows = [
        sum(pa.table(v.get_add_actions(flatten=True)).column("num_records").to_pylist()) for v in versions
    ]
    assert rows == [1, 2, 4, 5]  # the full build, then each batch's changes appended


def _activity(ctx):
    return _rows(ctx, "gold.actor_activity_daily", "event_date", "actor", "source", "event_type", "events")


def _activity_from_scratch(ctx):
    spec = actor_activity_daily.SPEC
    built = spec.build({s: spec.relevant(s, ctx.store.read(s)) for s in spec.sources if ctx.store.exists(s)})
    return sorted(
        tuple(r) for r in built.select("event_date", "actor", "source", "event_type", "events").collect()
    )


@pytest.mark.slow  # runs gold more than once
def test_counts_add_up_without_history_until_a_source_is_rewritten(spark, config, tmp_path):
    stepwise = _context(spark, tmp_path / "stepwise", config)
    once = _context(spark, tmp_path / "once", config)
    messages = []
    for batch, records in enumerate(BATCHES):
        _land(stepwise, records, batch)
        _land(once, records, batch)
        messages.append(gold_executor.run(actor_activity_daily.SPEC, stepwise).message)
    gold_executor.run(actor_activity_daily.SPEC, once)
    assert messages == ["full build"] + ["incremental, new counts added"] * (len(BATCHES) - 1)
    assert _activity(stepwise) == _activity(once) == _activity_from_scratch(once)
    assert ("urn:li:corpuser:a", "TAG_ADD", 2) in [(a, t, n) for _d, a, _s, t, n in _activity(stepwise)]

    # Rows removed from a source (here the late ADD): adding the rewrite's rows would count
    # everything again, so the run recomputes the touched rows from the history instead.
    changes = "silver.datahub_entity_changes"
    kept = stepwise.store.read(changes).where(F.unix_millis("event_time") != T0 + 1000)
    stepwise.store.overwrite(kept, changes)
    assert gold_executor.run(actor_activity_daily.SPEC, stepwise).message == "incremental"
    assert _activity(stepwise) == _activity_from_scratch(stepwise)
    assert ("urn:li:corpuser:a", "TAG_ADD", 1) in [(a, t, n) for _d, a, _s, t, n in _activity(stepwise)]


@pytest.mark.slow  # runs gold more than once
@pytest.mark.parametrize(
    "inline_groups",
    [gold_executor.INLINE_GROUPS, 0],
    ids=["in-lists", "joins"],
)
def test_proposal_tables_find_their_touched_groups_once_per_run(
    spark, config, tmp_path, monkeypatch, inline_groups
):
    """gold.proposals and gold.proposal_events share sources, grouping and linked groups: the
    second table of a run reuses the groups the first collected, and both equal a full build,
    whether the linked groups are found by IN-list scans (few groups) or by joins (many)."""
    monkeypatch.setattr(gold_executor, "INLINE_GROUPS", inline_groups)
    stepwise = _context(spark, tmp_path / "stepwise", config)
    once = _context(spark, tmp_path / "once", config)
    specs = (proposals.SPEC, proposal_events.SPEC)
    for batch, records in enumerate(BATCHES):
        _land(stepwise, records, batch)
        _land(once, records, batch)
        for spec in specs:
            gold_executor.run(spec, stepwise)
    for spec in specs:
        gold_executor.run(spec, once)
    assert len(stepwise.touched_groups) == len(BATCHES) - 1  # one entry per incremental batch
    for spec in specs:
        columns = stepwise.store.read(spec.table).columns
        assert _rows(stepwise, spec.table, *columns) == _rows(once, spec.table, *columns)
    decided = _rows(stepwise, "gold.proposal_events", "event", "status_rule")
    assert ("ACCEPTED", "STATUS_EVENT") in decided


@pytest.mark.slow  # runs gold more than once
def test_pending_rows_weigh_a_task_by_the_rows_it_would_scan(spark, config, tmp_path):
    """What the runner weighs a gold task by (`pipelines.orchestration.runner`), from Delta statistics."""
    ctx = _context(spark, tmp_path, config)
    _land(ctx, [PROPOSE_TAG, TAG_ADD], 0)
    entity_rows = ctx.store.count_added_since(datahub_entity_changes.SPEC.table, None)
    assert gold_executor.pending_rows(tag_timeline.SPEC, ctx) == entity_rows > 0

    gold_executor.run(tag_timeline.SPEC, ctx)
    assert gold_executor.pending_rows(tag_timeline.SPEC, ctx) == 0

    gold_executor.run(proposals.SPEC, ctx)
    _land(ctx, [TAG_REMOVE], 1)
    assert gold_executor.pending_rows(tag_timeline.SPEC, ctx) == 1  # extended from its current rows
    # the proposals' other catalogs (OpenMetadata tasks, DataWorks requests) have no table here
    every_row = sum(ctx.store.count_added_since(t, None) for t in proposals.SOURCES if ctx.store.exists(t))
    assert gold_executor.pending_rows(proposals.SPEC, ctx) == every_row > 1  # rebuilt from history


def _jobs_of(spark, run):
    """`run()`'s result and the Spark jobs it ran, counted through a job group of its own."""
    group = f"counted-{uuid.uuid4().hex}"
    spark.sparkContext.setJobGroup(group, "counted")
    try:
        result = run()
        return result, len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)


@pytest.mark.slow  # runs gold more than once
def test_a_rebuild_of_few_touched_groups_runs_as_small_as_its_new_rows(spark, config, tmp_path):
    """A rebuild scans its sources whole but keeps only the touched groups' rows, so its mode
    follows the new rows, not the history: with sources past `small_input_rows` and one new row
    it runs the Spark jobs it runs with the sources under the limit, fewer than a large task's
    (the rows cached, measured, then written). The rows equal a full build either way, and the
    runner still weighs the task by the rows it scans."""
    history = [
        _ece("TAG", "ADD", {"tagUrn": f"urn:li:tag:t{i}"}, T0 + i, entity=f"urn:li:dataset:d{i}")
        for i in range(12)
    ]
    rows_held = len(history) + 1  # and the proposal: what the sources hold before the new row

    def rebuilt_with(limit: int, name: str) -> int:
        """The rebuild's jobs under `limit`, from a table built in full the same way each time."""
        tuned = config.with_overrides()
        stepwise = _context(spark, tmp_path / name / "stepwise", tuned)
        once = _context(spark, tmp_path / name / "once", tuned)
        for ctx in (stepwise, once):
            _land(ctx, [*history, PROPOSE_TAG], 0)
        gold_executor.run(proposals.SPEC, stepwise)
        tuned.profile["small_input_rows"] = limit
        for ctx in (stepwise, once):
            _land(ctx, [ACCEPT_WITHOUT_RESOURCE], 1)
        assert gold_executor.pending_rows(proposals.SPEC, stepwise) > rows_held
        result, jobs = _jobs_of(spark, lambda: gold_executor.run(proposals.SPEC, stepwise))
        assert result.message == "incremental" and result.source_rows == 1
        gold_executor.run(proposals.SPEC, once)
        columns = stepwise.store.read(proposals.SPEC.table).columns
        assert _rows(stepwise, proposals.SPEC.table, *columns) == _rows(once, proposals.SPEC.table, *columns)
        return jobs

    under_the_limit = rebuilt_with(10 * rows_held, "under")
    past_the_limit = rebuilt_with(rows_held, "past")
    as_a_large_task = rebuilt_with(0, "large")
    # at most: the session's first rebuild runs a few lookups later ones find done
    assert past_the_limit <= under_the_limit < as_a_large_task, (
        past_the_limit,
        under_the_limit,
        as_a_large_task,
    )


def test_a_table_built_under_another_revision_is_built_again_in_full_once(spark, config, tmp_path):
    """New columns or changed rules (the spec's revision): the next run rebuilds the table whole,
    with no step by hand, then runs go back to incremental."""
    from gold.governance_rules import GovernanceRules

    ctx = _context(spark, tmp_path / "warehouse", config)
    section = config.section("governance")
    as_person = change_history.spec_for(GovernanceRules.from_section(section))
    as_service = change_history.spec_for(
        GovernanceRules.from_section({**section, "actor_kinds": {"service": ["urn:li:corpuser:a"]}})
    )
    _land(ctx, BATCHES[0], 0)
    messages = [gold_executor.run(as_person, ctx).message]
    _land(ctx, BATCHES[1], 1)
    messages += [gold_executor.run(as_person, ctx).message, gold_executor.run(as_service, ctx).message]
    _land(ctx, BATCHES[2], 2)
    messages.append(gold_executor.run(as_service, ctx).message)
    assert messages == ["full build", "incremental", "full build", "incremental"]
    kinds = _rows(ctx, "gold.change_history", "actor", "actor_kind")
    assert ("urn:li:corpuser:a", "service") in kinds and ("urn:li:corpuser:a", "person") not in kinds


HIVE = "urn:li:dataset:(urn:li:dataPlatform:hive,shop.orders,PROD)"
MYSQL = "urn:li:dataset:(urn:li:dataPlatform:mysql,shop.users,PROD)"
COVERAGE_SPECS = (
    tag_timeline.SPEC,
    entity_status_timeline.SPEC,
    schema_field_timeline.SPEC,
    entity_governance_timeline.SPEC,
    governance_coverage_daily.SPEC,
)


def _on(day: int, hour: int) -> int:
    """Epoch milliseconds of January `day`, 2026, at `hour` UTC."""
    return int(dt.datetime(2026, 1, day, hour, tzinfo=dt.timezone.utc).timestamp() * 1000)


def _field_tagged(dataset: str, path: str, time: int) -> dict:
    field = f"urn:li:schemaField:({dataset},{path})"
    return _ece("TAG", "ADD", {"tagUrn": "urn:li:tag:pii"}, time, entity=field, entity_type="schemaField")


@pytest.mark.slow  # runs gold more than once
def test_coverage_rebuilds_the_days_a_field_event_reaches_back_to_equal_to_a_full_build(
    spark, config, tmp_path
):
    """A schema field no schema event names exists with its dataset, so its first event, on day 3,
    makes it exist from its dataset's creation on day 1; a field's first schema event, on day 3,
    leaves it existing from its own first event, on day 2, only. The run of day 3 rebuilds the
    coverage from day 1, as a full build counts it: on day 1 the mysql field, not the hive one."""
    stepwise = _context(spark, tmp_path / "stepwise", config)
    once = _context(spark, tmp_path / "once", config)
    created = [_ece("LIFECYCLE", "CREATE", {}, _on(1, 8), entity=dataset) for dataset in (HIVE, MYSQL)]
    batches = [
        [*created, _field_tagged(HIVE, "email", _on(2, 9))],
        [
            _ece("TECHNICAL_SCHEMA", "ADD", {"fieldPath": "email"}, _on(3, 9), entity=HIVE),
            _field_tagged(MYSQL, "phone", _on(3, 10)),
        ],
    ]
    messages = []
    for batch, records in enumerate(batches):
        _land(stepwise, records, batch)
        _land(once, records, batch)
        messages = [gold_executor.run(spec, stepwise).message for spec in COVERAGE_SPECS]
    for spec in COVERAGE_SPECS:
        gold_executor.run(spec, once)
    assert messages[-1] == "incremental"
    table = governance_coverage_daily.SPEC.table
    columns = ("day", "platform", "entity_type", "live_entities", "with_tag")
    assert _rows(stepwise, table, *columns) == _rows(once, table, *columns)
    fields = [
        (str(day), platform, live)
        for day, platform, kind, live, _ in _rows(stepwise, table, *columns)
        if kind == "schemaField"
    ]
    assert fields == [
        ("2026-01-01", "mysql", 1),
        ("2026-01-02", "hive", 1),
        ("2026-01-02", "mysql", 1),
        ("2026-01-03", "hive", 1),
        ("2026-01-03", "mysql", 1),
    ]
