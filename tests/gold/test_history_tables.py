"""The history tables: each rule as the event catalogs state it, and incremental runs (late
and split batches) equal a full rebuild."""

from __future__ import annotations

import json
from functools import partial

import pytest

from gold import (
    dataworks_instance_runs,
    dataworks_node_reliability_daily,
    deprecation_timeline,
    documentation_history,
    entity_status_timeline,
    entity_versions,
    schema_field_timeline,
    structured_property_timeline,
)
from tests.support.gold import (
    assert_extended_equals_full,
    assert_incremental_equals_full,
    assert_interval_invariants,
    assert_rebuilt_since_equals_full,
    build_all,
    entity_change,
    rows,
    source,
)

DH = "silver.datahub_entity_changes"
OM_FIELDS = "silver.openmetadata_field_changes"
OM_EVENTS = "silver.openmetadata_change_events"
DW = "silver.dataworks_instance_status_changes"
DS = "urn:li:dataset:abc"
TABLE = "openmetadata:table:shop.db.orders"


dh = partial(entity_change, entity=DS, actor="urn:li:corpuser:jdoe")


def om(event_id, time, event_type, actor="ann", **extra):
    return dict(event_id=event_id, event_time=time, event_type=event_type, entity_type="table",
                entity_fqn="shop.db.orders", entity_key=TABLE, actor=actor, **extra)  # fmt: skip


@pytest.fixture
def sources(spark):
    def make(datahub=(), fields=(), events=(), dataworks=()):
        return {
            DH: source(spark, DH, *datahub),
            OM_FIELDS: source(spark, OM_FIELDS, *fields),
            OM_EVENTS: source(spark, OM_EVENTS, *events),
            DW: source(spark, DW, *dataworks),
        }

    return make


def only(job, batch):
    return {name: batch[name] for name in job.sources}


def assert_every_path_equals_full(job, batch, late_first_ids, in_order_first_ids):
    """The groups a second batch touches, rebuilt from their history, rebuilt from the second
    batch's earliest event (a late batch), and extended (a batch after every known event), each
    equal a full build."""
    late = split(job, batch, late_first_ids)
    assert_incremental_equals_full(job, *late)
    assert_rebuilt_since_equals_full(job, *late)
    assert_extended_equals_full(job, *split(job, batch, in_order_first_ids))


def split(job, batch, first_ids):
    """(first, second) batches of `job`'s sources: the rows with `first_ids`, then the others."""
    ids = ", ".join(f"'{i}'" for i in first_ids)
    chosen = only(job, batch)
    return (
        {n: df.filter(f"event_id in ({ids})") for n, df in chosen.items()},
        {n: df.filter(f"event_id not in ({ids})") for n, df in chosen.items()},
    )


# "LIFECYCLE CREATE / SOFT_DELETE / HARD_DELETE / REINSTATE: no parameters (REINSTATE undoes a
# soft delete)"; OpenMetadata entityCreated, entitySoftDeleted, entityDeleted, entityRestored.
@pytest.mark.parametrize("check", ["built", pytest.param("incremental", marks=pytest.mark.slow)])
def test_entity_status_follows_lifecycle_events_of_both_catalogs(sources, check):
    batch = sources(
        datahub=[
            dh("l1", "10:00", "LIFECYCLE", "CREATE"),
            dh("l2", "11:00", "LIFECYCLE", "SOFT_DELETE", actor="bob"),
            dh("l3", "12:00", "LIFECYCLE", "REINSTATE"),
            dh("l4", "12:30", "LIFECYCLE", "CREATE"),  # already active: the interval continues
            dh("l5", "13:00", "LIFECYCLE", "HARD_DELETE", actor="ops"),
        ],
        events=[om("o1", "10:00", "entityCreated"), om("o2", "11:00", "entitySoftDeleted"),
                om("o3", "12:00", "entityRestored"), om("o4", "13:00", "entityDeleted")],
    )  # fmt: skip
    job = entity_status_timeline.SPEC
    if check == "incremental":  # the middle arrives late
        return assert_every_path_equals_full(job, batch, ["l1", "l5", "o1", "o4"], ["l1", "l2", "o1", "o2"])
    built = build_all(job, only(job, batch))
    assert rows(built, "source", "status", "valid_from", "valid_to", "is_current", "changed_by") == [
        ("datahub", "ACTIVE", "10:00", "11:00", False, "urn:li:corpuser:jdoe"),
        ("datahub", "ACTIVE", "12:00", "13:00", False, "urn:li:corpuser:jdoe"),
        ("datahub", "HARD_DELETED", "13:00", None, True, "ops"),
        ("datahub", "SOFT_DELETED", "11:00", "12:00", False, "bob"),
        ("openmetadata", "ACTIVE", "10:00", "11:00", False, "ann"),
        ("openmetadata", "ACTIVE", "12:00", "13:00", False, "ann"),
        ("openmetadata", "HARD_DELETED", "13:00", None, True, "ann"),
        ("openmetadata", "SOFT_DELETED", "11:00", "12:00", False, "ann"),
    ]
    assert_interval_invariants(built, ["source", "entity_urn"])


# "TECHNICAL_SCHEMA ADD/REMOVE/MODIFY: fieldUrn, fieldPath, nullable (boolean), modificationCategory
# (RENAME | TYPE_CHANGE | OTHER)"
@pytest.mark.parametrize("check", ["built", pytest.param("incremental", marks=pytest.mark.slow)])
def test_schema_fields_added_renamed_retyped_removed_and_deleted(sources, check):
    def field(path):
        return f"urn:li:schemaField:({DS},{path})"

    batch = sources(
        datahub=[
            dh("s1", "10:00", "TECHNICAL_SCHEMA", "ADD", modifier=field("id"), fieldUrn=field("id"),
               fieldPath="id", nullable=False),
            dh("s2", "10:00", "TECHNICAL_SCHEMA", "ADD", modifier=field("mail"), fieldUrn=field("mail"),
               fieldPath="mail", nullable=True),
            dh("s3", "11:00", "TECHNICAL_SCHEMA", "MODIFY", modifier=field("mail"), fieldUrn=field("email"),
               fieldPath="email", nullable=True, modificationCategory="RENAME"),
            dh("s4", "11:30", "TECHNICAL_SCHEMA", "MODIFY", modifier=field("id"), fieldUrn=field("id"),
               fieldPath="id", modificationCategory="TYPE_CHANGE"),
            dh("s5", "12:00", "TECHNICAL_SCHEMA", "REMOVE", modifier=field("id"), fieldUrn=field("id"),
               fieldPath="id", actor="bob"),
            dh("s6", "13:00", "LIFECYCLE", "HARD_DELETE", actor="ops"),
        ],
        fields=[
            dict(event_id="c1", event_time="10:00", entity_key=TABLE, entity_fqn="shop.db.orders", actor="ann",
                 change_kind="added", field_name="columns", field_base="columns",
                 new_value=json.dumps([{"name": "note", "dataType": "VARCHAR"}])),
            dict(event_id="c2", event_time="11:00", entity_key=TABLE, entity_fqn="shop.db.orders", actor="ann",
                 change_kind="deleted", field_name="columns", field_base="columns",
                 old_value=json.dumps([{"name": "note", "dataType": "VARCHAR"}])),
        ],
        events=[om("o1", "09:00", "entityCreated", entity=json.dumps({"columns": [{"name": "id"}]}))],
    )  # fmt: skip
    job = schema_field_timeline.SPEC
    if check == "incremental":
        return assert_every_path_equals_full(
            job, batch, ["s1", "s2", "s5", "c2"], ["s1", "s2", "o1", "c1", "s3"]
        )
    built = build_all(job, only(job, batch))
    columns = ("dataset_urn", "field_path", "nullable", "valid_from", "valid_to", "end_reason", "removed_by")
    assert rows(built, *columns) == [
        (TABLE, "id", None, "09:00", None, None, None),
        (TABLE, "note", None, "10:00", "11:00", "REMOVED", "ann"),
        (DS, "email", True, "11:00", "13:00", "ENTITY_DELETED", "ops"),
        (DS, "id", False, "10:00", "12:00", "REMOVED", "bob"),
        (DS, "mail", True, "10:00", "11:00", "RENAMED", "urn:li:corpuser:jdoe"),
    ]
    assert rows(built.filter("field_path = 'email'"), "field_urn") == [(field("email"),)]
    assert_interval_invariants(built, ["source", "dataset_urn", "field_path"])


# "DEPRECATION MODIFY: status = DEPRECATED | ACTIVE" (the sample's modifier is "DEPRECATED")
@pytest.mark.parametrize("check", ["built", pytest.param("incremental", marks=pytest.mark.slow)])
def test_deprecation_is_one_interval_per_deprecated_period(sources, check):
    batch = sources(
        datahub=[
            dh("d1", "10:00", "DEPRECATION", "MODIFY", modifier="DEPRECATED", status="DEPRECATED"),
            dh("d2", "10:30", "DEPRECATION", "MODIFY", modifier="DEPRECATED"),  # a new note: still deprecated
            dh("d3", "11:00", "DEPRECATION", "MODIFY", modifier="ACTIVE", status="ACTIVE", actor="bob"),
            dh("d4", "12:00", "DEPRECATION", "MODIFY", modifier="DEPRECATED", status="DEPRECATED"),
            dh("d5", "13:00", "LIFECYCLE", "HARD_DELETE"),
        ]
    )
    job = deprecation_timeline.SPEC
    if check == "incremental":
        return assert_every_path_equals_full(job, batch, ["d1", "d4"], ["d1", "d2"])
    built = build_all(job, only(job, batch))
    assert rows(built, "valid_from", "valid_to", "is_current", "deprecated_by", "end_reason") == [
        ("10:00", "11:00", False, "urn:li:corpuser:jdoe", "REMOVED"),
        ("12:00", "13:00", False, "urn:li:corpuser:jdoe", "ENTITY_DELETED"),
    ]
    assert_interval_invariants(built, ["source", "entity_urn"])


# "STRUCTURED_PROPERTY ADD/REMOVE/MODIFY: propertyUrn, propertyValues (JSON-encoded list; newer
# servers may omit it)"
@pytest.mark.parametrize("check", ["built", pytest.param("incremental", marks=pytest.mark.slow)])
def test_structured_property_values_over_time(sources, check):
    tier = "urn:li:structuredProperty:tier"
    batch = sources(
        datahub=[
            dh("p1", "10:00", "STRUCTURED_PROPERTY", "ADD", propertyUrn=tier, propertyValues=["bronze"]),
            dh("p2", "11:00", "STRUCTURED_PROPERTY", "MODIFY", propertyUrn=tier, propertyValues=["gold"]),
            dh("p3", "12:00", "STRUCTURED_PROPERTY", "REMOVE", propertyUrn=tier),  # values omitted
            dh("p4", "13:00", "STRUCTURED_PROPERTY", "ADD", modifier=tier),
        ]
    )
    job = structured_property_timeline.SPEC
    if check == "incremental":
        return assert_every_path_equals_full(job, batch, ["p1", "p3"], ["p1", "p2"])
    built = build_all(job, only(job, batch))
    assert rows(built, "property_urn", "property_values", "valid_from", "valid_to", "is_current") == [
        (tier, None, "13:00", None, True),
        (tier, '["bronze"]', "10:00", "11:00", False),
        (tier, '["gold"]', "11:00", "12:00", False),
    ]
    assert_interval_invariants(built, ["source", "entity_urn", "property_urn"])


# DOCUMENTATION "description (or documentation + sourceDetails on newer servers); institutional-memory
# links carry no parameters, the modifier is the URL"; OpenMetadata `columns.<column>.description`.
def test_documentation_history_keeps_every_text(sources):
    batch = sources(
        datahub=[
            dh("x1", "10:00", "DOCUMENTATION", "ADD", description="Orders."),
            dh("x2", "11:00", "DOCUMENTATION", "MODIFY", documentation="All orders."),
            dh("x3", "11:30", "DOCUMENTATION", "ADD", modifier="https://wiki/orders"),
        ],
        fields=[
            dict(event_id="f1", event_time="12:00", entity_key=TABLE, entity_fqn="shop.db.orders", actor="ann",
                 change_kind="updated", field_name="columns.email.description", field_base="description",
                 column_name="email", old_value='"old"', new_value='"Customer e-mail"'),
        ],
        events=[om("o1", "09:00", "entityCreated", entity=json.dumps({"description": "Shop orders"}))],
    )  # fmt: skip
    job = documentation_history.SPEC
    built = build_all(job, only(job, batch))
    assert rows(built, "entity_urn", "parent_urn", "changed_at", "operation", "value") == [
        ("openmetadata:column:shop.db.orders.email", TABLE, "12:00", "MODIFY", "Customer e-mail"),
        (TABLE, None, "09:00", "ADD", "Shop orders"),
        (DS, None, "10:00", "ADD", "Orders."),
        (DS, None, "11:00", "MODIFY", "All orders."),
        (DS, None, "11:30", "ADD", "https://wiki/orders"),
    ]


# "Versions are Major.Minor from 0.1 (+0.1 compatible, +1.0 incompatible)"; "When entity version
# is not changed, previousVersion is same as currentVersion."
@pytest.mark.parametrize("check", ["built", pytest.param("incremental", marks=pytest.mark.slow)])
def test_entity_versions_list_what_each_version_changed(sources, check):
    def changed(event_id, time, previous, current, **lists):
        description = {k: [{"name": n} for n in v] for k, v in lists.items()}
        return om(event_id, time, "entityUpdated", previous_version=previous, current_version=current,
                  change_description=json.dumps(description))  # fmt: skip

    batch = sources(
        events=[
            om("v1", "10:00", "entityCreated", previous_version=0.1, current_version=0.1),
            changed("v2", "11:00", 0.1, 0.2, fieldsAdded=["tags"], fieldsUpdated=["description"]),
            changed("v3", "11:05", 0.2, 0.2, fieldsUpdated=["description"]),  # no new version
            changed("v4", "12:00", 0.2, 1.2, fieldsDeleted=["columns"]),
        ]
    )
    job = entity_versions.SPEC
    if check == "incremental":
        return assert_incremental_equals_full(job, *split(job, batch, ["v1", "v4"]))
    built = build_all(job, only(job, batch))
    columns = (
        "version",
        "previous_version",
        "changed_at",
        "fields_added",
        "fields_updated",
        "fields_deleted",
    )
    assert rows(built, *columns) == [
        (0.1, None, "10:00", [], [], []),
        (0.2, 0.1, "11:05", ["tags"], ["description"], []),
        (1.2, 0.2, "12:00", [], [], ["columns"]),
    ]


# "instance-status-changes status: 1 not run, 2 waiting for scheduled time, 3 waiting for
# resources, 4 running, 5 failed, 6 succeeded, 7 sent to data quality, 8 checking branch conditions"
@pytest.mark.parametrize("check", ["built", pytest.param("incremental", marks=pytest.mark.slow)])
def test_instance_runs_and_node_reliability(sources, check):
    def status(event_id, time, task, code, node=100, **times):
        return dict(event_id=event_id, event_time=time, event_code="instance-status-changes", project_id=9,
                    task_id=task, node_id=node, dag_id=7, status=code, **times)  # fmt: skip

    batch = sources(
        dataworks=[
            status("i1", "10:00", 1, 1),
            status("i2", "10:05", 1, 4, begin_running_time="10:05"),
            status("i3", "10:20", 1, 6, begin_running_time="10:05", finish_time="10:20"),
            status("j1", "11:00", 2, 4),
            status("j2", "11:30", 2, 5, finish_time="11:30"),
            status("k1", "12:00", 3, 4),  # still running
            status("m1", "2026-01-02 01:00", 4, 5, node=200, finish_time="2026-01-02 01:00"),
        ]
    )
    runs_job = dataworks_instance_runs.SPEC
    daily_job = dataworks_node_reliability_daily.SPEC
    if check == "incremental":
        for job in (runs_job, daily_job):
            assert_incremental_equals_full(job, *split(job, batch, ["i1", "i3", "j1"]))
        return
    runs = build_all(runs_job, only(runs_job, batch))
    columns = ("instance_id", "started_at", "finished_at", "duration_seconds", "final_status_name",
               "status_changes", "is_finished")  # fmt: skip
    assert rows(runs, *columns) == [
        (1, "10:05", "10:20", 900.0, "SUCCESS", 3, True),
        (2, "11:00", "11:30", 1800.0, "FAILURE", 2, True),
        (3, "12:00", None, None, "RUNNING", 1, False),
        (4, None, "01:00", None, "FAILURE", 1, True),
    ]
    daily = build_all(daily_job, only(daily_job, batch))
    assert [(r.node_id, str(r.event_date), r.runs, r.succeeded, r.failed, r.failure_rate) for r in
            daily.orderBy("node_id").collect()] == [
        (100, "2026-01-01", 2, 1, 1, 0.5),
        (200, "2026-01-02", 1, 0, 1, 1.0),
    ]  # fmt: skip
