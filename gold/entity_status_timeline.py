"""`gold.entity_status_timeline`: is an entity live, soft-deleted or hard-deleted, and since when.

DataHub LIFECYCLE CREATE / REINSTATE (undoes a soft delete) open ACTIVE, SOFT_DELETE
opens SOFT_DELETED, HARD_DELETE opens HARD_DELETED; OpenMetadata entityCreated /
entityRestored, entitySoftDeleted and entityDeleted likewise. Each event SUPERSEDEs the
entity's previous status (`gold.intervals`), so an entity has one status at a time and a
repeated status continues its interval. A hard-deleted entity's last interval stays
current until the entity is created again. `changed_by` is the actor that set the status.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from gold import GROUP
from gold.interval_tables import extended_of, intervals_of
from gold.intervals import GROUP_COLUMN, ROW_KEY, SUPERSEDE
from pipelines.core.table_specs import Extend, GoldTableSpec

DATAHUB_CHANGES = "silver.datahub_entity_changes"
OM_CHANGE_EVENTS = "silver.openmetadata_change_events"
SOURCES = (DATAHUB_CHANGES, OM_CHANGE_EVENTS)
ACTIVE, SOFT_DELETED, HARD_DELETED = "ACTIVE", "SOFT_DELETED", "HARD_DELETED"
DATAHUB_STATUS = {
    "CREATE": ACTIVE,
    "REINSTATE": ACTIVE,
    "SOFT_DELETE": SOFT_DELETED,
    "HARD_DELETE": HARD_DELETED,
}
OM_STATUS = {
    "entityCreated": ACTIVE,
    "entityRestored": ACTIVE,
    "entitySoftDeleted": SOFT_DELETED,
    "entityDeleted": HARD_DELETED,
}
KEYS = ["status_of", "status"]  # one slot per entity: every status supersedes the others
COLUMNS = (
    ROW_KEY,
    "source",
    "entity_urn",
    "status",
    "valid_from",
    "valid_to",
    "is_current",
    "changed_by",
    "ended_by",
    "valid_from_event_id",
    "valid_to_event_id",
    GROUP_COLUMN,
)


def _mapped(column: Column, mapping: dict[str, str]) -> Column:
    out = F.lit(None).cast("string")
    for key, value in mapping.items():
        out = F.when(column == key, F.lit(value)).otherwise(out)
    return out


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    if source_table == DATAHUB_CHANGES:
        chosen = rows.filter((F.col("category") == "LIFECYCLE") & F.col("operation").isin(*DATAHUB_STATUS))
        return chosen.withColumn(GROUP, F.col("entity_urn"))
    if source_table == OM_CHANGE_EVENTS:
        return rows.filter(F.col("event_type").isin(*OM_STATUS)).withColumn(GROUP, F.col("entity_key"))
    raise ValueError(f"gold.entity_status_timeline: unknown source table {source_table!r}")


def _events(source: str, entity: str, event: str, statuses: dict[str, str]):
    """A reader of one source's lifecycle rows (columns built when called: no session at import)."""

    def read(rows: DataFrame) -> DataFrame:
        status = _mapped(F.col(event), statuses)
        return rows.select(
            F.lit(source).alias("source"),
            F.col(entity).alias("entity_urn"),
            F.lit(None).cast("string").alias("parent_urn"),
            F.lit("status").alias("status_of"),
            status.alias("status"),
            F.lit(SUPERSEDE).alias("action"),
            "event_time",
            "actor",
            "event_id",
        )

    return read


READERS = {
    DATAHUB_CHANGES: _events("datahub", "entity_urn", "operation", DATAHUB_STATUS),
    OM_CHANGE_EVENTS: _events("openmetadata", "entity_key", "event_type", OM_STATUS),
}


def _as_table(intervals: DataFrame) -> DataFrame:
    return (
        intervals.withColumnRenamed("added_by", "changed_by")
        .withColumnRenamed("removed_by", "ended_by")
        .select(*COLUMNS)
    )


def _as_intervals(rows: DataFrame) -> DataFrame:
    """The table's rows in the interval builder's columns (one status slot per entity)."""
    return rows.select(
        *[c for c in COLUMNS if c not in ("changed_by", "ended_by")],
        F.lit(None).cast("string").alias("parent_urn"),
        F.lit("status").alias("status_of"),
        F.col("changed_by").alias("added_by"),
        F.col("ended_by").alias("removed_by"),
        F.lit(None).cast("string").alias("end_reason"),
    )


def build(sources: dict[str, DataFrame]) -> DataFrame:
    return _as_table(intervals_of(sources, READERS, KEYS))


SPEC = GoldTableSpec(
    table="gold.entity_status_timeline",
    sources=SOURCES,
    relevant=relevant,
    build=build,
    group_key=GROUP_COLUMN,
    row_key=(ROW_KEY,),
    partition_by=("is_current",),
    # one feed's events never reorder the other's statuses (intervals are per `source`)
    incremental=Extend(
        extended_of(READERS, KEYS, _as_intervals, _as_table),
        ordering_domains=((DATAHUB_CHANGES,), (OM_CHANGE_EVENTS,)),
    ),
)
