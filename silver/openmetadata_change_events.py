"""silver.openmetadata_change_events: one typed row per OpenMetadata ChangeEvent.

Keeps the change description as JSON text (the incremental one when present,
because `changeDescription` may merge several edits of one session), and the
entity the event carries (`entity`, JSON text: an `entityCreated`'s tags, owners and
domains open gold's timelines);
`silver.openmetadata_field_changes` explodes it into one row per changed field.

An entity is keyed by its type and fully qualified name in every wire form: the
event's `entityFullyQualifiedName`, else the entity's own `fullyQualifiedName`. The
server stores and sends a copy of each event without `entityFullyQualifiedName`,
`previousVersion` and `domains`, with `entity` as the entity's JSON text rather than
an object, so for most real events the name is only in the entity. Only an event
carrying neither is keyed by its `entityId`; `entity_name_source` says which it was.
The event's `domains` are ids: each becomes the name the entity gives that domain.
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
# What an entity's key was named from (`entity_name_source`); null on corrupt rows.
NAMED_BY_EVENT = "event"  # the event's entityFullyQualifiedName
NAMED_BY_ENTITY = "entity"  # the entity's fullyQualifiedName (object or JSON text)
KEYED_BY_ID = "id"  # no name in the event: the entityId stands in
# The transform's output: a table typed under another revision is typed again from bronze
# (`SilverTableSpec.revision`), so a warehouse keyed before names were read from the entity
# is keyed by name after its next run.
REVISION = "names-from-entity-1"


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


def _text(value: Column) -> Column:
    """A string worth keeping: null when absent, blank or the JSON literal null."""
    return F.when(value.isNotNull() & ~F.trim(value).isin("", "null"), value)


def _entity_field(event: Column, path: str) -> Column:
    """A field of the event's entity: `entity` parses to the entity's JSON text whether it was
    sent as an object or as text, so one JSON path reads both."""
    return F.get_json_object(event["entity"], path)


def _entity_domains(event: Column) -> Column:
    """The domain references the entity lists (`domains` from 1.9, the single `domain` before)."""
    reference = "struct<id:string,name:string,fullyQualifiedName:string>"
    listed = F.from_json(_entity_field(event, "$.domains"), f"array<{reference}>")
    single = F.from_json(_entity_field(event, "$.domain"), reference)
    return F.coalesce(
        listed, F.when(single.isNotNull(), F.array(single)), F.array().cast(f"array<{reference}>")
    )


def _named_by_entity(item: Column, references: Column) -> Column:
    """A domain id the entity names (its FQN, else name), else the item as it is."""
    named = F.transform(
        F.filter(references, lambda r: r["id"] == item),
        lambda r: F.coalesce(r["fullyQualifiedName"], r["name"]),
    )
    return F.coalesce(F.get(named, 0), item)


def _domains(event: Column) -> Column:
    """`domains` (list, newer servers) or the older single `domain`; empty when neither is set.
    Ids (what `ChangeEvent.domains` holds) become the names the entity gives them."""
    listed = F.from_json(event["domains"], "array<string>")
    single = F.when(event["domain"].isNotNull(), F.array(event["domain"]))
    chosen = F.coalesce(listed, single, F.array().cast("array<string>"))
    references = _entity_domains(event)
    return F.transform(chosen, lambda item: _named_by_entity(_reference_name(item), references))


def _fqn_and_source(event: Column) -> tuple[Column, Column]:
    """(the entity's fully qualified name, what it was taken from: `entity_name_source`)."""
    from_event = _text(event["entityFullyQualifiedName"])
    from_entity = _text(_entity_field(event, "$.fullyQualifiedName"))
    source = (
        F.when(from_event.isNotNull(), F.lit(NAMED_BY_EVENT))
        .when(from_entity.isNotNull(), F.lit(NAMED_BY_ENTITY))
        .otherwise(F.lit(KEYED_BY_ID))
    )
    return F.coalesce(from_event, from_entity), source


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
    fqn, name_source = _fqn_and_source(event)
    entity_key = F.concat(
        F.lit("openmetadata:"), event["entityType"], F.lit(":"), F.coalesce(fqn, event["entityId"])
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
        fqn.alias("entity_fqn"),
        entity_key.alias("entity_key"),
        F.when(~F.col("is_corrupt"), name_source).alias("entity_name_source"),
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
    revision=REVISION,
)
