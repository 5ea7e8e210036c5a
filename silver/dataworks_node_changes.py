"""silver.dataworks_node_changes: a scheduling node created, updated or deleted (one row per event).

node-change-created / -updated / -deleted carry the node's full scheduling
settings; owner and resource-group changes also arrive as node-change-updated.
`schedulerType` is sent as a name (NORMAL) but some feeds send the code, so
`scheduler_type_name` normalises both through the catalog enum.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from silver import dataworks_catalog as catalog
from silver.dataworks_families import Family, family_spec


def _derived() -> list[Column]:
    scheduler_type = F.col("scheduler_type")
    return [
        F.coalesce(
            catalog.status_name_col("scheduler_type", scheduler_type), F.upper(F.trim(scheduler_type))
        ).alias("scheduler_type_name")
    ]


FAMILY = Family(
    table="silver.dataworks_node_changes",
    fields={
        "nodeId": "long",
        "nodeName": "string",
        "programType": "string",
        "cronExpress": "string",
        "schedulerType": "string",
        "ownerId": "string",
        "priority": "int",
        "baselineId": "long",
        "repeatability": "boolean",
        "datasource": "string",
        "createTime": "timestamp",
        "modifyTime": "timestamp",
        "extensionBizId": "string",
        "blockBusiness": "boolean",
    },
    change_time=("modifyTime",),
    entity=(("node", "node_id"),),
    derived=_derived,
)

SPEC = family_spec(FAMILY)
