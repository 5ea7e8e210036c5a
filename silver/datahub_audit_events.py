"""silver.datahub_audit_events: typed DataHub audit events (one `usageEvents` element per row).

Every bronze row lands here, corrupt ones with their `bronze_corrupt` error, so the runner can
quarantine them and reconcile `datahub_audit`. The search-response page fields bronze kept per
record (`next_scroll_id`, `page_total`, `page_count`, `scroll_id`) are carried along for the
collection-completeness check (`silver.audit_completeness`).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipelines.core.table_specs import ERRORS_COLUMN, SilverTableSpec
from pipelines.runtime.sql_expressions import name
from silver import audit_completeness
from silver.common import (
    collect_errors,
    corrupt_error,
    deterministic_id,
    epoch_unit,
    event_epoch_to_timestamp,
    lineage,
)

TABLE = "silver.datahub_audit_events"
SOURCE_NAME = "datahub_audit"
# The fields whose values make an audit event itself: what `event_id` hashes, and what the
# collector tells events that tie on DataHub's sort keys apart by.
EVENT_IDENTITY = (
    "eventType",
    "timestamp",
    "actorUrn",
    "entityUrn",
    "aspectName",
    "sourceIP",
    "telemetryTraceId",
    "loginSource",
)

# UsageEventResult fields and the event-specific ones, all as strings: a wrong JSON type stays
# visible (as its JSON text) instead of nulling the record; rawUsageEvent is kept as JSON text.
_SCHEMA = (
    "eventType string, timestamp string, actorUrn string, sourceIP string, eventSource string, "
    "userAgent string, telemetryTraceId string, entityUrn string, entityType string, "
    "aspectName string, loginSource string, rawUsageEvent string"
)


def transform(bronze: DataFrame) -> DataFrame:
    """Type bronze audit rows: snake_case columns, event_time from `timestamp` (ms), `_errors`."""
    parsed = bronze.select("*", F.when(~F.col("is_corrupt"), F.from_json("raw", _SCHEMA)).alias("_event"))
    event_time = event_epoch_to_timestamp(name("_event", "timestamp"))
    event_id = F.when(
        F.col("is_corrupt"), deterministic_id(F.lit(SOURCE_NAME), F.coalesce("raw", "raw_base64"))
    ).otherwise(
        deterministic_id(
            F.lit(SOURCE_NAME),
            *[F.col(f"_event.{field}") for field in EVENT_IDENTITY],
        )
    )
    time_error = F.when(F.col("_event.timestamp").isNotNull() & event_time.isNull(), F.lit("cast:timestamp"))
    return parsed.select(
        event_id.alias("event_id"),
        event_time.alias("event_time"),
        F.to_date(event_time).alias("event_date"),
        epoch_unit(name("_event", "timestamp")).alias("event_time_unit"),
        F.col("_event.eventType").alias("event_type"),
        F.col("_event.actorUrn").alias("actor"),
        F.col("_event.sourceIP").alias("source_ip"),
        F.col("_event.eventSource").alias("event_source"),
        F.col("_event.userAgent").alias("user_agent"),
        F.col("_event.telemetryTraceId").alias("telemetry_trace_id"),
        F.col("_event.entityUrn").alias("entity_urn"),
        F.col("_event.entityType").alias("entity_type"),
        F.col("_event.aspectName").alias("aspect_name"),
        F.col("_event.loginSource").alias("login_source"),
        F.col("_event.rawUsageEvent").alias("raw_usage_event"),
        F.col("next_scroll_id").cast("string").alias("next_scroll_id"),
        F.col("page_total").cast("long").alias("page_total"),
        _page_field(parsed, "page_count", "long"),
        _page_field(parsed, "scroll_id", "string"),
        *lineage(),
        collect_errors(corrupt_error(), time_error).alias(ERRORS_COLUMN),
    )


def _page_field(rows: DataFrame, column: str, dtype: str):
    """A page field bronze keeps, null for bronze rows landed before it was kept."""
    value = F.col(column) if column in rows.columns else F.lit(None)
    return value.cast(dtype).alias(column)


SPEC = SilverTableSpec(
    table=TABLE,
    source="bronze.datahub_audit_events",
    transform=transform,
    reconciles="datahub_audit",
    checks=(audit_completeness.outcomes,),
)
