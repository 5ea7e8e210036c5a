"""silver.dataworks_node_operations: nodes about to be undeployed, frozen or unfrozen (one row per event).

One event names several nodes (`node_ids`); the entity key is the node when
there is exactly one, else the workspace. `operation` is the verb of the event
code (UNDEPLOY, FREEZE, UNFREEZE) so consumers need not parse codes.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from silver.dataworks_families import Family, family_spec


def _derived() -> list[Column]:
    verb = F.regexp_extract(F.col("event_code"), r"^(?:pre-)?([a-z]+)-node", 1)
    return [F.upper(F.nullif(verb, F.lit(""))).alias("operation")]


FAMILY = Family(
    table="silver.dataworks_node_operations",
    fields={
        "nodeIds": "array<long>",
        "extensionBizId": "string",
        "extensionBizName": "string",
        "blockBusiness": "boolean",
        "operationTime": "timestamp",
    },
    entity=(("node", "node_ids"), ("project", "project_id")),
    derived=_derived,
)

SPEC = family_spec(FAMILY)
