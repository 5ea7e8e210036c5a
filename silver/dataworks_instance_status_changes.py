"""silver.dataworks_instance_status_changes: a scheduled task instance changed status (one row per event).

The highest-volume DataWorks event: `status`, `dag_type` and `task_type` are kept
as codes and named from the catalog enums, so dashboards need no lookup table.
"""

from __future__ import annotations

from silver.dataworks_families import Family, family_spec

FAMILY = Family(
    table="silver.dataworks_instance_status_changes",
    fields={
        "taskId": "long",
        "nodeId": "long",
        "dagId": "long",
        "flowId": "long",
        "appId": "long",
        "status": "int",
        "dagType": "int",
        "taskType": "int",
        "opCode": "int",
        "createTime": "timestamp",
        "modifyTime": "timestamp",
        "beginWaitTimeTime": "timestamp",
        "beginWaitResTime": "timestamp",
        "beginRunningTime": "timestamp",
        "finishTime": "timestamp",
    },
    change_time=("modifyTime", "finishTime", "beginRunningTime"),
    entity=(("instance", "task_id"),),
    enums={"status": "instance_status", "dag_type": "dag_type", "task_type": "task_type"},
)

SPEC = family_spec(FAMILY)
