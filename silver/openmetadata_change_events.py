"""silver.openmetadata_change_events: one typed row per OpenMetadata ChangeEvent.

Keeps the change description as JSON text (the incremental one when present,
because `changeDescription` may merge several edits of one session), and the
created entity of an `entityCreated` (`entity`, JSON text: its tags, owners and
domains open gold's timelines);
`silver.openmetadata_field_changes` explodes it into one row per changed field.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipelines.core.table_specs import ERRORS_COLUMN, SilverTableSpec
from pipelines.runtime.sql_expressions import name
from silver.common import (
    cast_error,
    collect_errors,
    corrupt_error,
    deterministic_id,
    epoch_unit,
    event_epoch_to_timestamp,
    lineage,
)

# Every field as string: numbers keep their text (for ids and casts), objects and lists their JSON text.
_CHANGE_EVENT = (
    "id string, eventType string, entityType string, entityId string, entityFullyQualifiedName string, "
    "previousVersion string, currentVersion string, userName string, impersonatedBy string, "
    "timestamp string, changeDescription string, incrementalChangeDescription string, "
    "domains string, domain string, entity string"
)
_EVENT = "_event"  # the parsed ChangeEvent struct


def transform(df: DataFrame) -> DataFrame:
    """Bronze OpenMetadata rows -> typed change events (corrupt rows kept, with `_errors`)."""
    return df.withColumn(_EVENT, F.from_json("raw", _CHANGE_EVENT)).select(*_columns(F.col(_EVENT)))


def _reference_name(item: Column) -> Column:
    """A domain given as an id / FQN string, or as an EntityReference object (its FQN, name or id)."""
    return F.when(
        F.json_object_keys(item).isNotNull(),
        F.coalesce(
            F.get_json_object(item, "$.fullyQualifiedName"),
            F.get_json_object(item, "$.name"),
            F.get_json_object(item, "$.id"),
        ),
    ).otherwise(item)


def _domains(event: Column) -> Column:
    """`domains` (list, newer servers) or the older single `domain`; empty when neither is set."""
    listed = F.from_json(event["domains"], "array<string>")
    single = F.when(event["domain"].isNotNull(), F.array(event["domain"]))
    chosen = F.coalesce(listed, single, F.array().cast("array<string>"))
    return F.transform(chosen, _reference_name)


def _columns(event: Column) -> list[Column]:
    event_time = event_epoch_to_timestamp(name(_EVENT, "timestamp"))
    fallback_id = deterministic_id(
        F.lit("openmetadata"),
        event["entityId"],
        event["eventType"],
        event["timestamp"],
        event["userName"],
        event["currentVersion"],
    )
    event_id = (
        F.when(F.col("is_corrupt"), deterministic_id(F.lit("openmetadata"), F.coalesce("raw", "raw_base64")))
        .when(event["id"].isNotNull(), deterministic_id(F.lit("openmetadata"), event["id"]))
        .otherwise(fallback_id)
    )
    entity_key = F.concat(
        F.lit("openmetadata:"),
        event["entityType"],
        F.lit(":"),
        F.coalesce(event["entityFullyQualifiedName"], event["entityId"]),
    )
    errors = collect_errors(
        corrupt_error(),
        cast_error(event["timestamp"], "long", "timestamp"),
        cast_error(event["previousVersion"], "double", "previousVersion"),
        cast_error(event["currentVersion"], "double", "currentVersion"),
    )
    return [
        event_id.alias("event_id"),
        event_time.alias("event_time"),
        F.to_date(event_time).alias("event_date"),
        epoch_unit(name(_EVENT, "timestamp")).alias("event_time_unit"),
        event["id"].alias("om_event_id"),
        event["eventType"].alias("event_type"),
        event["entityType"].alias("entity_type"),
        event["entityId"].alias("entity_id"),
        event["entityFullyQualifiedName"].alias("entity_fqn"),
        entity_key.alias("entity_key"),
        event["previousVersion"].try_cast("double").alias("previous_version"),
        event["currentVersion"].try_cast("double").alias("current_version"),
        event["userName"].alias("actor"),
        event["impersonatedBy"].alias("impersonated_by"),
        F.when(F.col("is_corrupt"), F.lit(None).cast("array<string>"))
        .otherwise(_domains(event))
        .alias("domains"),
        F.coalesce(event["incrementalChangeDescription"], event["changeDescription"]).alias(
            "change_description"
        ),
        event["entity"].alias("entity"),
        *lineage(),
        errors.alias(ERRORS_COLUMN),
    ]


SPEC = SilverTableSpec(
    table="silver.openmetadata_change_events",
    source="bronze.openmetadata_change_events",
    transform=transform,
    reconciles="openmetadata",
)
