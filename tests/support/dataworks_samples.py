"""One payload per DataWorks event family, and the silver.dataworks_events rows that carry them."""

from __future__ import annotations

import datetime as dt
import json

from silver import dataworks_catalog as catalog

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
