"""`gold.actor_activity_daily`: how many events each actor caused per day, source and event type.

Sources and event types: DataHub audit events (`event_type` as given), DataHub
entity changes (`<category>_<operation>`, OWNER counted as OWNERSHIP), DataHub
proposals (`PROPOSAL_<operation>`), OpenMetadata change events (`eventType`)
and DataWorks events (`eventCode`, the `operator` as actor). A row counts
distinct silver events, so a re-delivered record never counts twice.
Group: the row itself (`activity_id`): a new event changes only the count of its
own (day, actor, source, event type), so only those rows are rewritten, and
their new count is the current one plus the new events' (`accumulate`; silver
holds each event once), so incremental runs read no history.
`activity_group` (`<event_date>|<actor>`) stays a column for readers who select
an actor's day.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from gold import GROUP, column_names, empty_frame
from gold.associations import OWNERSHIP
from pipelines.core.table_specs import Accumulate, GoldTableSpec
from silver.common import deterministic_id

GROUP_COLUMN = "activity_group"


def _entity_change_type() -> Column:
    category = F.when(F.col("category").isin(*OWNERSHIP.categories), F.lit("OWNERSHIP")).otherwise(
        F.col("category")
    )
    return F.concat_ws("_", category, F.col("operation"))


# source table -> (source, actor column, event type); expressions are built lazily (no session at import)
ACTIVITY_SOURCES: dict[str, tuple[str, str, Callable[[], Column]]] = {
    "silver.datahub_audit_events": ("datahub", "actor", lambda: F.col("event_type")),
    "silver.datahub_entity_changes": ("datahub", "actor", _entity_change_type),
    "silver.datahub_action_requests": (
        "datahub",
        "actor",
        lambda: F.concat(F.lit("PROPOSAL_"), F.col("operation")),
    ),
    "silver.openmetadata_change_events": ("openmetadata", "actor", lambda: F.col("event_type")),
    "silver.dataworks_events": (
        "dataworks",
        "operator",
        lambda: F.coalesce(F.col("event_code"), F.col("action")),
    ),
}
SCHEMA = (
    "activity_id string, event_date date, actor string, source string, event_type string, events long, "
    "activity_group string"
)
COLUMNS = column_names(SCHEMA)


def activity_group(event_date: Column, actor: Column) -> Column:
    """`<yyyy-MM-dd>|<actor>` (empty actor when unknown): one string per recompute unit."""
    return F.concat_ws("|", F.date_format(event_date, "yyyy-MM-dd"), F.coalesce(actor, F.lit("")))


def _spec(source_table: str) -> tuple[str, str, Callable[[], Column]]:
    if source_table not in ACTIVITY_SOURCES:
        raise ValueError(f"gold.actor_activity_daily: unknown source table {source_table!r}")
    return ACTIVITY_SOURCES[source_table]


def activity_id(event_date: Column, actor: Column, source: Column, event_type: Column) -> Column:
    """The row key: one id per (day, actor, source, event type)."""
    return deterministic_id(F.date_format(event_date, "yyyy-MM-dd"), actor, source, event_type)


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    """Every event, grouped by the row it counts in (its `activity_id`)."""
    source, actor, event_type = _spec(source_table)
    row = activity_id(F.col("event_date"), F.col(actor).cast("string"), F.lit(source), event_type())
    return rows.withColumn(GROUP, row)


def build(sources: dict[str, DataFrame]) -> DataFrame:
    """Daily counts (`COLUMNS`) over the events of the given sources."""
    parts = []
    for table, rows in sources.items():
        if rows is None:
            continue
        source, actor, event_type = _spec(table)
        parts.append(
            rows.select(
                "event_date",
                F.col(actor).cast("string").alias("actor"),
                F.lit(source).alias("source"),
                event_type().alias("event_type"),
                F.lit(table).alias("source_table"),
                "event_id",
            )
        )
    if not parts:
        return empty_frame(SCHEMA)
    events = reduce(DataFrame.unionByName, parts).dropDuplicates(["source_table", "event_id"])
    counted = events.groupBy("event_date", "actor", "source", "event_type").agg(F.count("*").alias("events"))
    return counted.select(
        activity_id(F.col("event_date"), F.col("actor"), F.col("source"), F.col("event_type")).alias(
            "activity_id"
        ),
        "event_date",
        "actor",
        "source",
        "event_type",
        "events",
        activity_group(F.col("event_date"), F.col("actor")).alias(GROUP_COLUMN),
    )


def accumulate(current: DataFrame, increment: DataFrame) -> DataFrame:
    """Rows of `current` and `increment` (both `COLUMNS`) for the same day, actor, source and
    event type become one row whose `events` is the sum."""
    labels = [c for c in COLUMNS if c != "events"]
    both = current.select(*COLUMNS).unionByName(increment.select(*COLUMNS))
    return both.groupBy(*labels).agg(F.sum("events").alias("events")).select(*COLUMNS)


SPEC = GoldTableSpec(
    table="gold.actor_activity_daily",
    sources=tuple(ACTIVITY_SOURCES),
    relevant=relevant,
    build=build,
    group_key="activity_id",
    row_key=("activity_id",),
    incremental=Accumulate(accumulate),
    locality="event_date",  # a new event changes its own day's rows
    cluster_by=("event_date",),
)
