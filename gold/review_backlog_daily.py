"""`gold.review_backlog_daily`: per day, catalog, request type and assignee, the review requests
(`gold.proposals`: DataHub proposals, OpenMetadata tasks, DataWorks permission requests) still open
at the day's end, how old they were, and how many were opened and resolved that day.

A request is open from its creation until its resolution (recorded or inferred: `status_rule`),
at day granularity: open at the end of day d when created on or before d and not resolved by the
end of d. Ages are in days at the end of the day (`age_p50_days`, `age_p90_days`: exact
percentiles; `age_max_days`). A request assigned to several people counts under each; one
assigned to nobody (DataHub's change events name no assignee) under a null `assignee`.
`resolved_recorded` and `resolved_inferred` split the day's resolutions by how they are known.
Days run from the first request to the last creation or resolution, every day.

Incremental as `gold.governance_coverage_daily` (`gold.daily_groups`): a new proposal event, or a
change that may apply a proposal, touches its day and every later one.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from gold import column_names, empty_frame
from gold import proposals as requests
from gold.daily_groups import DailyGroups, day_text
from pipelines.core.table_specs import GoldTableSpec
from silver.common import deterministic_id

PROPOSALS = "gold.proposals"
EVENTS = requests.SOURCES  # what gold.proposals reads: its events' days are the days touched
SOURCES = (PROPOSALS, *EVENTS)
GROUP_COLUMN = "day_group"
CELL = ("source", "request_type", "assignee")
SCHEMA = (
    "backlog_id string, day date, source string, request_type string, assignee string, open_requests bigint, "
    "opened bigint, resolved bigint, resolved_recorded bigint, resolved_inferred bigint, age_p50_days double, "
    "age_p90_days double, age_max_days double, day_group string"
)
COLUMNS = column_names(SCHEMA)
_DAY_SECONDS = 86_400.0


def _none(*names: str) -> list[Column]:
    return [F.lit(None).cast("double" if name == "age" else "int").alias(name) for name in names]


def _last_change(proposals: DataFrame) -> Column:
    """The day of the last creation or resolution."""
    return F.to_date(F.max(F.greatest("created_at", F.coalesce("resolved_at", "created_at"))))


DAYS = DailyGroups(PROPOSALS, _last_change)


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    """Every proposal (group `state`); the events `gold.proposals` reads, by their day."""
    if source_table in EVENTS:
        rows = requests.relevant(source_table, rows).drop("_group")
    elif source_table != PROPOSALS:
        raise ValueError(f"gold.review_backlog_daily: unknown source table {source_table!r}")
    return DAYS.relevant(source_table, rows)


def build(sources: dict[str, DataFrame]) -> DataFrame:
    """The backlog of every day from the earliest day of the given events to the last day."""
    proposals = sources.get(PROPOSALS)
    events = [sources[s] for s in EVENTS if sources.get(s) is not None]
    if proposals is None or not events:
        return empty_frame(SCHEMA)
    span = F.broadcast(DAYS.span(events, proposals))
    created, resolved = F.to_date("created_at"), F.to_date("resolved_at")
    items = (
        proposals.where(F.col("created_at").isNotNull())
        .crossJoin(span)
        .where((created <= F.col("last")) & (F.col("resolved_at").isNull() | (resolved >= F.col("first"))))
        .select(
            "source",
            F.col("action_request_type").alias("request_type"),
            F.explode_outer(F.when(F.size("assignees") > 0, F.col("assignees"))).alias("assignee"),
            "created_at",
            created.alias("created_day"),
            resolved.alias("resolved_day"),
            "status_rule",
            "first",
            "last",
        )
    )
    open_from = F.greatest("created_day", "first")
    open_to = F.least(F.coalesce(F.date_sub("resolved_day", 1), F.col("last")), F.col("last"))
    open_days = F.when(
        open_from <= open_to, F.sequence(open_from, open_to)
    )  # resolved the day it opened: none
    age = (F.unix_seconds(F.to_timestamp(F.date_add("day", 1))) - F.unix_seconds("created_at")) / _DAY_SECONDS
    recorded = (F.col("status_rule") == requests.STATUS_EVENT).cast("int")
    in_span = (F.col("day") >= F.col("first")) & (F.col("day") <= F.col("last"))
    # one row per request and day it was open, opened or resolved; then one aggregation per cell
    moves = reduce(
        DataFrame.unionByName,
        [
            items.select(*CELL, "created_at", F.explode(open_days).alias("day")).select(
                *CELL,
                "day",
                F.lit(1).alias("open"),
                age.alias("age"),
                *_none("opened", "resolved", "recorded"),
            ),
            items.select(*CELL, F.col("created_day").alias("day"), "first", "last")
            .where(in_span)
            .select(
                *CELL, "day", *_none("open", "age"), F.lit(1).alias("opened"), *_none("resolved", "recorded")
            ),
            items.select(
                *CELL, F.col("resolved_day").alias("day"), "first", "last", recorded.alias("recorded")
            )
            .where(in_span)
            .select(*CELL, "day", *_none("open", "age", "opened"), F.lit(1).alias("resolved"), "recorded"),
        ],
    )
    joined = moves.groupBy(*CELL, "day").agg(
        F.sum("open").alias("open_requests"),
        F.sum("opened").alias("opened"),
        F.sum("resolved").alias("resolved"),
        F.sum("recorded").alias("resolved_recorded"),
        F.sum(F.col("resolved") - F.col("recorded")).alias("resolved_inferred"),
        F.percentile("age", 0.5).alias("age_p50_days"),
        F.percentile("age", 0.9).alias("age_p90_days"),
        F.max("age").alias("age_max_days"),
    )
    zero = F.lit(0).cast("bigint")
    return joined.select(
        deterministic_id(day_text(F.col("day")), *CELL).alias("backlog_id"),
        "day",
        *CELL,
        *[
            F.coalesce(F.col(c).cast("bigint"), zero).alias(c)
            for c in ("open_requests", "opened", "resolved", "resolved_recorded", "resolved_inferred")
        ],
        "age_p50_days",
        "age_p90_days",
        "age_max_days",
        day_text(F.col("day")).alias(GROUP_COLUMN),
    )


SPEC = GoldTableSpec(
    table="gold.review_backlog_daily",
    sources=SOURCES,
    relevant=relevant,
    build=build,
    group_key=GROUP_COLUMN,
    row_key=("backlog_id",),
    incremental=DAYS.rebuild(),
)
