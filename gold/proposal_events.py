"""`gold.proposal_events`: the lifecycle of each DataHub proposal, one row per step.

Steps: CREATED (the first creation event), every status change as its new
status (ACCEPTED / REJECTED for a completing event with a result, else the
reported status, e.g. PENDING), STEP_COMPLETED for a workflow form request's
accepted step (a MODIFY naming the step), and APPLIED when `gold.proposals` infers the
proposal was applied (no status event decided it). Each row keeps the group of
the silver row it comes from (APPLIED: the proposal's), so the table can be
recomputed per group like `gold.proposals`, whose sources and rules it shares.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from gold import column_names, empty_frame
from gold.proposals import (
    ACTION_REQUESTS,
    CREATE_OPERATIONS,
    DATAHUB_CHANGES,
    GROUP_COLUMN,
    INFERRED_FROM_CHANGE,
    SOURCES,
    STATUS_EVENT,
    build_proposals,
    creations,
    is_decision,
    linked_group_values,
    linked_groups,
    proposal_group,
    relevant,
)
from pipelines.core.table_specs import GoldTableSpec, RebuildGroups
from silver.common import deterministic_id

CREATED = "CREATED"
STEP_OPERATION, STEP_COMPLETED = "MODIFY", "STEP_COMPLETED"  # a workflow form request's step accepted
SCHEMA = (
    "proposal_event_id string, proposal_urn string, resource_urn string, event string, status_rule string, "
    "event_time timestamp, actor string, source_event_id string, group_urn string"
)
COLUMNS = column_names(SCHEMA)


def build_events(action_requests: DataFrame, changes: DataFrame | None) -> DataFrame:
    """Lifecycle rows (`COLUMNS`) of the proposals in `action_requests`."""
    created = creations(action_requests).select(
        "proposal_urn",
        "resource_urn",
        F.lit(CREATED).alias("event"),
        F.lit(None).cast("string").alias("status_rule"),
        F.col("created_at").alias("event_time"),
        F.col("created_by").alias("actor"),
        F.col("created_event_id").alias("source_event_id"),
        GROUP_COLUMN,
    )
    status_changes = action_requests.filter(~F.col("operation").isin(*CREATE_OPERATIONS)).select(
        "proposal_urn",
        "resource_urn",
        F.when(is_decision(), F.col("action_request_result"))
        .when(F.col("operation") == STEP_OPERATION, F.lit(STEP_COMPLETED))
        .otherwise(F.coalesce("action_request_status", "operation"))
        .alias("event"),
        F.lit(STATUS_EVENT).alias("status_rule"),
        "event_time",
        "actor",
        F.col("event_id").alias("source_event_id"),
        proposal_group().alias(GROUP_COLUMN),
    )
    applied = (
        build_proposals(action_requests, changes)
        .filter(F.col("status_rule") == INFERRED_FROM_CHANGE)
        .select(
            "proposal_urn",
            "resource_urn",
            F.col("status").alias("event"),
            "status_rule",
            F.col("resolved_at").alias("event_time"),
            F.col("resolved_by").alias("actor"),
            F.col("resolved_event_id").alias("source_event_id"),
            GROUP_COLUMN,
        )
    )
    steps = reduce(DataFrame.unionByName, [created, status_changes, applied])
    return steps.select(
        deterministic_id("proposal_urn", "event", "source_event_id").alias("proposal_event_id"), *COLUMNS[1:]
    )


def build(sources: dict[str, DataFrame]) -> DataFrame:
    if sources.get(ACTION_REQUESTS) is None:
        return empty_frame(SCHEMA)
    return build_events(sources[ACTION_REQUESTS], sources.get(DATAHUB_CHANGES))


SPEC = GoldTableSpec(
    table="gold.proposal_events",
    sources=SOURCES,
    relevant=relevant,
    build=build,
    group_key=GROUP_COLUMN,
    row_key=("proposal_event_id",),
    incremental=RebuildGroups(expand_groups=linked_groups, expand_group_values=linked_group_values),
)
