"""silver.dataworks_backfills: a backfill (data patch) about to start (one row per event).

`multiple_time_periods` arrives as a JSON-encoded string; it is typed into an
array of business-date ranges. The range bounds stay text because their format
depends on the node's schedule (a date, or a date-time for hourly nodes).
"""

from __future__ import annotations

from silver.dataworks_families import Family, family_spec

FAMILY = Family(
    table="silver.dataworks_backfills",
    fields={
        "name": "string",
        "rootNodeId": "long",
        "rootNodeProjectId": "long",
        "includeNodeIds": "array<long>",
        "excludeNodeIds": "array<long>",
        "isParallel": "boolean",
        "parallelGroup": "int",
        "startFutureInstanceImmediately": "boolean",
        "order": "string",
        "useMultipleTimePeriods": "boolean",
        "multipleTimePeriods": [{"bizBeginTime": "string", "bizEndTime": "string"}],
        "bizBeginTime": "string",
        "bizEndTime": "string",
        "extensionBizId": "string",
        "blockBusiness": "boolean",
    },
    names={"name": "backfill_name", "order": "run_order"},
    entity=(("node", "root_node_id"), ("project", "project_id")),
)

SPEC = family_spec(FAMILY)
