"""silver.dataworks_workflow_status_changes: a workflow (dag) changed status (one row per event).

Sent for backfill and manually triggered workflows; `status` and `dag_type` are
named from the catalog enums. `biz_date` and `create_time` arrive as Asia/Shanghai
wall-clock texts and are stored as UTC timestamps.
"""

from __future__ import annotations

from silver.dataworks_families import Family, family_spec

FAMILY = Family(
    table="silver.dataworks_workflow_status_changes",
    fields={
        "dagId": "long",
        "dagName": "string",
        "dagType": "int",
        "status": "int",
        "bizDate": "timestamp",
        "createTime": "timestamp",
        "flowId": "long",
        "flowName": "string",
        "projectEnv": "string",
    },
    entity=(("dag", "dag_id"),),
    enums={"status": "dag_status", "dag_type": "dag_type"},
)

SPEC = family_spec(FAMILY)
