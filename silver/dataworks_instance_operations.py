"""silver.dataworks_instance_operations: operator actions on task instances (one row per event).

Freeze, unfreeze, kill, rerun, set-success (and their blocking pre-events),
removal of upstream dependencies and deletion of expired instances. The instance
ids come in different fields per event; the entity key is the instance when the
event names exactly one, else the workspace. `operation` is the event code
without its `pre-` prefix, upper snake case (FREEZE_INSTANCE, ...).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from silver.dataworks_families import Family, family_spec


def _derived() -> list[Column]:
    action = F.regexp_replace(F.col("event_code"), r"^pre-", "")
    return [F.upper(F.regexp_replace(action, "-", "_")).alias("operation")]


FAMILY = Family(
    table="silver.dataworks_instance_operations",
    fields={
        "taskIds": "array<long>",
        "taskInstanceId": "long",
        "upstreamTaskInstanceIds": "array<long>",
        "deletedTaskInstanceIds": "array<long>",
        "projectType": "string",
        "appId": "long",
        "owner": "string",
        "operationTime": "timestamp",
        "extensionBizId": "string",
        "extensionBizName": "string",
        "blockBusiness": "boolean",
    },
    entity=(
        ("instance", "task_instance_id"),
        ("instance", "task_ids"),
        ("instance", "deleted_task_instance_ids"),
        ("project", "project_id"),
    ),
    derived=_derived,
)

SPEC = family_spec(FAMILY)
