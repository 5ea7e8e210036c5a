"""silver.dataworks_monitor_alerts: monitoring alerts of the three shapes in one table (one row per event).

`alarm_type` says which shape: SLA_ALERT (baseline broken or at risk: baseline_*,
node_id, task_id), TOPIC_ALERT (event alert: topic_id, task_status) and
REMIND_ALERT (custom rule: remind_*, with node_ids / task_ids sent as
comma-separated text, or a resource group). Columns of the other shapes are null.
The entity key is the instance, else the node, else the workspace.
"""

from __future__ import annotations

from silver.dataworks_families import Family, family_spec

FAMILY = Family(
    table="silver.dataworks_monitor_alerts",
    fields={
        "alarmType": "string",
        "baselineId": "long",
        "baselineName": "string",
        "baselineStatus": "int",
        "bizDate": "timestamp",
        "inGroupId": "int",
        "nodeId": "long",
        "taskId": "long",
        "topicId": "long",
        "taskStatus": "int",
        "remindId": "long",
        "remindName": "string",
        "remindType": "string",
        "remindUnit": "string",
        "nodeIds": "array<long>",
        "taskIds": "array<long>",
        "resourceGroupIdentifier": "string",
        "resourceGroupName": "string",
        "resourceGroupType": "string",
    },
    entity=(
        ("instance", "task_id"),
        ("instance", "task_ids"),
        ("node", "node_id"),
        ("node", "node_ids"),
        ("project", "project_id"),
    ),
    enums={"baseline_status": "baseline_status", "task_status": "instance_status"},
)

SPEC = family_spec(FAMILY)
