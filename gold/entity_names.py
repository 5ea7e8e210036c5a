"""How an entity is named and known across catalogs: its readable name, its platform, and a key that
stays the same when the catalog renames it.

- DataHub urns never change, so the urn is the key; the name is the urn's own name part
  (`urn:li:dataset:(urn:li:dataPlatform:mysql,shop.orders,PROD)` -> `shop.orders`, a schema
  field `<dataset name>.<field path>`, `urn:li:tag:pii` -> `pii`).
- OpenMetadata keys entities by their fully qualified name, which a rename changes; its change
  events also carry the entity's id, which a rename keeps. The stable key is
  `openmetadata:<entityType>:<entityId>` (a column: `openmetadata:column:<table id>.<column>`),
  the name the FQN the event was sent under. An event without an id keeps its FQN key.
- DataWorks keys are ids already (`dataworks:<kind>:<id>`); the name is the payload's node, file,
  table or workflow name when it has one.

So `entity_name LIKE '%orders%'` finds an entity in every catalog, and `entity_key` follows one
entity through its renames.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

OM_PREFIX = "openmetadata:"
OM_COLUMN_PREFIX = "openmetadata:column:"
_SCHEMA_FIELD = r"^urn:li:schemaField:\((.*),([^,]*)\)$"
_DATASET = r"^urn:li:dataset:\([^,]*,(.*),[^,]*\)$"
_LAST_OF_TUPLE = r"^urn:li:(?:dataJob|dataProcessInstance):\((.*),([^,]*)\)$"
_SECOND_OF_TUPLE = r"^urn:li:[^:]+:\([^,]*,([^,)]*)"
_PLAIN = r"^urn:li:[^:]+:([^(].*)$"
_PLATFORM = r"urn:li:dataPlatform:([^,)]+)"
_TUPLE_PLATFORM = r"^urn:li:(?:chart|dashboard|dataFlow|mlModel|mlFeatureTable):\(([^,:]+),"


def _extract(value: Column, pattern: str, group: int = 1) -> Column:
    return F.nullif(F.regexp_extract(value, pattern, group), F.lit(""))


def _datahub_own_name(urn: Column) -> Column:
    return F.coalesce(
        _extract(urn, _DATASET),
        _extract(urn, _LAST_OF_TUPLE, 2),
        _extract(urn, _SECOND_OF_TUPLE),
        _extract(urn, _PLAIN),
        urn,
    )


def datahub_name(urn: Column) -> Column:
    """The readable name of a DataHub urn (a schema field: its dataset's name, a dot, its path)."""
    field_of = _extract(urn, _SCHEMA_FIELD)
    path = _extract(urn, _SCHEMA_FIELD, 2)
    return F.when(field_of.isNotNull(), F.concat_ws(".", _datahub_own_name(field_of), path)).otherwise(
        _datahub_own_name(urn)
    )


def datahub_platform(urn: Column) -> Column:
    """The data platform a DataHub urn names (a schema field: its dataset's), else null."""
    return F.coalesce(_extract(urn, _PLATFORM), _extract(urn, _TUPLE_PLATFORM))


def openmetadata_name(key: Column) -> Column:
    """The FQN part of `openmetadata:<type>:<fqn>` (a column: `<table fqn>.<column>`)."""
    return _extract(key, r"^openmetadata:[^:]+:(.*)$")


def openmetadata_service(fqn: Column) -> Column:
    """An OpenMetadata entity's service, the first part of its FQN (OpenMetadata's platform)."""
    return _extract(fqn, r"^([^.]+)")


def openmetadata_stable_key(
    entity_type: Column, entity_id: Column, column_name: Column, fallback: Column
) -> Column:
    """`openmetadata:<type>:<id>`, or `openmetadata:column:<id>.<column>` for a column; `fallback`
    (the FQN key) when the event carried no id."""
    entity = F.concat(F.lit(OM_PREFIX), entity_type, F.lit(":"), entity_id)
    column = F.concat(F.lit(OM_COLUMN_PREFIX), entity_id, F.lit("."), column_name)
    keyed = F.when(column_name.isNotNull(), column).otherwise(entity)
    return F.coalesce(F.when(entity_id.isNotNull() & (F.trim(entity_id) != ""), keyed), fallback)


def openmetadata_entity_id(rows: DataFrame) -> Column:
    """The OpenMetadata entity id of a silver row: its `entity_id`, else the change event's
    `entityId` in `raw` (rows typed before silver kept the id), else null."""
    candidates = []
    if "entity_id" in rows.columns:
        candidates.append(F.col("entity_id"))
    if "raw" in rows.columns:
        candidates.append(F.get_json_object(F.col("raw"), "$.entityId"))
    return F.coalesce(*candidates) if candidates else F.lit(None).cast("string")


def dataworks_name(urn: Column, details: Column) -> Column:
    """A DataWorks object's name from the event's payload, else its id."""
    return F.coalesce(
        details["nodeName"],
        details["fileName"],
        details["tableName"],
        details["dagName"],
        _extract(urn, r"^dataworks:[^:]+:(.*)$"),
        urn,
    )
