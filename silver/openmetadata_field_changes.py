"""silver.openmetadata_field_changes: one row per added / updated / deleted field of a change event.

Built from `silver.openmetadata_change_events` (typed, deduplicated) so the
tag and ownership timelines read field changes, not raw JSON. OpenMetadata sends
old/new values as JSON text inside JSON (some producers send the value itself);
both arrive here as JSON text. Tag and owner values are parsed into typed lists.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipelines.core.table_specs import ERRORS_COLUMN, SilverTableSpec
from silver.common import LINEAGE, collect_errors, deterministic_id

TAG_LABEL = "struct<tagFQN:string,source:string,labelType:string,state:string>"
ENTITY_REFERENCE = (
    "struct<id:string,type:string,name:string,fullyQualifiedName:string,displayName:string,deleted:boolean>"
)
_ITEM = "struct<name:string,oldValue:string,newValue:string>"
_TAGGED_ITEM = "struct<kind:string,position:int,name:string,oldValue:string,newValue:string>"
_CHANGE_DESCRIPTION = (
    f"struct<fieldsAdded:array<{_ITEM}>,fieldsUpdated:array<{_ITEM}>,fieldsDeleted:array<{_ITEM}>>"
)
_KINDS = (("added", "fieldsAdded"), ("updated", "fieldsUpdated"), ("deleted", "fieldsDeleted"))
_TAG_FIELDS = ("tags",)
_OWNER_FIELDS = ("owners", "owner")
_PARENT_COLUMNS = (
    "event_time",
    "event_date",
    "event_type",
    "entity_key",
    "entity_type",
    "entity_id",
    "entity_fqn",
    "actor",
    "previous_version",
    "current_version",
)


def transform(df: DataFrame) -> DataFrame:
    """Change events -> one row per item of fieldsAdded / fieldsUpdated / fieldsDeleted."""
    description = F.from_json("change_description", _CHANGE_DESCRIPTION)
    items = F.concat(*[_tagged(description[field], kind) for kind, field in _KINDS])
    exploded = df.select(
        F.col("event_id").alias("change_event_id"),
        *_PARENT_COLUMNS,
        *LINEAGE,
        F.explode(items).alias("_item"),
    )
    return exploded.select(*_columns())


def _tagged(items: Column, kind: str) -> Column:
    """The items of one list with their kind and 0-based position (empty when the list is absent)."""
    tagged = F.transform(
        items,
        lambda item, position: F.struct(
            F.lit(kind).alias("kind"),
            position.alias("position"),
            item["name"].alias("name"),
            item["oldValue"].alias("oldValue"),
            item["newValue"].alias("newValue"),
        ),
    )
    return F.coalesce(tagged, F.array().cast(f"array<{_TAGGED_ITEM}>"))


def _present(value: Column) -> Column:
    """A value worth parsing: not null, not blank, not the JSON literal null."""
    return value.isNotNull() & ~F.trim(value).isin("", "null")


def _parse_list(value: Column, element: str) -> Column:
    """A JSON list of `element` objects, or a single object as a one-element list; null if neither."""
    as_list = F.when(F.json_array_length(value).isNotNull(), F.from_json(value, f"array<{element}>"))
    as_object = F.when(F.json_object_keys(value).isNotNull(), F.array(F.from_json(value, element)))
    return F.when(_present(value), F.coalesce(as_list, as_object))


def _typed(field_base: Column, fields: tuple[str, ...], value: Column, element: str) -> Column:
    return F.when(field_base.isin(*fields), _parse_list(value, element))


def _unparsed(
    field_base: Column, fields: tuple[str, ...], value: Column, parsed: Column, name: str
) -> Column:
    """`cast:<name>` when a tag/owner value is present but is not a list (or object) of the expected shape."""
    return F.when(field_base.isin(*fields) & _present(value) & parsed.isNull(), F.lit(f"cast:{name}"))


def _columns() -> list[Column]:
    item = F.col("_item")
    field_name = item["name"]
    field_base = F.element_at(F.split(field_name, r"\."), -1)
    column = F.nullif(F.regexp_extract(field_name, r"^columns\.(.+)\.[^.]+$", 1), F.lit(""))
    old_value, new_value = item["oldValue"], item["newValue"]
    typed = {
        "old_tags": _typed(field_base, _TAG_FIELDS, old_value, TAG_LABEL),
        "new_tags": _typed(field_base, _TAG_FIELDS, new_value, TAG_LABEL),
        "old_owners": _typed(field_base, _OWNER_FIELDS, old_value, ENTITY_REFERENCE),
        "new_owners": _typed(field_base, _OWNER_FIELDS, new_value, ENTITY_REFERENCE),
    }
    errors = collect_errors(
        _unparsed(field_base, _TAG_FIELDS, old_value, typed["old_tags"], "tags"),
        _unparsed(field_base, _TAG_FIELDS, new_value, typed["new_tags"], "tags"),
        _unparsed(field_base, _OWNER_FIELDS, old_value, typed["old_owners"], "owners"),
        _unparsed(field_base, _OWNER_FIELDS, new_value, typed["new_owners"], "owners"),
    )
    return [
        deterministic_id("change_event_id", item["kind"], field_name, item["position"]).alias("event_id"),
        "change_event_id",
        *_PARENT_COLUMNS,
        item["kind"].alias("change_kind"),
        item["position"].alias("position"),
        field_name.alias("field_name"),
        field_base.alias("field_base"),
        F.regexp_replace(column, r'^"(.*)"$', "$1").alias("column_name"),
        old_value.alias("old_value"),
        new_value.alias("new_value"),
        *[expr.alias(name) for name, expr in typed.items()],
        *LINEAGE,
        F.array_distinct(errors).alias(ERRORS_COLUMN),
    ]


SPEC = SilverTableSpec(
    table="silver.openmetadata_field_changes",
    source="silver.openmetadata_change_events",
    transform=transform,
    source_unique=True,  # keyed by the change event's id, the field and its position
)
