"""silver.dataworks_events on EventBridge CloudEvents, Function Compute messages and doc samples."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from pyspark.sql import functions as F

from pipelines.core.table_specs import ERRORS_COLUMN
from silver import dataworks_events
from silver.common import deterministic_id
from tests.support.tables import INGESTED_AT, LANDED_AT, bronze_frame

UTC = dt.timezone.utc

INSTANCE_STATUS = {
    "datacontenttype": "application/json;charset=utf-8",
    "data": {
        "beginWaitTimeTime": 1652700576000,
        "dagId": 446555330,
        "dagType": 0,
        "eventCode": "instance-status-changes",
        "taskType": 0,
        "modifyTime": 1652700577000,
        "createTime": 1652543233000,
        "appId": 302112,
        "tenantId": 235454100432001,
        "nodeId": 1002698219,
        "taskId": 4532688169,
        "status": 3,
    },
    "id": "539fd8f4-4ea1-4625-aa8b-6c9066741234",
    "source": "acs.dataworks",
    "specversion": "1.0",
    "subject": "",
    "time": "2020-11-19T21:04:41+08:00",
    "type": "dataworks:InstanceStatusChanges:InstanceStatusChanges",
    "aliyunaccountid": "1234567890981234",
    "aliyunpublishtime": "2020-11-19T21:04:42.179PRC",
    "aliyuneventbusname": "default",
    "aliyunregionid": "cn-hangzhou",
    "aliyunpublishaddr": "172.25.0.1",
}

# A Function Compute delivery: bronze keeps the messageBody as the record and the rest as `container`.
FC_WRAPPER = {
    "blockBusiness": True,
    "eventCategoryType": "resources-upload",
    "eventType": "upload-data-to-table",
    "extensionBizId": "job_6603000070",
    "messageId": "52d44ee7-b51f-4d4d-afeb-000000000001",
}
FC_BODY = {
    "tenantId": "283780000010656",
    "uploadSourceType": "LOCAL",
    "operatorUid": "1222222000",
    "tableGuid": "odps.mc_project.test_table",
    "queryDwProjectId": "90004",
    "fileSize": 123456,
    "id": 5280,
}

# A documentation sample: no envelope, masked project id.
DOC_SAMPLE = {
    "datacontenttype": "application/json;charset=utf-8",
    "data": {
        "eventCode": "expired-task-instances-deleted",
        "deletedTaskInstanceIds": [524000035],
        "appId": 307303,
        "tenantId": 28000656,
        "projectId": "9***4",
        "blockBusiness": False,
        "owner": "1107000538",
        "operationTime": 1734505954897,
    },
}


def utc(value: dt.datetime) -> dt.datetime:
    """A collected timestamp (naive, Python's local zone) as an aware UTC datetime."""
    return value.astimezone(UTC)


def one(spark, record, **kwargs):
    return dataworks_events.transform(bronze_frame(spark, [record], **kwargs)).collect()[0]


@pytest.fixture(scope="module")
def cloud_event(spark):
    return one(spark, INSTANCE_STATUS)


@pytest.fixture(scope="module")
def fc_message(spark):
    return one(spark, FC_BODY, container=json.dumps(FC_WRAPPER))


def test_cloud_event_envelope(cloud_event):
    row = cloud_event
    assert row.delivery == "eventbridge"
    assert row.cloud_event_id == INSTANCE_STATUS["id"]
    assert (row.source, row.spec_version, row.subject) == ("acs.dataworks", "1.0", "")
    assert (row.type, row.category, row.action) == (
        "dataworks:InstanceStatusChanges:InstanceStatusChanges",
        "InstanceStatusChanges",
        "InstanceStatusChanges",
    )
    assert row.event_code == "instance-status-changes"
    assert row.family == "silver.dataworks_instance_status_changes"
    assert row.extension_point is False
    assert (row.tenant_id, row.project_id) == (235454100432001, 302112)
    assert (row.aliyun_account_id, row.aliyun_region_id, row.aliyun_event_bus_name) == (
        "1234567890981234",
        "cn-hangzhou",
        "default",
    )
    assert json.loads(row.data)["status"] == 3
    assert row[ERRORS_COLUMN] == []


def test_time_with_offset_is_converted_to_utc(cloud_event):
    assert utc(cloud_event.event_time) == dt.datetime(2020, 11, 19, 13, 4, 41, tzinfo=UTC)
    assert cloud_event.event_date == dt.date(2020, 11, 19)
    assert utc(cloud_event.aliyun_publish_time) == dt.datetime(2020, 11, 19, 13, 4, 42, 179000, tzinfo=UTC)


def test_cloud_event_id_is_hashed(spark, cloud_event):
    expected = spark.range(1).select(deterministic_id(F.lit("dataworks"), F.lit(INSTANCE_STATUS["id"])))
    assert cloud_event.event_id == expected.first()[0]


def test_the_identity_is_source_and_id_and_dataworks_own_events_keep_their_ids(spark, cloud_event):
    other = {**INSTANCE_STATUS, "source": "acs.eventbridge.test"}
    sourceless = {k: v for k, v in INSTANCE_STATUS.items() if k != "source"}
    rows = dataworks_events.transform(bronze_frame(spark, [INSTANCE_STATUS, other, sourceless])).collect()
    ids = {row.source: row.event_id for row in rows}
    legacy = (
        spark.range(1).select(deterministic_id(F.lit("dataworks"), F.lit(INSTANCE_STATUS["id"]))).first()[0]
    )
    with_source = spark.range(1).select(
        deterministic_id(F.lit("dataworks"), F.lit("acs.eventbridge.test"), F.lit(INSTANCE_STATUS["id"]))
    )
    assert ids == {"acs.dataworks": legacy, None: legacy, "acs.eventbridge.test": with_source.first()[0]}
    assert cloud_event.event_id == legacy  # the id a warehouse built before holds


def test_function_compute_message(fc_message):
    row = fc_message
    assert row.delivery == "function_compute"
    assert row.cloud_event_id == FC_WRAPPER["messageId"]  # not the payload's own `id`
    assert row.event_code == "upload-data-to-table"  # from the FC eventType: the body has no eventCode
    assert (row.category, row.action) == ("ResourcesUpload", "UploadDataToTable")
    assert row.type is None and row.source is None
    assert (row.tenant_id, row.project_id, row.operator) == (283780000010656, 90004, "1222222000")
    assert (row.fc_event_category, row.extension_biz_id, row.block_business) == (
        "resources-upload",
        "job_6603000070",
        True,
    )
    assert row.extension_point is True
    assert json.loads(row.data) == FC_BODY
    assert row.event_time_source == "source_modified_at"  # nothing else to take it from
    assert row[ERRORS_COLUMN] == []


def test_function_compute_message_still_wrapped(spark):
    row = one(spark, {**FC_WRAPPER, "messageBody": {**FC_BODY, "eventCode": "upload-data-to-table"}})
    assert row.delivery == "function_compute"
    assert row.cloud_event_id == FC_WRAPPER["messageId"]
    assert json.loads(row.data)["tableGuid"] == "odps.mc_project.test_table"


def test_masked_project_id_is_an_error(spark):
    row = one(spark, DOC_SAMPLE)
    assert row.project_id is None
    assert row[ERRORS_COLUMN] == ["cast:data.projectId"]
    assert row.tenant_id == 28000656


def test_doc_sample_without_envelope(spark):
    row = one(spark, DOC_SAMPLE)
    again = one(spark, DOC_SAMPLE, source_file="/landing/elsewhere.json")
    assert row.delivery == "eventbridge" and row.cloud_event_id is None
    assert row.event_id == again.event_id and len(row.event_id) == 64
    assert row.event_code == "expired-task-instances-deleted"
    assert row.family == "silver.dataworks_instance_operations"
    assert (row.category, row.action) == ("InstanceChange", "ExpiredTaskInstancesDeleted")
    assert utc(row.event_time) == dt.datetime(2024, 12, 18, 7, 12, 34, 897000, tzinfo=UTC)  # operationTime


def test_masked_tenant_and_missing_time(spark):
    record = {"data": {"eventCode": "delete-project", "projectId": 707, "tenantId": "2807****0784"}}
    row = one(spark, record)
    assert (row.tenant_id, row.project_id, row.event_time) == (None, 707, None)
    assert row[ERRORS_COLUMN] == ["cast:data.tenantId"]


def test_event_code_derived_from_type(spark):
    start = {**INSTANCE_STATUS, "type": "dataworks:NodeChange:StartDiJob", "data": {"tenantId": 1}}
    unknown = {**INSTANCE_STATUS, "id": "other", "type": "dataworks:NewThing:SomethingHappened", "data": {}}
    rows = {
        row.cloud_event_id: row
        for row in dataworks_events.transform(bronze_frame(spark, [start, unknown])).collect()
    }
    assert rows[INSTANCE_STATUS["id"]].event_code == "start-diJob"
    assert rows[INSTANCE_STATUS["id"]].family == "silver.dataworks_di_job_starts"
    assert rows["other"].event_code == "something-happened"
    assert (rows["other"].family, rows["other"].extension_point) == (None, None)
    assert (rows["other"].category, rows["other"].action) == ("NewThing", "SomethingHappened")


def test_alias_in_doc_sample(spark):
    record = {"data": {"eventType": "approval-create-before", "operator": "19000735", "projectId": 20000}}
    row = one(spark, record)
    assert row.event_code == "approval-change-before-create"
    assert row.type is None and row.category == "ApprovalChange"


def test_bad_time_is_an_error(spark):
    row = one(spark, {**INSTANCE_STATUS, "time": "last tuesday"})
    assert row[ERRORS_COLUMN] == ["cast:time"]
    assert utc(row.event_time) == dt.datetime.fromtimestamp(1652700577, UTC)  # falls back to modifyTime


def test_corrupt_rows_are_kept_with_errors(spark):
    rows = dataworks_events.transform(bronze_frame(spark, ["{oops", INSTANCE_STATUS])).collect()
    corrupt = [row for row in rows if row.event_code is None]
    assert len(rows) == 2 and len(corrupt) == 1
    assert corrupt[0][ERRORS_COLUMN] == ["bronze_corrupt:malformed JSON"]
    assert corrupt[0].event_id is not None and corrupt[0].raw == "{oops"


def test_function_compute_message_without_any_time_uses_the_landing_file_time(fc_message):
    """The file's modification time, not the run's: every warehouse must agree on event_time."""
    assert fc_message.event_time_source == "source_modified_at"
    assert utc(fc_message.event_time) == LANDED_AT


def test_function_compute_message_ingested_before_file_times_uses_the_run_time(spark):
    row = one(spark, FC_BODY, container=json.dumps(FC_WRAPPER), source_modified_at=None)
    assert (row.event_time_source, utc(row.event_time)) == ("ingested_at", INGESTED_AT)
    older_bronze = bronze_frame(spark, [FC_BODY], container=json.dumps(FC_WRAPPER)).drop("source_modified_at")
    (row,) = dataworks_events.transform(older_bronze).collect()
    assert (row.event_time_source, utc(row.event_time)) == ("ingested_at", INGESTED_AT)


def test_time_source_names_where_the_time_came_from(cloud_event, spark):
    assert cloud_event.event_time_source == "envelope"
    assert one(spark, DOC_SAMPLE).event_time_source == "payload"
    missing = one(spark, {"data": {"eventCode": "delete-project", "projectId": 7}})
    assert (missing.event_time, missing.event_time_source) == (None, None)
