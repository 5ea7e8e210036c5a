"""The governance tables on one small story: who changed what (kinds of actors, names and stable
keys of entities), each entity's profile over time, coverage per day, classification latency,
reversals, review requests and their backlog per day.

The story, on 2026-01-01..03: ingestion creates a DataHub dataset; a person tags it and its email
field `pii`, ingestion takes the dataset's tag off two hours later and the person puts it back two
days later; an owner, a domain, a new `phone` column and a description arrive on day 2; the system
actor soft-deletes the dataset on day 3. OpenMetadata's ingestion bot creates a table with an
`email` column, a person tags the column on day 2 and renames the table on day 3.
"""

from __future__ import annotations

import json
from functools import partial

import pytest
from pyspark.sql import functions as F

from gold import (
    actors,
    change_history,
    change_reversals,
    documentation_history,
    domain_timeline,
    entity_governance_timeline,
    entity_status_timeline,
    glossary_term_timeline,
    governance_coverage_daily,
    ownership_timeline,
    proposals,
    review_backlog_daily,
    schema_field_timeline,
    sensitive_exposure,
    tag_timeline,
)
from gold.governance_rules import GovernanceRules, default_rules
from pipelines.runtime.spark import SMALL_INPUT_CONF, session_conf
from tests.support.gold import build_accumulated, build_all, entity_change, rows, source, touched_groups

DH = "silver.datahub_entity_changes"
AR = "silver.datahub_action_requests"
OM_FIELDS = "silver.openmetadata_field_changes"
OM_EVENTS = "silver.openmetadata_change_events"
DW = "silver.dataworks_events"
DW_APPROVALS = "silver.dataworks_approvals"
DS = "urn:li:dataset:(urn:li:dataPlatform:hive,shop.orders,PROD)"
EMAIL = f"urn:li:schemaField:({DS},email)"
PHONE = f"urn:li:schemaField:({DS},phone)"
PII = "urn:li:tag:pii"
ANN, INGESTION = "urn:li:corpuser:ann", "urn:li:corpuser:svc_ingestion"
TABLE = "openmetadata:table:svc.db.orders"
RENAMED = "openmetadata:table:svc.db.orders_v2"
COLUMN = "openmetadata:column:svc.db.orders.email"
TIMELINES = (
    tag_timeline.SPEC,
    ownership_timeline.SPEC,
    glossary_term_timeline.SPEC,
    domain_timeline.SPEC,
    entity_status_timeline.SPEC,
    schema_field_timeline.SPEC,
    documentation_history.SPEC,
)

dh = partial(entity_change, entity=DS, actor=ANN)


def datahub_story(day_three: bool = True) -> list[dict]:
    events = [
        dh("d1", "2026-01-01 08:00", "LIFECYCLE", "CREATE", actor="urn:li:corpuser:datahub"),
        dh("d2", "2026-01-01 09:00", "TAG", "ADD", tagUrn=PII),
        dh("d3", "2026-01-01 10:00", "TAG", "ADD", entity=EMAIL, tagUrn=PII),
        dh("d4", "2026-01-01 11:00", "TAG", "REMOVE", actor=INGESTION, tagUrn=PII),
        dh(
            "d5",
            "2026-01-02 09:00",
            "OWNERSHIP",
            "ADD",
            ownerUrn="urn:li:corpuser:bob",
            ownerType="TECHNICAL_OWNER",
        ),
        dh("d6", "2026-01-02 10:00", "DOMAIN", "ADD", domainUrn="urn:li:domain:sales"),
        dh("d7", "2026-01-02 11:00", "TECHNICAL_SCHEMA", "ADD", actor=INGESTION, fieldPath="phone"),
        dh("d8", "2026-01-02 12:00", "DOCUMENTATION", "ADD", description="One row per order"),
    ]
    if day_three:
        events += [
            dh("d9", "2026-01-03 09:00", "TAG", "ADD", tagUrn=PII),
            dh(
                "d10",
                "2026-01-03 10:00",
                "LIFECYCLE",
                "SOFT_DELETE",
                actor="urn:li:corpuser:__datahub_system",
            ),
        ]
    return events


def om_field(event_id, time, **values) -> dict:
    base = dict(
        event_id=event_id, event_time=time, change_event_id=f"ce-{event_id}", entity_key=TABLE,
        entity_type="table", entity_id="t-1", entity_fqn="svc.db.orders", actor="amanda",
    )  # fmt: skip
    return {**base, **values}


def openmetadata_story(day_three: bool = True) -> tuple[list[dict], list[dict]]:
    created = dict(
        event_id="o1", event_time="2026-01-01 08:30", event_type="entityCreated", entity_key=TABLE,
        entity_type="table", entity_id="t-1", entity_fqn="svc.db.orders", actor="ingestion-bot",
        entity=json.dumps({"name": "orders", "columns": [{"name": "email"}]}),
    )  # fmt: skip
    tagged = om_field(
        "o2", "2026-01-02 08:00", change_kind="added", field_name="columns.email.tags", field_base="tags",
        column_name="email", new_tags=[dict(tagFQN="PII.Sensitive", source="Classification")],
    )  # fmt: skip
    fields = [tagged]
    if day_three:
        fields.append(
            om_field(
                "o3",
                "2026-01-03 08:00",
                entity_key=RENAMED,
                entity_fqn="svc.db.orders_v2",
                change_kind="updated",
                field_name="name",
                field_base="name",
                old_value="orders",
                new_value="orders_v2",
            )  # fmt: skip
        )
    return fields, [created]


def silver(spark, day_three: bool = True) -> dict:
    fields, events = openmetadata_story(day_three)
    return {
        DH: source(spark, DH, *datahub_story(day_three)),
        OM_FIELDS: source(spark, OM_FIELDS, *fields),
        OM_EVENTS: source(spark, OM_EVENTS, *events),
    }


def gold_of(batch: dict) -> dict:
    """The gold tables the governance timeline reads, built from `batch`, and the OM field changes."""
    built = {spec.table: build_all(spec, {s: batch[s] for s in spec.sources}) for spec in TIMELINES}
    return {**built, OM_FIELDS: batch[OM_FIELDS]}


def _computed(spark, frame):
    """`frame`'s rows as a frame of their own: the tests read it several times, and a frame without
    its builds' lineage is quick for Spark to plan on."""
    return spark.createDataFrame(frame.collect(), frame.schema)


@pytest.fixture(scope="module")
def stories(spark):
    """{"all": the whole story, "before": the story without day 3}: each one's silver rows, gold
    timelines (the whole story's computed) and profiles (computed), built once."""
    found = {}
    with session_conf(spark, SMALL_INPUT_CONF):
        for name, day_three in (("all", True), ("before", False)):
            batch = silver(spark, day_three)
            timelines = gold_of(batch)
            if day_three:  # read again by the reversals
                timelines = {t: _computed(spark, rows_) for t, rows_ in timelines.items()}
            spec = entity_governance_timeline.SPEC
            profiles = _computed(spark, build_all(spec, {s: timelines[s] for s in spec.sources}))
            found[name] = (batch, timelines, profiles)
    return found


@pytest.fixture(scope="module")
def story(stories):
    """The whole story's silver rows, its profiles' frame and its profiles collected."""
    batch, _, profiles = stories["all"]
    return batch, profiles, profiles.collect()


def periods(collected, entity: str, *columns: str) -> list[tuple]:
    chosen = sorted((r for r in collected if r.entity_urn == entity), key=lambda r: r.valid_from)
    return [tuple(_shown(r[c]) for c in columns) for r in chosen]


def _shown(value):
    return value.strftime("%m-%d %H:%M") if hasattr(value, "strftime") else value


def test_rules_class_tags_by_pattern_and_kind_actors_with_system_accounts_first(spark, small_input):
    rules = GovernanceRules.from_section(
        {
            "tag_classes": {"sensitive": ["urn:li:tag:*pii*", "PII.Sensitive"], "legal": ["*gdpr*"], "empty": []},
            "actor_kinds": {"system": ["urn:li:corpuser:__datahub_system"], "service": ["*-bot", "urn:li:corpuser:datahub"]},
            "reversal_window_hours": 24,
        }
    )  # fmt: skip
    frame = spark.createDataFrame(
        [("urn:li:tag:PII", "urn:li:corpuser:__datahub_system"), ("PII.NonSensitive", "ingestion-bot"),
         ("urn:li:tag:gdpr_eu", "urn:li:corpuser:ann"), ("x", None), ("y", " ")],
        "tag string, actor string",
    )  # fmt: skip
    found = frame.select(
        rules.tag_classes_of(F.col("tag")).alias("c"), rules.actor_kind(F.col("actor")).alias("k")
    )
    assert [tuple(r) for r in found.collect()] == [
        (["sensitive"], "system"),
        ([], "service"),
        (["legal"], "person"),
        ([], "unattributed"),
        ([], "unattributed"),
    ]
    assert rules.class_names == ("legal", "sensitive")  # a class without patterns is no class
    assert rules.revision("v", actors=True) != rules.revision("v") == default_rules().revision("v")


def test_change_history_names_entities_alike_keys_a_renamed_table_by_its_id_and_kinds_its_actors(
    spark, small_input
):
    fields, events = openmetadata_story()
    batch = {
        DH: source(spark, DH, *datahub_story()[:4]),
        OM_FIELDS: source(spark, OM_FIELDS, *fields),
        OM_EVENTS: source(spark, OM_EVENTS, *events),
        AR: source(spark, AR),
        DW: source(
            spark, DW,
            dict(event_id="w1", event_time="10:00", type="dataworks:NodeChange:NodeChangeUpdated",
                 event_code="node-change-updated", category="NodeChange", action="NodeChangeUpdated",
                 project_id=9, operator=None, data=json.dumps({"nodeId": 7, "nodeName": "ods_orders"})),
        ),
    }  # fmt: skip
    built = build_all(change_history.SPEC, batch)
    assert rows(built, "change_id", "entity_key", "entity_name", "actor_kind") == [
        ("d1", DS, "shop.orders", "service"),
        ("d2", DS, "shop.orders", "person"),
        ("d3", EMAIL, "shop.orders.email", "person"),
        ("d4", DS, "shop.orders", "service"),
        ("o1", "openmetadata:table:t-1", "svc.db.orders", "service"),
        ("o2", "openmetadata:column:t-1.email", "svc.db.orders.email", "person"),
        ("o3", "openmetadata:table:t-1", "svc.db.orders_v2", "person"),  # renamed: the same key
        ("w1", "dataworks:node:7", "ods_orders", "unattributed"),
    ]


def test_actors_count_each_actors_changes_per_category_and_add_up_batch_by_batch(spark, small_input):
    audit = "silver.datahub_audit_events"
    login = dict(event_id="a1", event_time="2026-01-01 07:00", event_type="LogInEvent", actor=ANN)
    first = {DH: source(spark, DH, *datahub_story()[:5]), audit: source(spark, audit, login)}
    second = {DH: source(spark, DH, *datahub_story()[5:]), audit: source(spark, audit)}
    full = build_all(actors.SPEC, {name: first[name].unionByName(second[name]) for name in first})
    shown = (
        "source",
        "actor",
        "actor_kind",
        "first_seen",
        "last_seen",
        "changes",
        "audit_events",
        "changes_by_category",
    )
    assert rows(full, *shown) == [
        ("datahub", "urn:li:corpuser:__datahub_system", "system", "10:00", "10:00", 1, 0, {"LIFECYCLE": 1}),
        ("datahub", ANN, "person", "07:00", "09:00", 6, 1,
         {"DOCUMENTATION": 1, "DOMAIN": 1, "OWNERSHIP": 1, "TAG": 3}),
        ("datahub", "urn:li:corpuser:datahub", "service", "08:00", "08:00", 1, 0, {"LIFECYCLE": 1}),
        ("datahub", INGESTION, "service", "11:00", "11:00", 2, 0, {"TAG": 1, "TECHNICAL_SCHEMA": 1}),
    ]  # fmt: skip
    assert rows(build_accumulated(actors.SPEC, first, second), *shown) == rows(full, *shown)


def test_a_datasets_profile_changes_with_each_association_its_status_and_its_description(story):
    _, _, collected = story
    shown = (
        "valid_from",
        "is_live",
        "owners",
        "tags",
        "tag_classes",
        "domain_urn",
        "has_description",
        "changed_by",
    )
    assert periods(collected, DS, *shown) == [
        ("01-01 08:00", True, 0, 0, [], None, False, "urn:li:corpuser:datahub"),
        ("01-01 09:00", True, 0, 1, ["pii", "sensitive"], None, False, ANN),
        ("01-01 11:00", True, 0, 0, [], None, False, INGESTION),
        ("01-02 09:00", True, 1, 0, [], None, False, ANN),
        ("01-02 10:00", True, 1, 0, [], "urn:li:domain:sales", False, ANN),
        ("01-02 12:00", True, 1, 0, [], "urn:li:domain:sales", True, ANN),
        ("01-03 09:00", True, 1, 1, ["pii", "sensitive"], "urn:li:domain:sales", True, ANN),
        ("01-03 10:00", False, 1, 1, ["pii", "sensitive"], "urn:li:domain:sales", True, "urn:li:corpuser:__datahub_system"),
    ]  # fmt: skip
    assert periods(collected, DS, "unowned_since")[:3] == [("01-01 08:00",)] * 3
    assert {r.entity_name for r in collected if r.entity_urn == DS} == {"shop.orders"}


def test_fields_live_and_are_placed_with_their_dataset_and_appear_with_their_schema_event(story):
    _, _, collected = story
    shown = ("valid_from", "is_live", "tags", "domain_urn", "platform")
    assert periods(collected, EMAIL, *shown) == [
        ("01-01 08:00", True, 0, None, "hive"),  # no schema event names it: there with its dataset
        ("01-01 10:00", True, 1, None, "hive"),
        ("01-02 10:00", True, 1, "urn:li:domain:sales", "hive"),
        ("01-03 10:00", False, 1, "urn:li:domain:sales", "hive"),
    ]
    assert periods(collected, PHONE, *shown) == [
        (
            "01-02 11:00",
            True,
            0,
            "urn:li:domain:sales",
            "hive",
        ),  # from its schema ADD, in its dataset's domain
        ("01-03 10:00", False, 0, "urn:li:domain:sales", "hive"),
    ]


def test_an_openmetadata_rename_ends_the_old_key_and_begins_the_new_one(story):
    _, _, collected = story
    assert periods(collected, TABLE, "valid_from", "is_live", "entity_name", "platform") == [
        ("01-01 08:30", True, "svc.db.orders", "svc"),
        ("01-03 08:00", False, "svc.db.orders", "svc"),
    ]
    assert periods(collected, COLUMN, "valid_from", "is_live", "tag_classes") == [
        ("01-01 08:30", True, []),
        ("01-02 08:00", True, ["pii", "sensitive"]),
        ("01-03 08:00", False, ["pii", "sensitive"]),
    ]
    assert periods(collected, RENAMED, "valid_from", "is_live", "entity_name") == [
        ("01-03 08:00", True, "svc.db.orders_v2")
    ]


def coverage_of(spark, state, batch):
    spec = governance_coverage_daily.SPEC
    return build_all(spec, {spec.sources[0]: state, **{s: batch[s] for s in spec.sources[1:]}})


def test_coverage_counts_the_live_entities_of_each_day_and_cell_at_the_days_end(spark, story, small_input):
    batch, profiles, _ = story
    built = coverage_of(spark, profiles, batch)
    shown = ("day", "source", "entity_type", "domain_urn", "live_entities", "with_owner", "with_domain",
             "with_description", "with_tag", "with_tag_class")  # fmt: skip
    got = [
        tuple(str(v) if k == "day" else v for k, v in zip(shown, r, strict=True)) for r in rows(built, *shown)
    ]
    assert got == [
        ("2026-01-01", "datahub", "dataset", None, 1, 0, 0, 0, 0, {"pii": 0, "sensitive": 0}),
        ("2026-01-01", "datahub", "schemaField", None, 1, 0, 0, 0, 1, {"pii": 1, "sensitive": 1}),
        ("2026-01-01", "openmetadata", "column", None, 1, 0, 0, 0, 0, {"pii": 0, "sensitive": 0}),
        ("2026-01-01", "openmetadata", "table", None, 1, 0, 0, 0, 0, {"pii": 0, "sensitive": 0}),
        ("2026-01-02", "datahub", "dataset", "urn:li:domain:sales", 1, 1, 1, 1, 0, {"pii": 0, "sensitive": 0}),
        ("2026-01-02", "datahub", "schemaField", "urn:li:domain:sales", 2, 0, 2, 0, 1, {"pii": 1, "sensitive": 1}),
        ("2026-01-02", "openmetadata", "column", None, 1, 0, 0, 0, 1, {"pii": 1, "sensitive": 1}),
        ("2026-01-02", "openmetadata", "table", None, 1, 0, 0, 0, 0, {"pii": 0, "sensitive": 0}),
        ("2026-01-03", "openmetadata", "table", None, 1, 0, 0, 0, 0, {"pii": 0, "sensitive": 0}),  # renamed
    ]  # fmt: skip


def _rebuilt_days(spec, state_table: str, state_before, state_after, first: dict, second: dict):
    """What the runner does for a daily table: build the first batch over the state as it was, then
    rebuild the days the second batch touches (and every later one) over the state as it is."""
    result = build_all(spec, {state_table: state_before, **first})
    touched = touched_groups(spec, {state_table: state_after, **second})
    everything = {state_table: spec.relevant(state_table, state_after)} | {
        name: spec.relevant(name, first[name].unionByName(second[name])) for name in first
    }
    expanded = spec.incremental.expand_groups(touched, everything).distinct()
    values = sorted(row[0] for row in touched.collect())
    assert spec.incremental.expand_group_values(values, everything) == {row[0] for row in expanded.collect()}
    history = {name: rows_.join(expanded, "_group", "left_semi") for name, rows_ in everything.items()}
    kept = result.join(expanded.withColumnRenamed("_group", spec.group_key), spec.group_key, "left_anti")
    return kept.unionByName(spec.build(history))


def test_coverage_rebuilds_from_the_first_day_of_new_events_and_equals_a_full_build(
    spark, stories, small_input
):
    batch, _, after = stories["all"]
    before, _, profiles_before = stories["before"]
    second = {name: rows_.where("event_date = DATE'2026-01-03'") for name, rows_ in batch.items()}
    spec = governance_coverage_daily.SPEC
    incremental = _rebuilt_days(spec, spec.sources[0], profiles_before, after, before, second)
    full = coverage_of(spark, after, batch)
    assert rows(incremental, *full.columns) == rows(full, *full.columns)


def test_exposure_says_when_each_entity_was_first_classified_by_whom_and_what_was_never(
    spark, story, small_input
):
    _, profiles, _ = story
    built = build_all(sensitive_exposure.SPEC, {entity_governance_timeline.SPEC.table: profiles})
    shown = ("entity_name", "appeared_at", "first_classified_at", "first_classified_by", "hours_to_classify",
             "last_declassified_at", "last_declassified_by", "is_classified")  # fmt: skip
    assert rows(built.where("tag_class = 'sensitive'"), *shown) == [
        ("shop.orders", "08:00", "09:00", ANN, 1.0, "11:00", INGESTION, True),
        ("shop.orders.email", "08:00", "10:00", ANN, 2.0, None, None, True),
        ("shop.orders.phone", "11:00", None, None, None, None, None, False),  # never classified
        ("svc.db.orders", "08:30", None, None, None, None, None, False),
        ("svc.db.orders.email", "08:30", "08:00", "amanda", 23.5, None, None, True),
        ("svc.db.orders_v2", "08:00", None, None, None, None, None, False),
    ]  # fmt: skip


def test_reversals_pair_an_undo_with_what_it_undid_within_the_window_with_both_actors_kinds(
    spark, stories, small_input
):
    _, timelines, _ = stories["all"]
    built = build_all(change_reversals.SPEC, {t: timelines[t] for t in change_reversals.SOURCES})
    shown = ("entity_urn", "association", "value", "reversal", "first_at", "first_by_kind", "second_at",
             "second_by_kind", "hours_between")  # fmt: skip
    assert rows(built, *shown) == [
        (DS, "tag", PII, "ADDED_THEN_REMOVED", "09:00", "person", "11:00", "service", 2.0),
        (DS, "tag", PII, "REMOVED_THEN_RESTORED", "11:00", "service", "09:00", "person", 46.0),
    ]  # fmt: skip
    narrow = change_reversals.spec_for(
        GovernanceRules.from_section({**_section(), "reversal_window_hours": 24})
    )
    assert rows(build_all(narrow, {t: timelines[t] for t in change_reversals.SOURCES}), "reversal") == [
        ("ADDED_THEN_REMOVED",)
    ]


def _section() -> dict:
    from pipelines.core.config import load_config

    return load_config().section("governance")


def review_sources(spark) -> dict:
    thread = {
        "id": "th-1", "type": "Task", "about": "<#E::table::svc.db.orders::columns::email>", "createdBy": "amanda",
        "threadTs": 1767254400000,  # 2026-01-01 08:00
        "task": {"id": 4, "type": "RequestTag", "assignees": [{"name": "brian"}, {"name": "cara"}], "status": "Open"},
    }  # fmt: skip
    task_event = partial(dict, entity_key="openmetadata:THREAD:th-1", entity_type="THREAD", entity_id="th-1")
    return {
        AR: source(
            spark, AR,
            dict(event_id="p1", event_time="2026-01-01 09:00", proposal_urn="urn:li:actionRequest:p", operation="CREATE",
                 actor=ANN, action_request_type="TAG_ASSOCIATION", resource_urn=DS, tagUrn=PII),
        ),
        DH: source(spark, DH, dh("d2", "2026-01-02 21:00", "TAG", "ADD", tagUrn=PII)),  # applies the proposal
        OM_EVENTS: source(
            spark, OM_EVENTS,
            task_event(event_id="t1", event_time="2026-01-01 08:00", event_type="threadCreated", actor="amanda",
                       entity=json.dumps(thread)),
            task_event(event_id="t2", event_time="2026-01-03 08:00", event_type="taskClosed", actor="brian",
                       entity=json.dumps({**thread, "task": {**thread["task"], "status": "Closed"}})),
        ),
        DW_APPROVALS: source(
            spark, DW_APPROVALS,
            dict(event_id="a1", event_time="2026-01-02 10:00", event_code="approval-change-finished",
                 workflow_id="528", process_create_time="2026-01-01 10:00", entity_key="dataworks:table:odps.p.t",
                 assignee_name="dataworks.admin", applicant_name="yu", status="Approved"),
        ),
    }  # fmt: skip


def test_proposals_of_every_catalog_say_how_long_they_took_and_how_the_outcome_is_known(spark, small_input):
    built = build_all(proposals.SPEC, review_sources(spark))
    shown = ("source", "proposal_urn", "action_request_type", "resource_urn", "sub_resource", "status",
             "status_rule", "hours_to_resolution", "assignees")  # fmt: skip
    assert rows(built, *shown) == [
        ("datahub", "urn:li:actionRequest:p", "TAG_ASSOCIATION", DS, None, "APPLIED", "INFERRED_FROM_CHANGE", 36.0, []),
        ("dataworks", "dataworks:approval:528", "PERMISSION_REQUEST", "dataworks:table:odps.p.t", None, "ACCEPTED",
         "STATUS_EVENT", 24.0, ["dataworks.admin"]),
        ("openmetadata", "openmetadata:THREAD:th-1", "RequestTag", TABLE, "email", "REJECTED", "STATUS_EVENT", 48.0,
         ["brian", "cara"]),
    ]  # fmt: skip


def test_the_backlog_counts_open_requests_their_ages_and_the_days_moves_per_assignee(spark, small_input):
    events = review_sources(spark)
    spec = review_backlog_daily.SPEC
    state = build_all(proposals.SPEC, events)
    built = build_all(spec, {"gold.proposals": state, **events})
    shown = (
        "day",
        "source",
        "assignee",
        "open_requests",
        "opened",
        "resolved",
        "resolved_inferred",
        "age_max_days",
    )
    got = [
        tuple(str(v) if k == "day" else v for k, v in zip(shown, r, strict=True)) for r in rows(built, *shown)
    ]
    assert got == [
        ("2026-01-01", "datahub", None, 1, 1, 0, 0, 0.625),
        ("2026-01-01", "dataworks", "dataworks.admin", 1, 1, 0, 0, 0.5833333333333334),
        ("2026-01-01", "openmetadata", "brian", 1, 1, 0, 0, 0.6666666666666666),
        ("2026-01-01", "openmetadata", "cara", 1, 1, 0, 0, 0.6666666666666666),
        ("2026-01-02", "datahub", None, 0, 0, 1, 1, None),  # inferred from the tag put on that evening
        ("2026-01-02", "dataworks", "dataworks.admin", 0, 0, 1, 0, None),
        ("2026-01-02", "openmetadata", "brian", 1, 0, 0, 0, 1.6666666666666667),
        ("2026-01-02", "openmetadata", "cara", 1, 0, 0, 0, 1.6666666666666667),
        ("2026-01-03", "openmetadata", "brian", 0, 0, 1, 0, None),
        ("2026-01-03", "openmetadata", "cara", 0, 0, 1, 0, None),
    ]
