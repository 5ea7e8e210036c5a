"""silver.dataworks_dq_rule_events: data-quality rules, monitors and their alert subscriptions changing.

Pre-events for creating, updating, cloning and deleting rules, evaluation tasks
(monitors) and evaluation-task notifications, one row per event. `object_kind`
(RULE, EVALUATION_TASK, NOTIFICATION) and `operation` (CREATE, UPDATE, CLONE,
DELETE) come from the event code; `object_id` / `object_ids` are the payload's
`id` / `ids`, whose meaning is that kind. Nested configurations (sampling,
checking, hooks, notifications) stay JSON text: they are settings to show, not
to aggregate.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from silver.dataworks_families import Family, family_spec

_RULE = {
    "id": "long",
    "name": "string",
    "enabled": "boolean",
    "severity": "string",
    "description": "string",
    "templateCode": "string",
    "samplingConfig": "json",
    "checkingConfig": "json",
}
_TARGET = {"databaseType": "string", "tableGuid": "string"}


def _derived() -> list[Column]:
    code = F.col("event_code")
    kind = (
        F.when(code.endswith("-notification"), F.lit("NOTIFICATION"))
        .when(code.contains("evaluation-task"), F.lit("EVALUATION_TASK"))
        .when(code.contains("-rule"), F.lit("RULE"))
    )
    verb = F.regexp_extract(code, r"^(?:batch-)?(create|update|clone|delete)-", 1)
    return [kind.alias("object_kind"), F.upper(F.nullif(verb, F.lit(""))).alias("operation")]


FAMILY = Family(
    table="silver.dataworks_dq_rule_events",
    fields={
        "id": "long",
        "ids": "array<long>",
        "name": "string",
        "description": "string",
        "enabled": "boolean",
        "severity": "string",
        "templateCode": "string",
        "samplingConfig": "json",
        "checkingConfig": "json",
        "dataQualityTaskId": "long",
        "dataQualityEvaluationTaskId": "long",
        "target.databaseType": "string",
        "target.tableGuid": "string",
        "targets": [_TARGET],
        "trigger.type": "string",
        "trigger.taskIds": "array<long>",
        "dataSourceId": "long",
        "runtimeConf": "string",
        "rules": [_RULE],
        "hooks": "json",
        "notifications": "json",
        "channel": "string",
        "receiverValue": "string",
        "currentChannel": "string",
        "currentReceiverValue": "string",
        "updatedChannel": "string",
        "updatedReceiverValue": "string",
        "operationTime": "timestamp",
    },
    names={"id": "object_id", "ids": "object_ids"},
    entity=(("table", "target_table_guid"), ("project", "project_id")),
    derived=_derived,
)

SPEC = family_spec(FAMILY)
