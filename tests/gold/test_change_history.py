"""Change history: one row per change from DataHub, OpenMetadata and DataWorks."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import functions as F

from gold import change_history
from tests.support.gold import assert_incremental_equals_full, build_all, rows, source

DH = "silver.datahub_entity_changes"
AR = "silver.datahub_action_requests"
OM_FIELDS = "silver.openmetadata_field_changes"
OM_EVENTS = "silver.openmetadata_change_events"
DW = "silver.dataworks_events"
DS = "urn:li:dataset:abc"
TABLE = "openmetadata:table:shop.db.orders"


def sources(spark, **records):
    return {
        name: source(spark, name, *records.get(name.split(".")[1], ())) for name in change_history.SOURCES
    }


def sample(spark):
    return sources(
        spark,
        datahub_entity_changes=[
            dict(event_id="h1", event_time="10:00", entity_urn=DS, entity_type="dataset", category="TAG",
                 operation="ADD", modifier="urn:li:tag:PII", actor="ann", parameters={"tagUrn": "urn:li:tag:PII"}),
        ],
        datahub_action_requests=[
            dict(event_id="h2", event_time="10:01", proposal_urn="urn:li:actionRequest:1", operation="CREATE",
                 actor="ann", action_request_type="TAG_ASSOCIATION", parameters={"resourceUrn": DS}),
        ],
        openmetadata_field_changes=[
            dict(event_id="o1", event_time="10:02", change_event_id="o-ev", entity_key=TABLE, entity_type="table",
                 entity_fqn="shop.db.orders", actor="bob", change_kind="updated",
                 field_name="columns.email.description", field_base="description", column_name="email",
                 old_value="old", new_value="new"),
        ],
        openmetadata_change_events=[
            dict(event_id="o-ev", event_time="10:02", event_type="entityUpdated", entity_key=TABLE,
                 entity_type="table", actor="bob",
                 change_description=json.dumps({"fieldsUpdated": [{"name": "columns.email.description"}]})),
            dict(event_id="o2", event_time="10:03", event_type="entityDeleted", entity_key=TABLE,
                 entity_type="table", actor="bob", change_description=None),
        ],
        dataworks_events=[
            dict(event_id="w1", event_time="10:04", type="dataworks:InstanceStatusChanges:InstanceStatusChanges",
                 event_code="instance-status-changes", category="InstanceStatusChanges",
                 action="InstanceStatusChanges", project_id=94, operator=None,
                 data=json.dumps({"taskId": 453169, "nodeId": 100219, "dagId": 446330, "status": 5})),
            dict(event_id="w2", event_time="10:05", type="dataworks:TableChange:CommitTable",
                 event_code="commit-table", category="TableChange", action="CommitTable", project_id=94,
                 operator="19735", data=json.dumps({"tableName": "t1", "maxComputeProject": "p1"})),
        ],
    )  # fmt: skip


def test_rows_from_all_sources(spark):
    built = build_all(change_history.SPEC, sample(spark))
    assert tuple(built.columns) == change_history.COLUMNS
    assert rows(built, "change_id", "source", "entity_urn", "parent_urn", "entity_type", "category", "operation") == [
        ("h1", "datahub", DS, None, "dataset", "TAG", "ADD"),
        ("h2", "datahub", "urn:li:actionRequest:1", None, "actionRequest", "LIFECYCLE", "CREATE"),
        ("o1", "openmetadata", "openmetadata:column:shop.db.orders.email", TABLE, "column", "DOCUMENTATION", "MODIFY"),
        ("o2", "openmetadata", TABLE, None, "table", "LIFECYCLE", "HARD_DELETE"),
        ("w1", "dataworks", "dataworks:instance:453169", None, "instance", "InstanceStatusChanges",
         "InstanceStatusChanges"),
        ("w2", "dataworks", "dataworks:table:p1.t1", None, "table", "TableChange", "CommitTable"),
    ]  # fmt: skip
    details = dict(rows(built, "change_id", "details"))
    assert details["h1"] == {"tagUrn": "urn:li:tag:PII"}
    assert details["o1"]["old_value"] == "old" and details["o1"]["new_value"] == "new"
    assert details["w1"]["status"] == "5" and details["w1"]["status_name"] == "FAILURE"


def test_a_proposal_sharing_an_entity_changes_id_yields_to_the_change(spark):
    """A DataHub id does not hash `entityType`: the one way two sources can share an id."""
    change = dict(
        event_id="same",
        event_time="10:00",
        entity_urn=DS,
        entity_type="dataset",
        category="TAG",
        operation="ADD",
        modifier="urn:li:tag:PII",
        actor="ann",
    )
    proposal = dict(
        event_id="same",
        event_time="10:00",
        proposal_urn="urn:li:actionRequest:1",
        operation="ADD",
        actor="ann",
        action_request_type="TAG_ASSOCIATION",
    )
    other = dict(proposal, event_id="h2", proposal_urn="urn:li:actionRequest:2")
    batch = sources(spark, datahub_entity_changes=[change], datahub_action_requests=[proposal, other])

    built = build_all(change_history.SPEC, batch)

    assert rows(built, "change_id", "entity_urn") == [("h2", "urn:li:actionRequest:2"), ("same", DS)]


@pytest.mark.slow  # builds three times
def test_incremental_equals_full(spark):
    batch = sample(spark)
    first = {name: df.filter("event_id < 'o'") for name, df in batch.items()}
    second = {name: df.filter("event_id >= 'o'") for name, df in batch.items()}
    assert_incremental_equals_full(change_history.SPEC, first, second)


def test_dataworks_fields_parsed_once_read_like_get_json_object(spark):
    """The one-pass parse of `data` gives, for every path the DataWorks rows read, what
    `get_json_object` gives: numbers, booleans, objects, arrays, escapes, masked ids, broken JSON."""
    data = [
        '{"nodeId": 12345678901234, "status": 6, "target": {"tableGuid": "odps.p.t"}, "ruleId": 1.50}',
        '{"fileName": "a\\"b\\u00e9", "checkResult": true, "tableName": null, "projectId": "p1"}',
        '{"taskId": "9***4", "dagName": ["x", {"y": 1}], "fileVersion": {"v": 2}, "target": "flat"}',
        '{ "target" : { "tableGuid" : "g1" , "other": [1] } , "status": "5" }',
        '{"nodeId": 1, // a comment from the doc sample\n}',
        "[1, 2]",
        None,
    ]
    frame = spark.createDataFrame([(text,) for text in data], "data string")
    parsed, field = change_history._with_data_fields(frame)
    paths = change_history._dataworks_paths()
    assert any("." in path[2:] for path in paths), "a nested path is among them"
    expected = frame.select(*[F.get_json_object("data", path).alias(path) for path in paths])
    actual = parsed.select(*[field(path).alias(path) for path in paths])
    assert [tuple(r) for r in actual.collect()] == [tuple(r) for r in expected.collect()]


def test_pre_events_are_flagged_not_completed_changes(spark):
    """ "Pre* events are blocking extension points (before the operation); the others are sent
    after it." A pre-event whose payload says `blockBusiness: false` holds nothing back."""
    batch = sources(
        spark,
        dataworks_events=[
            dict(event_id="p1", event_time="10:00", event_code="pre-freeze-instance",
                 data=json.dumps({"taskIds": [7], "blockBusiness": True})),
            dict(event_id="p2", event_time="10:01", event_code="commit-file",
                 data=json.dumps({"fileId": 3, "blockBusiness": False})),
            dict(event_id="p3", event_time="10:02", event_code="freeze-instance",
                 data=json.dumps({"taskIds": [7]})),
            dict(event_id="p4", event_time="10:03", event_code="pre-kill-instance",
                 data=json.dumps({"taskIds": [7], "blockBusiness": False})),
        ],
        datahub_entity_changes=[
            dict(event_id="h1", event_time="10:00", entity_urn=DS, category="TAG", operation="ADD", actor="ann")
        ],
    )  # fmt: skip
    built = build_all(change_history.SPEC, batch)
    assert rows(built, "change_id", "entity_urn", "is_pre_event", "blocking") == [
        ("h1", DS, False, False),
        ("p1", "dataworks:instance:7", True, True),
        ("p2", "dataworks:file:3", True, False),
        ("p3", "dataworks:instance:7", False, False),
        ("p4", "dataworks:instance:7", True, False),
    ]
