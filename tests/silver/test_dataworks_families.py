"""DataWorks family tables on the doc's sample payloads (dataworks-event-list-and-message-formats.zh.md).

Masked ids of the samples (`9***4`) are replaced by numbers, except where a test
wants the masked value. Input rows have the columns of silver.dataworks_events.
"""

from __future__ import annotations

import datetime as dt
import importlib
import json

import pytest
from pyspark.sql import functions as F

from pipelines.quality import suites as quality
from silver import dataworks_catalog as catalog
from silver.dataworks_families import Family, family_transform

UTC = dt.timezone.utc
EVENT_TIME = dt.datetime(2024, 9, 12, 6, 0, tzinfo=UTC)
MAPPINGS_5679 = [
    {
        "srcTable": f"xb_test_{n}",
        "dstDatasourceName": "odps_first",
        "srcDatabaseName": "xiaobo_sharding_79fz",
        "srcDatasourceName": "mysql_3357_pub_ip_1",
        "dstTable": f"ods_xb_test_{n}",
    }
    for n in (116, 117, 118, 135)
]
MAPPINGS_5777 = [
    {
        "srcTable": name,
        "dstDatasourceName": "molin_db",
        "srcDatabaseName": "di_test",
        "srcDatasourceName": "mysql_public",
        "dstTable": name,
    }
    for name in ("test_verify1", "test_verify1_dst", "mysql_0_timetest2")
]
SAMPLES: dict[str, dict] = {
    "node_created": {
        "nodeName": "ods_orders",
        "programType": "ODPS_SQL",
        "cronExpress": "00 04 00 * * ?",
        "blockBusiness": False,
        "schedulerType": "NORMAL",
        "ownerId": "190000735",
        "priority": 1,
        "baselineId": 70000287,
        "operator": "190000735",
        "eventCode": "node-change-created",
        "repeatability": True,
        "modifyTime": 1720753730864,
        "createTime": 1720753730864,
        "tenantId": 28000656,
        "nodeId": 70000003,
        "projectId": 90004,
    },
    "commit_file": {
        "fileName": "ods_orders.sql",
        "extensionBizId": "eb0000009ce",
        "changeType": "0",
        "blockBusiness": False,
        "dataSourceName": "0_odps_engine",
        "operator": "190000735",
        "eventCode": "commit-file",
        "fileCreateTime": "2024-07-12 11:08:50",
        "tenantId": 28000656,
        "fileOwner": "190000735",
        "fileVersion": 1,
        "projectId": 90004,
        "fileType": 10,
        "fileId": 50000830,
        "resourceType": 1,
    },
    "commit_table": {
        "eventCode": "commit-table",
        "operator": "190000735",
        "projectId": 1200056,
        "tenantId": 28000656,
        "extensionBizId": "1200056",
        "tableName": "table1",
        "tableType": "ODPS",
        "maxComputeProject": "project1",
    },
    "start_di_v1": {
        "eventCode": "start-diJob",
        "extensionBizId": "0a40000b8ae",
        "extensionBizName": "sync_mysql_to_odps_20240726_192307",
        "appId": 293624,
        "showTableMapping": True,
        "tenantId": 28000656,
        "blockBusiness": True,
        "id": 5280,
        "projectId": 90004,
        "tableMapping": MAPPINGS_5679,
        "operator": "1504650005316516",
    },
    "start_di_unmapped": {
        "eventCode": "start-diJob",
        "jobId": 5502,
        "forceRun": False,
        "extensionBizId": "f4c0007cbc",
        "extensionBizName": "sync_mysql_to_holo_20240412_213634",
        "appId": 330914,
        "showTableMapping": False,
        "tenantId": 28000656,
        "blockBusiness": True,
        "startAsV2": False,
        "operator": "190000735",
        "setting": {
            "lastStartPosition": "2024-04-12 22:07:02",
            "startDateTime": "2024-09-10 17:00:00",
            "timeZone": "Asia/Shanghai",
        },
    },
    "batch_start_di": {
        "needErrorMessage": False,
        "extensionBizId": "2de000c4c6",
        "extensionBizName": "sync_mysql_to_holo_20240911_170801,sync_mysql_to_odps_20240726_192307",
        "errorMessageOnlyFailedFileIds": False,
        "blockBusiness": True,
        "env": "prod",
        "operator": "150000516",
        "setting": {"startDateTime": "2024-09-12 14:00:00", "timeZone": "Asia/Shanghai"},
        "jobIds": [5777, 5679],
        "eventCode": "batch-start-diJob",
        "tableMappings": [
            {
                "extensionBizName": "sync_mysql_to_holo_20240911_170801",
                "id": 5777,
                "tableMapping": MAPPINGS_5777,
            },
            {
                "extensionBizName": "sync_mysql_to_odps_20240726_192307",
                "id": 5679,
                "tableMapping": MAPPINGS_5679,
            },
        ],
        "appId": 293624,
        "showTableMapping": True,
        "tenantId": 52000018,
        "projectId": 90004,
    },
    "freeze_node": {
        "eventCode": "freeze-node",
        "operator": "190000735",
        "projectId": 1200056,
        "tenantId": 28000656,
        "nodeIds": [1, 2, 3],
        "extensionBizId": "1200056",
    },
    "backfill": {
        "excludeNodeIds": [],
        "rootNodeId": 10000271,
        "startFutureInstanceImmediately": False,
        "useMultipleTimePeriods": True,
        "operator": "190000735",
        "eventCode": "backfill-data",
        "multipleTimePeriods": '[{"bizBeginTime":"2022-04-17","bizEndTime":"2022-04-17"}]',
        "parallelGroup": 1,
        "rootNodeProjectId": 1200008,
        "isParallel": False,
        "name": "P_fff_20220418_215404",
        "tenantId": 1693500003377,
        "includeNodeIds": [10000271],
        "projectId": 90004,
        "order": "asc",
        "extensionBizId": "1200056",
    },
    "instance_failed": {
        "beginWaitTimeTime": 1652700576000,
        "dagId": 446000330,
        "dagType": 0,
        "eventCode": "instance-status-changes",
        "taskType": 0,
        "modifyTime": 1652700577000,
        "createTime": 1652543233000,
        "appId": 300002,
        "tenantId": 235454000432001,
        "opCode": 31,
        "flowId": 1,
        "nodeId": 100000219,
        "beginWaitResTime": 1652700577000,
        "taskId": 453000169,
        "status": 5,
    },
    "freeze_instance": {
        "eventCode": "freeze-instance",
        "operator": "190000735",
        "projectId": 1200008,
        "projectType": "PROD",
        "taskIds": [5230009736],
        "tenantId": 28000656,
    },
    "expired_instances": {
        "eventCode": "expired-task-instances-deleted",
        "deletedTaskInstanceIds": [524000035, 524000498, 524000637],
        "appId": 307303,
        "tenantId": 28000656,
        "blockBusiness": False,
        "owner": "1107000538",
        "operationTime": 1734505954897,
    },
    "dag_succeeded": {
        "bizDate": "2022-11-07 00:00:00",
        "createTime": "2022-11-08 10:56:32",
        "dagId": 500358972116,
        "dagName": "P_test_spark_true_copy_20221108_105631",
        "eventCode": "dag-status-changes",
        "dagType": 3,
        "flowId": 1,
        "flowName": "ATCLOUD_FLOW",
        "operator": "110000538",
        "projectEnv": "PROD",
        "projectId": 2500063,
        "status": 6,
        "tenantId": 52000736,
    },
    "sla_alert": {
        "eventCode": "workbench-monitor-alert",
        "alarmType": "SLA_ALERT",
        "baselineId": 137000723,
        "baselineName": "ods层check任务专用 -- 小时级",
        "baselineStatus": 3,
        "bizDate": 1654444800000,
        "inGroupId": 14,
        "nodeId": 10000008734,
        "projectId": 7600034,
        "taskId": 30700003778,
        "tenantId": 28000656,
    },
    "remind_alert": {
        "alarmType": "REMIND_ALERT",
        "nodeIds": "10000005472,10000005473,10000005474",
        "projectId": 90004,
        "remindId": 7605,
        "remindName": "出错报警",
        "remindType": "ERROR",
        "remindUnit": "NODE",
        "taskIds": "30700000896,30700000870,30700000855",
        "tenantId": 28000656,
    },
    "approval_created": {
        "appId": 194209,
        "assignee": "286098539641742899",
        "assigneeName": "yupeng.sunyp",
        "createTime": 1652094363000,
        "eventType": "approval",
        "process": {
            "applicant": "286098539641742899",
            "applicantName": "yupeng.sunyp",
            "approvalContent": {
                "applyPeriod": "2997964800000",
                "applyReason": "测试",
                "arrayData": [
                    {
                        "ownerBaseId": "182200045",
                        "objectType": "TABLE",
                        "odpsTable": "loghub_070103",
                        "envType": 1,
                        "projectGuid": "odps.b_mc1",
                        "objectGuid": "odps.b_mc1.loghub_070103",
                        "tenantId": 28000656,
                        "objectName": "loghub_070103",
                        "ownerAccountName": "ALIYUN$owner",
                        "odpsProject": "B_MC1",
                        "projectName": "B_MC1",
                        "actions": ["Select", "Describe"],
                        "projectId": 90004,
                        "workspaceId": "90004",
                    }
                ],
                "contentType": "application/json",
                "granteeAccounts": [
                    {
                        "granteeId": "286098500099",
                        "granteeTypeSub": 103,
                        "granteeType": 1,
                        "granteeName": "RAM$dataworks_3h1_1:yupeng.sunyp",
                    },
                    {
                        "granteeId": "237857631119109360",
                        "granteeTypeSub": 105,
                        "granteeType": 1,
                        "granteeName": "RAM$dataworks_3h1_1:dev",
                    },
                ],
                "odpsProjectName": "B_MC1",
                "projectEnv": "1",
                "resourceSummary": "loghub_070103",
                "tenantId": 28000656,
                "workspaceId": 194209,
            },
            "assignmentCategory": "MaxCompute",
            "createTime": 1652094363000,
            "processDefinitionId": "definition-3dcc9ce7-d29d-435d-a908-60d4355ff5e2",
            "processId": "528535869984706",
            "status": "Pending",
            "title": "MaxComputeTable",
            "updateTime": 1652094363000,
        },
        "processId": "528535869984706",
        "status": "Submit",
        "eventCode": "approval-change-created",
        "taskId": "528535870015424",
        "tenantId": 28000656,
        "updateTime": 1652094364000,
    },
    "table_permission_request": {
        "eventType": "approval-create-before",
        "operator": "190000735",
        "order": {
            "applyReason": "测试",
            "deadlineDate": "1",
            "deadlineType": "month",
            "granteeObjectList": [{"granteeId": "123900008872"}],
            "projectMeta": {
                "envCode": 1,
                "labelSecurity": False,
                "objectMetaList": [
                    {"action": ["Select", "Describe"], "name": "tablei", "projectGuid": "odps.d11aa"}
                ],
                "projectId": 200000,
                "projectName": "d11aa",
            },
        },
        "projectId": 200000,
        "tenantId": 556400006465,
    },
    "dq_finished": {
        "projectId": 90004,
        "tenantId": 28000656,
        "id": 52177000,
        "taskId": "16710007a6",
        "entityId": 1562000,
        "ruleId": 28610334,
        "property": "-",
        "bizdate": "2023-02-09 00:00:00",
        "dateType": "YMD",
        "actualExpression": "ds=20230210",
        "matchExpression": "ds=$[yyyymmdd]",
        "blockType": 1,
        "checkResult": 0,
        "eventCode": "dqc-check-finished-event",
        "checkResultStatus": 0,
        "methodName": "table_count",
        "beginTime": "2023-02-15 20:14:48",
        "endTime": "2023-02-15 20:14:55",
        "timeConsuming": "7s",
        "externalType": "CWF2",
        "externalId": "triggerByManual",
        "discrete": False,
        "fixedCheck": True,
        "referenceValue": [
            {
                "bizDate": "3000-12-31 00:00:00",
                "discreteProperty": "表行数,1天差值",
                "value": 0.0,
                "singleCheckResult": 0,
            }
        ],
        "sampleValue": [{"bizDate": "2023-02-09 00:00:00", "value": 3.0}],
        "trend": ">=",
        "expectValue": 0.0,
        "op": ">=",
        "projectName": "test_mc_2303_kongjian",
        "tableName": "sx_dim_1209_001",
        "templateId": 47,
        "checkerType": 0,
        "ruleName": "前一天差值",
        "isPrediction": False,
        "feedbackStatus": 0,
        "whetherToFilterDirtyData": False,
    },
    "dq_feedback": {
        "eventCode": "dqc-check-feedback-event",
        "ruleCheckId": 521771452,
        "feedbackContent": "跳过",
        "ruleId": 28610334,
        "createUser": "110755000425000",
        "taskId": "1676448140009a26ecf4063a88797",
        "beginTime": "1676448145000",
        "envType": "ODPS",
        "projectName": "test_mc_2303_kongjian",
        "projectId": 90004,
        "tenantId": 28000656,
    },
    "dq_rules_created": {
        "eventCode": "batch-create-data-quality-rules",
        "projectId": 3000003,
        "tenantId": 28000656,
        "operator": "190000735",
        "operationTime": 1734505954897,
        "dataQualityTaskId": 1001,
        "target": {"databaseType": "maxcompute", "tableGuid": "odps.project_demo.tb_table_demo"},
        "rules": [
            {
                "name": "表行数大于0",
                "enabled": True,
                "severity": "High",
                "description": "数据质量规则创建操作检查测试",
                "templateCode": "system:table:table_count:fixed:0",
                "samplingConfig": {"metric": "count"},
                "checkingConfig": {
                    "type": "fixed",
                    "thresholds": {
                        "expected": {"expression": "$checkValue > 0"},
                        "critical": {"expression": "$checkValue <= 0"},
                    },
                },
            }
        ],
    },
    "dq_notification_created": {
        "eventCode": "create-data-quality-evaluation-task-notification",
        "dataQualityEvaluationTaskId": 10001,
        "channel": "sms",
        "receiverValue": "1107000038",
        "projectId": 3000003,
        "operator": "1100003538",
        "operationTime": 1734505954897,
    },
    "project_deleted": {
        "eventCode": "project-deleted",
        "tenantId": 28000656,
        "blockBusiness": False,
        "projectName": "test2",
        "projectId": 90004,
        "operator": "190000735",
        "timestamp": 1702260556896,
    },
    "upload": {
        "eventCode": "upload-data-to-table",
        "uploadSourceType": "LOCAL",
        "optTableType": "CREATE",
        "targetEngineType": "MAXCOMPUTE",
        "writeType": "OVERWRITE",
        "conflictMode": "IGNORE",
        "operatorBaseId": "123120000",
        "operatorUid": "1222222000",
        "datasourceId": "1111",
        "datasourceName": "odps_first",
        "tableGuid": "odps.mc_project.test_table",
        "queryDwProjectId": "90004",
        "queryDwProjectName": "test_project",
        "fileSize": 123456,
    },
}
# event codes the envelope derives from the EventBridge type when the payload has none
TYPE_CODES = {
    "remind_alert": "workbench-monitor-alert",
    "table_permission_request": "approval-change-before-create",
}


def _long(value: object) -> int | None:
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def events(spark, samples: dict[str, dict]):
    """silver.dataworks_events rows for payloads (envelope columns as that table would fill them)."""
    rows = []
    for index, (key, payload) in enumerate(samples.items()):
        data = json.dumps(payload, ensure_ascii=False)
        code = payload.get("eventCode") or TYPE_CODES.get(key)
        event_type = catalog.type_of(code)
        rows.append(
            (
                f"evt-{key}",
                EVENT_TIME,
                EVENT_TIME.date(),
                code,
                _long(payload.get("tenantId")),
                _long(payload.get("projectId") or payload.get("appId") or payload.get("queryDwProjectId")),
                payload.get("operator") or payload.get("operatorUid") or payload.get("createUser"),
                f"cloud-{key}",
                event_type,
                event_type.split(":")[1] if event_type else None,
                event_type.split(":")[2] if event_type else None,
                "eventbridge",
                data,
                json.dumps({"data": payload}, ensure_ascii=False),
                "/landing/dataworks/test.jsonl",
                index,
                EVENT_TIME,
            )
        )
    schema = (
        "event_id string, event_time timestamp, event_date date, event_code string, tenant_id bigint, "
        "project_id bigint, operator string, cloud_event_id string, type string, category string, "
        "action string, delivery string, data string, raw string, source_file string, record_index bigint, "
        "ingested_at timestamp"
    )
    return spark.createDataFrame(rows, schema)


def run(frame, table: str) -> list[dict]:
    mod = importlib.import_module(table)
    return [row.asDict(recursive=True) for row in mod.SPEC.transform(frame).collect()]


@pytest.fixture(scope="module")
def sample_rows(spark):
    """Family table -> its rows from all SAMPLES, with the suite's `_failed_*` flags (each built once)."""
    frame = events(spark, SAMPLES).cache()
    built: dict[str, list[dict]] = {}

    def rows(table: str) -> list[dict]:
        if table not in built:
            output = importlib.import_module(table).SPEC.transform(frame)
            flagged = quality.flag_rows(output, quality.load_suite(table))
            built[table] = [row.asDict(recursive=True) for row in flagged.collect()]
        return built[table]

    yield rows
    frame.unpersist()


def by_id(rows: list[dict]) -> dict[str, dict]:
    return {row["parent_event_id"] if "parent_event_id" in row else row["event_id"]: row for row in rows}


def utc(*parts: int) -> dt.datetime:
    """A UTC instant as PySpark returns timestamps: naive, in the test process's local time."""
    return dt.datetime(*parts, tzinfo=UTC).astimezone().replace(tzinfo=None)


def test_every_family_table_has_a_module_with_its_job():
    for table in catalog.FAMILY_TABLES:
        spec = importlib.import_module(table).SPEC
        assert (spec.table, spec.source, spec.reconciles) == (table, "silver.dataworks_events", None)
        assert isinstance(importlib.import_module(table).FAMILY, Family)


def test_node_changes(sample_rows):
    rows = sample_rows("silver.dataworks_node_changes")
    assert [r["event_id"] for r in rows] == ["evt-node_created"]
    row = rows[0]
    assert row["entity_key"] == "dataworks:node:70000003"
    assert (row["node_name"], row["priority"], row["baseline_id"], row["repeatability"]) == (
        "ods_orders",
        1,
        70000287,
        True,
    )
    assert row["scheduler_type_name"] == "NORMAL"
    assert row["create_time"] == utc(2024, 7, 12, 3, 8, 50, 864000)
    assert (row["tenant_id"], row["project_id"], row["operator"]) == (28000656, 90004, "190000735")
    assert row["extension_point"] is False
    assert row["data_extra"] is None
    assert row["_errors"] == []
    assert row["raw"] and row["source_file"] == "/landing/dataworks/test.jsonl"


def test_file_changes_local_time_is_shanghai(sample_rows):
    (row,) = sample_rows("silver.dataworks_file_changes")
    assert row["entity_key"] == "dataworks:file:50000830"
    assert (row["change_type"], row["change_type_name"]) == (0, "CREATE")
    assert row["file_create_time"] == utc(2024, 7, 12, 3, 8, 50)  # 11:08:50 Asia/Shanghai
    assert (row["file_version"], row["file_type"], row["resource_type"]) == (1, 10, 1)
    assert row["_errors"] == []


def test_table_changes_key_by_project_and_name(sample_rows):
    (row,) = sample_rows("silver.dataworks_table_changes")
    assert row["entity_key"] == "dataworks:table:project1.table1"
    assert (row["table_type"], row["max_compute_project"]) == ("ODPS", "project1")


def test_di_job_starts_one_row_per_mapping(sample_rows):
    rows = sample_rows("silver.dataworks_di_job_starts")
    v1 = [r for r in rows if r["parent_event_id"] == "evt-start_di_v1"]
    batch = [r for r in rows if r["parent_event_id"] == "evt-batch_start_di"]
    unmapped = [r for r in rows if r["parent_event_id"] == "evt-start_di_unmapped"]
    assert len(v1) == 4 and len(batch) == 7 and len(unmapped) == 1
    assert len({r["event_id"] for r in rows}) == 12
    assert {r["di_job_id"] for r in v1} == {5280}
    assert [r["src_table"] for r in sorted(v1, key=lambda r: r["mapping_index"])] == [
        "xb_test_116",
        "xb_test_117",
        "xb_test_118",
        "xb_test_135",
    ]
    assert v1[0]["entity_key"] == "dataworks:di_job:5280"
    per_job = {spec: sum(r["di_job_id"] == spec for r in batch) for spec in (5777, 5679)}
    assert per_job == {5777: 3, 5679: 4}
    assert {r["di_job_name"] for r in batch if r["di_job_id"] == 5777} == {
        "sync_mysql_to_holo_20240911_170801"
    }
    assert batch[0]["job_ids"] == [5777, 5679]
    assert batch[0]["start_date_time"] == utc(2024, 9, 12, 6, 0)
    (row,) = unmapped
    assert row["di_job_id"] == 5502 and row["show_table_mapping"] is False
    assert row["src_table"] is None and row["dst_table"] is None
    assert row["start_date_time"] == utc(2024, 9, 10, 9, 0)
    assert row["last_start_position"] == utc(2024, 4, 12, 14, 7, 2)
    assert all(r["_errors"] == [] for r in rows)


def test_node_operations_several_nodes_key_the_workspace(sample_rows):
    (row,) = sample_rows("silver.dataworks_node_operations")
    assert row["node_ids"] == [1, 2, 3]
    assert row["operation"] == "FREEZE"
    assert row["entity_key"] == "dataworks:project:1200056"


def test_backfills(sample_rows):
    (row,) = sample_rows("silver.dataworks_backfills")
    assert row["entity_key"] == "dataworks:node:10000271"
    assert (row["include_node_ids"], row["exclude_node_ids"]) == ([10000271], [])
    assert row["multiple_time_periods"] == [{"biz_begin_time": "2022-04-17", "biz_end_time": "2022-04-17"}]
    assert (row["backfill_name"], row["run_order"], row["parallel_group"]) == (
        "P_fff_20220418_215404",
        "asc",
        1,
    )
    assert row["_errors"] == []


def test_instance_status_changes_names_codes(sample_rows):
    (row,) = sample_rows("silver.dataworks_instance_status_changes")
    assert row["entity_key"] == "dataworks:instance:453000169"
    assert (row["status"], row["status_name"]) == (5, catalog.status_names("instance_status")[5])
    assert row["status_name"] == "FAILURE"
    assert (row["dag_type_name"], row["task_type_name"]) == ("SCHEDULED", "NORMAL")
    assert row["begin_wait_time_time"] == utc(2022, 5, 16, 11, 29, 36)
    assert row["project_id"] == 300002  # appId


def test_instance_operations(sample_rows):
    rows = by_id(sample_rows("silver.dataworks_instance_operations"))
    frozen = rows["evt-freeze_instance"]
    assert frozen["entity_key"] == "dataworks:instance:5230009736"
    assert (frozen["operation"], frozen["project_type"]) == ("FREEZE_INSTANCE", "PROD")
    expired = rows["evt-expired_instances"]
    assert expired["deleted_task_instance_ids"] == [524000035, 524000498, 524000637]
    assert expired["entity_key"] == "dataworks:project:307303"
    assert expired["operation_time"] == utc(2024, 12, 18, 7, 12, 34, 897000)


def test_workflow_status_changes(sample_rows):
    (row,) = sample_rows("silver.dataworks_workflow_status_changes")
    assert row["entity_key"] == "dataworks:dag:500358972116"
    assert (row["status_name"], row["dag_type_name"]) == ("SUCCESS", "BACKFILL")
    assert row["biz_date"] == utc(2022, 11, 6, 16, 0)


def test_monitor_alerts_shapes(sample_rows):
    rows = by_id(sample_rows("silver.dataworks_monitor_alerts"))
    sla = rows["evt-sla_alert"]
    assert (sla["baseline_status"], sla["baseline_status_name"]) == (3, "OVERTIME")
    assert sla["biz_date"] == utc(2022, 6, 5, 16, 0)
    assert sla["entity_key"] == "dataworks:instance:30700003778"
    remind = rows["evt-remind_alert"]
    assert remind["node_ids"] == [10000005472, 10000005473, 10000005474]
    assert remind["task_ids"] == [30700000896, 30700000870, 30700000855]
    assert remind["entity_key"] == "dataworks:project:90004"
    assert remind["baseline_status"] is None and remind["_errors"] == []


def test_approvals_unify_requested_objects(sample_rows):
    rows = by_id(sample_rows("silver.dataworks_approvals"))
    created = rows["evt-approval_created"]
    (obj,) = created["requested_objects"]
    assert (obj["object_guid"], obj["actions"], obj["project_id"], obj["workspace_id"]) == (
        "odps.b_mc1.loghub_070103",
        ["Select", "Describe"],
        90004,
        90004,
    )
    assert [g["grantee_type_sub"] for g in created["grantees"]] == [103, 105]
    assert created["entity_key"] == "dataworks:table:odps.b_mc1.loghub_070103"
    assert (created["applicant_name"], created["apply_reason"], created["apply_period"]) == (
        "yupeng.sunyp",
        "测试",
        2997964800000,
    )
    assert created["process_create_time"] == utc(2022, 5, 9, 11, 6, 3)
    request = rows["evt-table_permission_request"]
    (obj,) = request["requested_objects"]
    assert (obj["object_guid"], obj["project_name"], obj["actions"]) == (
        "odps.d11aa.tablei",
        "d11aa",
        ["Select", "Describe"],
    )
    assert request["grantees"][0]["grantee_id"] == "123900008872"
    assert (request["deadline_type"], request["env_code"], request["label_security"]) == ("month", 1, False)
    assert all(r["_errors"] == [] and r["data_extra"] is None for r in rows.values())


def test_dq_check_results(sample_rows):
    rows = by_id(sample_rows("silver.dataworks_dq_check_results"))
    finished = rows["evt-dq_finished"]
    assert (finished["check_result"], finished["check_result_name"]) == (0, "PASSED")
    assert finished["entity_key"] == "dataworks:table:test_mc_2303_kongjian.sx_dim_1209_001"
    assert finished["biz_date"] == utc(2023, 2, 8, 16, 0)
    assert finished["reference_value"][0]["value"] == 0.0
    assert finished["sample_value"] == [
        {"biz_date": utc(2023, 2, 8, 16, 0), "discrete_property": None, "value": 3.0}
    ]
    feedback = rows["evt-dq_feedback"]
    assert feedback["begin_time"] == utc(2023, 2, 15, 8, 2, 25)
    assert (feedback["rule_check_id"], feedback["create_user"]) == (521771452, "110755000425000")
    assert all(r["_errors"] == [] for r in rows.values())


def test_dq_rule_events(sample_rows):
    rows = by_id(sample_rows("silver.dataworks_dq_rule_events"))
    created = rows["evt-dq_rules_created"]
    assert (created["object_kind"], created["operation"]) == ("RULE", "CREATE")
    assert created["entity_key"] == "dataworks:table:odps.project_demo.tb_table_demo"
    (rule,) = created["rules"]
    assert (rule["enabled"], json.loads(rule["sampling_config"])) == (True, {"metric": "count"})
    notification = rows["evt-dq_notification_created"]
    assert (notification["object_kind"], notification["operation"]) == ("NOTIFICATION", "CREATE")
    assert notification["data_quality_evaluation_task_id"] == 10001


def test_project_and_resource_transfers(sample_rows):
    (project,) = sample_rows("silver.dataworks_project_changes")
    assert project["entity_key"] == "dataworks:project:90004"
    assert project["message_time"] == utc(2023, 12, 11, 2, 9, 16, 896000)
    (upload,) = sample_rows("silver.dataworks_resource_transfers")
    assert (upload["direction"], upload["entity_key"]) == (
        "UPLOAD",
        "dataworks:table:odps.mc_project.test_table",
    )
    assert (upload["query_dw_project_id"], upload["file_size"], upload["operator"]) == (
        90004,
        123456,
        "1222222000",
    )


def test_masked_values_are_cast_errors_naming_the_field(spark):
    masked = {
        "masked_project": {**SAMPLES["instance_failed"], "appId": 300002, "projectId": "9***4"},
        "masked_node_ids": {**SAMPLES["freeze_node"], "nodeIds": [1, "7***0"]},
        "masked_reference": {
            **SAMPLES["dq_finished"],
            "referenceValue": [{"value": "n/a"}],
            "beginTime": "2023-02-30 25:00:00",
        },
    }
    frame = events(spark, masked)
    (row,) = run(frame, "silver.dataworks_instance_status_changes")
    assert row["_errors"] == ["cast:data.projectId"]
    assert row["status_name"] == "FAILURE"
    (row,) = run(frame, "silver.dataworks_node_operations")
    assert row["_errors"] == ["cast:data.nodeIds"]
    (row,) = run(frame, "silver.dataworks_dq_check_results")
    assert sorted(row["_errors"]) == ["cast:data.beginTime", "cast:data.referenceValue[].value"]


def test_unknown_fields_are_kept_in_data_extra(spark):
    drift = {
        "drift": {**SAMPLES["instance_failed"], "retryCount": 2, "newInfo": {"a": 1}},
        "nested_drift": {
            **SAMPLES["batch_start_di"],
            "tableMappings": [{"id": 5777, "tableMapping": [{**MAPPINGS_5777[0], "srcSchema": "s1"}]}],
        },
    }
    frame = events(spark, drift)
    (row,) = run(frame, "silver.dataworks_instance_status_changes")
    assert row["data_extra"] == {"retryCount": "2", "newInfo": '{"a":1}'}
    assert row["_errors"] == []
    (row,) = run(frame, "silver.dataworks_di_job_starts")
    assert json.loads(row["data_extra"]["tableMappings"])[0]["tableMapping"][0]["srcSchema"] == "s1"
    assert row["src_table"] == "test_verify1"


def test_scheduler_type_sent_as_code_is_named(spark):
    updated = {**SAMPLES["node_created"], "eventCode": "node-change-updated", "schedulerType": 2}
    (row,) = run(events(spark, {"updated": updated}), "silver.dataworks_node_changes")
    assert (row["scheduler_type"], row["scheduler_type_name"]) == ("2", "PAUSE")


def test_invalid_payload_json_is_an_error(spark):
    frame = events(spark, {"bad": SAMPLES["project_deleted"]}).withColumn("data", F.lit("{not json"))
    (row,) = run(frame, "silver.dataworks_project_changes")
    assert row["_errors"] == ["json:data"]


@pytest.mark.parametrize("table", catalog.FAMILY_TABLES)
def test_expectation_suites_pass_on_the_samples(sample_rows, table):
    suite = quality.load_suite(table)
    assert suite is not None and suite.table == table
    rows = sample_rows(table)
    assert rows and {e.column for e in suite.expectations} <= set(rows[0])
    assert all(not row["_failed_drop"] and not row["_failed_warn"] for row in rows)


def test_status_sets_in_suites_are_the_catalog_enums():
    enums = {
        ("silver.dataworks_instance_status_changes", "status"): "instance_status",
        ("silver.dataworks_instance_status_changes", "dag_type"): "dag_type",
        ("silver.dataworks_instance_status_changes", "task_type"): "task_type",
        ("silver.dataworks_workflow_status_changes", "status"): "dag_status",
        ("silver.dataworks_workflow_status_changes", "dag_type"): "dag_type",
        ("silver.dataworks_file_changes", "change_type"): "file_change_type",
        ("silver.dataworks_monitor_alerts", "baseline_status"): "baseline_status",
        ("silver.dataworks_monitor_alerts", "task_status"): "instance_status",
    }
    for (table, column), kind in enums.items():
        (rule,) = [
            e
            for e in quality.load_suite(table).expectations
            if e.column == column and e.type == "expect_column_values_to_be_in_set"
        ]
        assert sorted(rule.kwargs["value_set"]) == sorted(catalog.status_names(kind)), (table, column)


def test_family_transform_is_generic(spark):
    family = Family(
        table="silver.dataworks_project_changes",
        fields={"projectName": "string", "extra.list": [{"n": "int"}]},
        entity=(("project", "project_id"),),
    )
    frame = events(spark, {"p": {**SAMPLES["project_deleted"], "extra": {"list": [{"n": "1"}, {"n": 2}]}}})
    (row,) = [r.asDict(recursive=True) for r in family_transform(family)(frame).collect()]
    assert row["extra_list"] == [{"n": 1}, {"n": 2}]
    assert row["data_extra"] == {"blockBusiness": "false", "timestamp": "1702260556896"}


def test_each_family_selects_exactly_the_event_codes_its_transform_keeps(spark):
    """The executor skips a family whose selector accepts none of the new event codes, so the
    selector must agree with the transform's own filter on every code: the catalog's, aliases,
    unknown ones and null."""
    codes = [*catalog.EVENT_CODES, *catalog.ALIASES, "no-such-event", None]
    frame = events(spark, {f"code-{i}": {"eventCode": code} for i, code in enumerate(codes)}).cache()
    try:
        for table in catalog.FAMILY_TABLES:
            spec = importlib.import_module(table).SPEC
            kept = {row.event_code for row in spec.transform(frame).select("event_code").distinct().collect()}
            selected = {code for code in codes if spec.selects.accepts(code)}
            assert kept == selected, table
            assert selected, f"{table} selects no event code"
    finally:
        frame.unpersist()
