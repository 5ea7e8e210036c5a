"""silver.datahub_ignored_events: records of the DataHub entity change feed that are no entity change.

A DataHub Actions pipeline delivers `MetadataChangeLogEvent_v1` (and other types) envelopes as
well as `EntityChangeEvent_v1` ones, and `PlatformEvent_v1` carries platform events of other
names: only entity change events are typed by `silver.datahub_entity_changes`; the others are
kept here with their delivered type (`silver/datahub_envelopes.py`), so they are counted, visible
and replayable, and reconcile the feed, instead of being quarantined as broken changes.

    lakehouse sql "SELECT event_type, count(*) FROM silver.datahub_ignored_events GROUP BY 1"
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipelines.core.table_specs import ERRORS_COLUMN, SilverTableSpec
from pipelines.runtime.sql_expressions import column, name
from silver.common import collect_errors, deterministic_id, event_epoch_to_timestamp_text, lineage
from silver.datahub_envelopes import other_event_type_text

TABLE = "silver.datahub_ignored_events"
SOURCE_NAME = "datahub_ece"

# Where each delivery keeps a time: an envelope's event (`created` of a change log, `auditStamp`
# of others), a PlatformEvent's header.
_TIME_PATHS = ("$.event.created.time", "$.event.auditStamp.time", "$.header.timestampMillis")


def transform(bronze: DataFrame) -> DataFrame:
    """The bronze ECE rows that deliver another kind of event, with their type and time."""
    typed = bronze.where(~F.col("is_corrupt")).select(
        "*", column(other_event_type_text(name("raw")), "_event_type")
    )
    ignored = typed.where(F.col("_event_type").isNotNull())
    epoch = "coalesce(" + ", ".join(f"get_json_object({name('raw')}, '{path}')" for path in _TIME_PATHS) + ")"
    event_time = column(event_epoch_to_timestamp_text(epoch))
    return ignored.select(
        deterministic_id(F.lit(SOURCE_NAME), F.col("raw")).alias("event_id"),
        event_time.alias("event_time"),
        F.to_date(event_time).alias("event_date"),
        F.col("_event_type").alias("event_type"),
        F.when(F.get_json_object("raw", "$.event_type").isNotNull(), F.lit("actions"))
        .otherwise(F.lit("platform_event"))
        .alias("delivery"),
        F.get_json_object("raw", "$.event.entityUrn").alias("entity_urn"),
        F.get_json_object("raw", "$.event.aspectName").alias("aspect_name"),
        *lineage(),
        collect_errors().alias(ERRORS_COLUMN),
    )


SPEC = SilverTableSpec(
    table=TABLE,
    source="bronze.datahub_entity_change_events",
    transform=transform,
    reconciles=SOURCE_NAME,
)
