"""`gold.schema_field_timeline`: which fields a dataset's schema had, and when.

DataHub TECHNICAL_SCHEMA (`fieldUrn`, `fieldPath`, `nullable`, `modificationCategory`):
ADD opens the field, REMOVE closes it (REMOVED); a MODIFY with modificationCategory
RENAME opens the field under its new `fieldPath` and closes (RENAMED) the old one when
the event names it (`modifier` = the old field's schemaField urn, as DataHub sends it
when it differs from `fieldUrn`); TYPE_CHANGE / OTHER leave the interval as it is
(they stay in `gold.change_history`). A HARD_DELETE of the dataset closes its fields
(ENTITY_DELETED). OpenMetadata: `columns` field changes (added / deleted columns, JSON
lists of columns) and the columns of a created entity open and close fields of the
table; `entityDeleted` closes them. `nullable` and `field_urn` are those of the event
that opened the interval (OpenMetadata sends no nullability here: null).
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from gold import GROUP, column_names, empty_frame
from gold.associations import om_column_key
from gold.interval_tables import intervals_of, typed_events
from gold.intervals import (
    ADD,
    ENTITY_DELETED,
    GROUP_COLUMN,
    INTERVAL_TAIL_SCHEMA,
    REMOVE,
    RENAME,
    ROW_KEY,
    extend_intervals,
    interval_columns,
)
from pipelines.core.table_specs import Extend, GoldTableSpec

DATAHUB_CHANGES = "silver.datahub_entity_changes"
OM_FIELD_CHANGES = "silver.openmetadata_field_changes"
OM_CHANGE_EVENTS = "silver.openmetadata_change_events"
SOURCES = (DATAHUB_CHANGES, OM_FIELD_CHANGES, OM_CHANGE_EVENTS)
KEYS = ["field_path"]
SCHEMA = (
    f"{ROW_KEY} string, source string, dataset_urn string, field_path string, field_urn string, "
    f"nullable boolean, {INTERVAL_TAIL_SCHEMA}"
)
COLUMNS = column_names(SCHEMA)
_FIELD_PATH_OF_URN = r"^urn:li:schemaField:\((.*),([^,]*)\)$"
_COLUMN_LIST = "array<struct<name:string>>"


def _dataset() -> Column:
    is_field = F.col("entity_urn").startswith("urn:li:schemaField:")
    of_field = F.regexp_extract("entity_urn", _FIELD_PATH_OF_URN, 1)
    return F.coalesce(F.col("parent_urn"), F.when(is_field, of_field), F.col("entity_urn"))


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    if source_table == DATAHUB_CHANGES:
        schema = (F.col("category") == "TECHNICAL_SCHEMA") & F.col("operation").isin(
            "ADD", "REMOVE", "MODIFY"
        )
        deletion = (F.col("category") == "LIFECYCLE") & (F.col("operation") == "HARD_DELETE")
        return rows.filter(schema | deletion).withColumn(GROUP, _dataset())
    if source_table == OM_FIELD_CHANGES:
        chosen = rows.filter(
            (F.col("field_name") == "columns") & F.col("change_kind").isin("added", "deleted")
        )
        return chosen.withColumn(GROUP, F.col("entity_key"))
    if source_table == OM_CHANGE_EVENTS:
        chosen = rows.filter(F.col("event_type").isin("entityCreated", "entityDeleted"))
        return chosen.withColumn(GROUP, F.col("entity_key"))
    raise ValueError(f"gold.schema_field_timeline: unknown source table {source_table!r}")


def _datahub(rows: DataFrame) -> DataFrame:
    operation, category = F.col("operation"), F.col("modificationCategory")
    path = F.coalesce(
        F.col("fieldPath"),
        F.nullif(F.regexp_extract(F.coalesce("fieldUrn", "modifier"), _FIELD_PATH_OF_URN, 2), F.lit("")),
    )
    old_path = F.nullif(F.regexp_extract(F.col("modifier"), _FIELD_PATH_OF_URN, 2), F.lit(""))
    renamed_from = F.when(
        (operation == "MODIFY") & (category == "RENAME") & old_path.isNotNull() & (old_path != path), old_path
    )
    field_urn = F.coalesce(
        F.col("fieldUrn"), F.when(F.col("modifier").startswith("urn:li:schemaField:"), "modifier")
    )
    deletion = operation == "HARD_DELETE"
    opens = (operation == "ADD") | ((operation == "MODIFY") & (category == "RENAME"))
    changes = F.array(
        F.struct(
            path.alias("field_path"),
            F.when(deletion, F.lit(ENTITY_DELETED))
            .when(opens, F.lit(ADD))
            .when(operation == "REMOVE", F.lit(REMOVE))
            .alias("action"),
            field_urn.alias("field_urn"),
            F.col("nullable").alias("nullable"),
        ),
        F.struct(
            renamed_from.alias("field_path"),
            F.when(renamed_from.isNotNull(), F.lit(RENAME)).alias("action"),
            F.lit(None).cast("string").alias("field_urn"),
            F.lit(None).cast("boolean").alias("nullable"),
        ),
    )
    return _exploded(rows, "datahub", _dataset(), changes)


def _exploded(rows: DataFrame, source: str, dataset: Column, changes: Column) -> DataFrame:
    return (
        rows.select(
            F.lit(source).alias("source"),
            dataset.alias("entity_urn"),
            "event_time",
            "actor",
            "event_id",
            F.explode(changes).alias("_c"),
        )
        .filter(F.col("_c.action").isNotNull())
        .select(
            "source",
            "entity_urn",
            F.lit(None).cast("string").alias("parent_urn"),
            F.col("_c.field_path").alias("field_path"),
            F.col("_c.action").alias("action"),
            "event_time",
            "actor",
            "event_id",
            F.col("_c.field_urn").alias("field_urn"),
            F.col("_c.nullable").alias("nullable"),
        )
    )


def _om_columns(names: Column, action: str) -> Column:
    return F.transform(
        names,
        lambda c: F.struct(
            c["name"].alias("field_path"),
            F.lit(action).alias("action"),
            om_column_key(F.col("entity_key"), F.col("entity_fqn"), c["name"]).alias("field_urn"),
            F.lit(None).cast("boolean").alias("nullable"),
        ),
    )


def _empty_changes() -> Column:
    return F.array().cast("array<struct<field_path:string,action:string,field_urn:string,nullable:boolean>>")


def _om_field_changes(rows: DataFrame) -> DataFrame:
    added = _om_columns(F.from_json("new_value", _COLUMN_LIST), ADD)
    removed = _om_columns(F.from_json("old_value", _COLUMN_LIST), REMOVE)
    changes = F.when(F.col("change_kind") == "added", added).otherwise(removed)
    return _exploded(rows, "openmetadata", F.col("entity_key"), F.coalesce(changes, _empty_changes()))


def _om_change_events(rows: DataFrame) -> DataFrame:
    created = _om_columns(F.from_json(F.get_json_object("entity", "$.columns"), _COLUMN_LIST), ADD)
    deleted = F.array(
        F.struct(
            F.lit(None).cast("string").alias("field_path"),
            F.lit(ENTITY_DELETED).alias("action"),
            F.lit(None).cast("string").alias("field_urn"),
            F.lit(None).cast("boolean").alias("nullable"),
        )
    )
    changes = F.when(F.col("event_type") == "entityDeleted", deleted).otherwise(
        F.coalesce(created, _empty_changes())
    )
    return _exploded(rows, "openmetadata", F.col("entity_key"), changes)


READERS = {
    DATAHUB_CHANGES: _datahub,
    OM_FIELD_CHANGES: _om_field_changes,
    OM_CHANGE_EVENTS: _om_change_events,
}


def _opened(events: list[DataFrame]) -> DataFrame:
    """(valid_from_event_id, entity_urn, field_path) -> the field_urn and nullable of the event
    that opened an interval."""
    return reduce(
        DataFrame.unionByName,
        [
            frame.filter(F.col("action") == ADD).select(
                F.col("event_id").alias("valid_from_event_id"),
                "entity_urn",
                "field_path",
                "field_urn",
                "nullable",
            )
            for frame in events
        ],
    ).dropDuplicates(["valid_from_event_id", "entity_urn", "field_path"])


def _as_table(intervals: DataFrame, opened: DataFrame) -> DataFrame:
    joined = intervals.join(opened, ["valid_from_event_id", "entity_urn", "field_path"], "left")
    return joined.withColumnRenamed("entity_urn", "dataset_urn").select(*COLUMNS)


def _events(sources: dict[str, DataFrame]) -> dict[str, DataFrame]:
    return {name: read(sources[name]) for name, read in READERS.items() if sources.get(name) is not None}


def build(sources: dict[str, DataFrame]) -> DataFrame:
    present = _events(sources)
    if not present:
        return empty_frame(SCHEMA)
    intervals = intervals_of(present, {name: _as_is for name in present}, KEYS)
    return _as_table(intervals, _opened(list(present.values())))


def extend(rows: DataFrame, sources: dict[str, DataFrame], since) -> DataFrame:
    """`rows` after the events of `sources` (`Extend`): an interval keeps the field_urn and
    nullable of its opening event, from the table for the intervals it reopens."""
    present = _events(sources)
    intervals = rows.withColumnRenamed("dataset_urn", "entity_urn").withColumn(
        "parent_urn", F.lit(None).cast("string")
    )
    known = intervals.select("valid_from_event_id", "entity_urn", "field_path", "field_urn", "nullable")
    events = typed_events([frame.drop("field_urn", "nullable") for frame in present.values()], KEYS)
    extended = extend_intervals(intervals, events, KEYS, since).select(*interval_columns(KEYS))
    opened = _opened(list(present.values())) if present else known.limit(0)
    details = known.unionByName(opened).dropDuplicates(["valid_from_event_id", "entity_urn", "field_path"])
    return _as_table(extended, details)


def _as_is(frame: DataFrame) -> DataFrame:
    return frame


SPEC = GoldTableSpec(
    table="gold.schema_field_timeline",
    sources=SOURCES,
    relevant=relevant,
    build=build,
    group_key=GROUP_COLUMN,
    row_key=(ROW_KEY,),
    partition_by=("is_current",),
    # intervals are per `source`: one feed's events never reorder the other's
    incremental=Extend(extend, ordering_domains=((DATAHUB_CHANGES,), (OM_FIELD_CHANGES, OM_CHANGE_EVENTS))),
)
