"""silver.dataworks_dq_check_results: a data-quality rule check finished, or feedback on one.

dqc-check-finished-event carries the result (`check_result` -2 skipped .. 2
critical, named from the catalog enum) with the sampled and reference values;
dqc-check-feedback-event points back to the check (`rule_check_id` = `check_id`).
Times arrive as epoch milliseconds or Asia/Shanghai wall-clock texts depending
on the event. The entity key is the checked table (`<projectName>.<tableName>`,
the engine project), else the workspace.
"""

from __future__ import annotations

from silver.dataworks_families import Family, family_spec

FAMILY = Family(
    table="silver.dataworks_dq_check_results",
    fields={
        "id": "long",
        "ruleCheckId": "long",
        "ruleId": "long",
        "ruleName": "string",
        "taskId": "string",
        "entityId": "long",
        "projectName": "string",
        "tableName": "string",
        "property": "string",
        "bizdate": "timestamp",
        "dateType": "string",
        "actualExpression": "string",
        "matchExpression": "string",
        "blockType": "int",
        "checkResult": "int",
        "checkResultStatus": "int",
        "methodName": "string",
        "beginTime": "timestamp",
        "endTime": "timestamp",
        "timeConsuming": "string",
        "externalType": "string",
        "externalId": "string",
        "discrete": "boolean",
        "fixedCheck": "boolean",
        "referenceValue": [
            {
                "bizDate": "timestamp",
                "discreteProperty": "string",
                "value": "double",
                "singleCheckResult": "int",
            }
        ],
        "sampleValue": [{"bizDate": "timestamp", "discreteProperty": "string", "value": "double"}],
        "trend": "string",
        "expectValue": "double",
        "op": "string",
        "templateId": "int",
        "checkerType": "int",
        "isPrediction": "boolean",
        "feedbackStatus": "int",
        "whetherToFilterDirtyData": "boolean",
        "comment": "string",
        "feedbackContent": "string",
        "createUser": "string",
        "envType": "string",
    },
    names={"id": "check_id", "bizdate": "biz_date"},
    change_time=("endTime",),
    entity=(("table", ("project_name", "table_name")), ("project", "project_id")),
    enums={"check_result": "dq_check_result", "block_type": "dq_block_type"},
)

SPEC = family_spec(FAMILY)
