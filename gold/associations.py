"""Association events of every source, normalised into the input of `gold.intervals.build_intervals`.

One `AssociationKind` per timeline says where its events live:
- `silver.datahub_entity_changes`: the kind's categories with ADD/REMOVE (the
  typed parameter column, else the `modifier`), and LIFECYCLE/HARD_DELETE as
  ENTITY_DELETED. OWNER and OWNERSHIP are one category (older/newer servers).
- `silver.openmetadata_field_changes` (tags and owners): the difference of the
  new and old lists, `new - old` are ADDs and `old - new` REMOVEs, so an
  `updated` item adds and removes at once. Tag labels whose `source` is
  `Glossary` are glossary terms in OpenMetadata, so they feed the glossary term
  timeline, the others the tag timeline. A `columns.<col>.tags` change is an
  association of the column entity `openmetadata:column:<table fqn>.<col>`
  with `parent_urn` = the table's entity key.
- `silver.openmetadata_change_events`: `entityDeleted` is ENTITY_DELETED; an
  `entityCreated` ADDs what the created `entity` carries: its tags (its
  columns' tags as associations of the column entities), owners (`owners`, or
  the older single `owner`) and domains (`domains`, or `domain`; else the
  event's own `domains`).
- Domains (OpenMetadata `domain`/`domains` field changes): the references'
  fullyQualifiedName (else name, else id), `new - old` ADDs, `old - new` REMOVEs.

The recompute group (`_group`) is the root entity, `parent_urn` when set else
the entity, so a dataset's deletion and its fields' associations are rebuilt
together.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from gold import GROUP, empty_frame
from gold.intervals import (
    ADD,
    ENTITY_DELETED,
    GROUP_COLUMN,
    REMOVE,
    SUPERSEDE,
    build_intervals,
    extend_intervals,
    interval_columns,
    root_urn,
)
from pipelines.core.table_specs import Extend, GoldTableSpec

DATAHUB_CHANGES = "silver.datahub_entity_changes"
OM_FIELD_CHANGES = "silver.openmetadata_field_changes"
OM_CHANGE_EVENTS = "silver.openmetadata_change_events"

OM_COLUMN_PREFIX = "openmetadata:column:"
OM_GLOSSARY_LABEL_SOURCE = "Glossary"
OM_DELETED_EVENT = "entityDeleted"
OM_CREATED_EVENT = "entityCreated"
OM_LIFECYCLE_EVENTS = (OM_DELETED_EVENT, OM_CREATED_EVENT)
MODIFY = "MODIFY"


@dataclass(frozen=True)
class AssociationKind:
    """Where one association timeline finds its events.

    `keys` maps each gold key column to its typed DataHub parameter column;
    `modifier_key` is the key filled from the ECE `modifier` when the parameter
    is missing. `openmetadata` is `tags`, `glossary` or `owners` (None: no
    OpenMetadata events).
    """

    name: str
    categories: tuple[str, ...]
    keys: tuple[tuple[str, str], ...]
    modifier_key: str
    openmetadata: str | None = None
    modify_supersedes: bool = False  # MODIFY re-keys the association (OWNERSHIP: the type changed)

    @property
    def key_columns(self) -> list[str]:
        return [gold for gold, _ in self.keys]

    @property
    def sources(self) -> tuple[str, ...]:
        if self.openmetadata is None:
            return (DATAHUB_CHANGES,)
        return (DATAHUB_CHANGES, OM_FIELD_CHANGES, OM_CHANGE_EVENTS)


TAG = AssociationKind("tag", ("TAG",), (("tag_urn", "tagUrn"),), "tag_urn", "tags")
OWNERSHIP = AssociationKind(
    "ownership",
    ("OWNER", "OWNERSHIP"),
    (("owner_urn", "ownerUrn"), ("owner_type", "ownerType")),
    "owner_urn",
    "owners",
    modify_supersedes=True,
)
GLOSSARY_TERM = AssociationKind(
    "glossary_term", ("GLOSSARY_TERM",), (("term_urn", "termUrn"),), "term_urn", "glossary"
)
DOMAIN = AssociationKind("domain", ("DOMAIN",), (("domain_urn", "domainUrn"),), "domain_urn", "domains")

_OM_FIELD_BASES = {
    "tags": ("tags",),
    "glossary": ("tags",),
    "owners": ("owners", "owner"),
    "domains": ("domains", "domain"),
}
_OM_REFERENCE = "struct<id:string,type:string,name:string,fullyQualifiedName:string>"
_OM_LABEL = "struct<tagFQN:string,source:string>"
_OM_CREATED = (
    f"struct<tags:array<{_OM_LABEL}>,columns:array<struct<name:string,tags:array<{_OM_LABEL}>>>,"
    f"owners:array<{_OM_REFERENCE}>,owner:{_OM_REFERENCE},domains:array<string>,domain:string>"
)


def _datahub_operations(kind: AssociationKind) -> tuple[str, ...]:
    return (ADD, REMOVE, MODIFY) if kind.modify_supersedes else (ADD, REMOVE)


def _datahub_filter(kind: AssociationKind) -> Column:
    association = F.col("category").isin(*kind.categories) & F.col("operation").isin(
        *_datahub_operations(kind)
    )
    deletion = (F.col("category") == "LIFECYCLE") & (F.col("operation") == "HARD_DELETE")
    return association | deletion


def _om_field_filter(kind: AssociationKind) -> Column:
    relevant = F.col("field_base").isin(*_OM_FIELD_BASES[kind.openmetadata or ""])
    if kind.openmetadata in ("owners", "domains"):
        relevant = relevant & F.col("column_name").isNull()  # columns carry no owners or domains
    return relevant


def relevant(kind: AssociationKind, source_table: str, rows: DataFrame) -> DataFrame:
    """The rows of `source_table` the `kind` timeline uses, with `_group` = their root entity."""
    if source_table == DATAHUB_CHANGES:
        return rows.filter(_datahub_filter(kind)).withColumn(GROUP, root_urn())
    if source_table == OM_FIELD_CHANGES and kind.openmetadata:
        return rows.filter(_om_field_filter(kind)).withColumn(GROUP, F.col("entity_key"))
    if source_table == OM_CHANGE_EVENTS and kind.openmetadata:
        return rows.filter(F.col("event_type").isin(*OM_LIFECYCLE_EVENTS)).withColumn(
            GROUP, F.col("entity_key")
        )
    raise ValueError(f"{kind.name} timeline: unknown source table {source_table!r}")


def _event_columns(kind: AssociationKind) -> list[str]:
    return [
        "source",
        "entity_urn",
        "parent_urn",
        *kind.key_columns,
        "action",
        "event_time",
        "actor",
        "event_id",
    ]


def datahub_events(kind: AssociationKind, changes: DataFrame) -> DataFrame:
    """ECE rows as association events; HARD_DELETE becomes a per-entity ENTITY_DELETED, a MODIFY
    of a re-keyed kind a SUPERSEDE (its `modifier` is then the new second key, e.g. the type)."""
    rows = changes.filter(_datahub_filter(kind))
    is_deletion = F.col("operation") == "HARD_DELETE"
    is_modify = F.col("operation") == MODIFY
    keys = []
    for position, (gold, typed) in enumerate(kind.keys):
        if gold == kind.modifier_key:
            value = F.when(is_modify, F.col(typed)).otherwise(F.coalesce(F.col(typed), F.col("modifier")))
        elif position == 1 and kind.modify_supersedes:
            value = F.when(is_modify, F.coalesce(F.col(typed), F.col("modifier"))).otherwise(F.col(typed))
        else:
            value = F.col(typed)
        keys.append(F.when(~is_deletion, value).cast("string").alias(gold))
    return rows.select(
        F.lit("datahub").alias("source"),
        F.col("entity_urn"),
        F.col("parent_urn"),
        *keys,
        F.when(is_deletion, F.lit(ENTITY_DELETED))
        .when(is_modify, F.lit(SUPERSEDE))
        .otherwise(F.col("operation"))
        .alias("action"),
        F.col("event_time"),
        F.col("actor"),
        F.col("event_id"),
    )


def om_column_key(entity_key: Column, entity_fqn: Column, column_name: Column) -> Column:
    """`openmetadata:column:<table fqn>.<column>` (the fqn taken from the entity key when missing)."""
    fqn = F.coalesce(entity_fqn, F.regexp_extract(entity_key, r"^openmetadata:[^:]+:(.*)$", 1))
    return F.concat(F.lit(OM_COLUMN_PREFIX), fqn, F.lit("."), column_name)


def _om_entity() -> tuple[Column, Column]:
    """(entity_urn, parent_urn) of a field change: the column for `columns.<col>.*`, else the entity."""
    is_column = F.col("column_name").isNotNull()
    entity = F.when(is_column, om_column_key(F.col("entity_key"), F.col("entity_fqn"), F.col("column_name")))
    return entity.otherwise(F.col("entity_key")), F.when(is_column, F.col("entity_key"))


def _list_difference(kind: AssociationKind) -> tuple[Column, Column]:
    """(new values, old values) of a field change as arrays of the association's key struct."""
    if kind.openmetadata == "owners":
        value_type = "array<struct<owner_urn:string,owner_type:string>>"

        def values(column: str) -> Column:
            owners = F.transform(
                F.col(column),
                lambda o: F.struct(
                    F.coalesce(o["name"], o["id"]).alias("owner_urn"), o["type"].alias("owner_type")
                ),
            )
            return F.coalesce(owners, F.array().cast(value_type))

        return values("new_owners"), values("old_owners")

    if kind.openmetadata == "domains":

        def domains(column: str) -> Column:
            names = F.transform(_om_reference_names(F.col(column)), lambda d: F.struct(d.alias("domain_urn")))
            return F.coalesce(names, F.array().cast("array<struct<domain_urn:string>>"))

        return domains("new_value"), domains("old_value")

    glossary = kind.openmetadata == "glossary"
    value_type = f"array<struct<{kind.modifier_key}:string>>"

    def labels(column: str) -> Column:
        def wanted(label: Column) -> Column:
            is_glossary = F.coalesce(label["source"] == OM_GLOSSARY_LABEL_SOURCE, F.lit(False))
            return is_glossary if glossary else ~is_glossary

        chosen = F.transform(
            F.filter(F.col(column), wanted), lambda t: F.struct(t["tagFQN"].alias(kind.modifier_key))
        )
        return F.coalesce(chosen, F.array().cast(value_type))

    return labels("new_tags"), labels("old_tags")


def _om_reference_names(value: Column) -> Column:
    """The names of a JSON list (or single) of references or FQN strings: fullyQualifiedName,
    else name, else id, else the string itself."""
    text = F.trim(value)
    items = F.when(text.startswith("["), F.from_json(text, "array<string>")).when(
        text.isNotNull() & ~text.isin("", "null"), F.array(text)
    )

    def named(item: Column) -> Column:
        is_object = F.trim(item).startswith("{")
        return F.when(
            is_object,
            F.coalesce(
                F.get_json_object(item, "$.fullyQualifiedName"),
                F.get_json_object(item, "$.name"),
                F.get_json_object(item, "$.id"),
            ),
        ).otherwise(F.regexp_replace(item, r'^"(.*)"$', "$1"))

    return F.filter(F.transform(items, named), lambda n: n.isNotNull())


def _om_created_associations(kind: AssociationKind) -> Column:
    """array<struct<entity_urn, parent_urn, key columns...>> of what an `entityCreated`'s
    `entity` carries for this kind (empty for other events)."""
    entity = F.from_json(F.col("entity"), _OM_CREATED)
    table = F.col("entity_key")
    keys = kind.key_columns

    def at_entity(values: Column, key_values) -> Column:
        return F.transform(
            values,
            lambda v: F.struct(
                table.alias("entity_urn"),
                F.lit(None).cast("string").alias("parent_urn"),
                *[value.alias(k) for k, value in zip(keys, key_values(v), strict=True)],
            ),
        )

    element = "struct<entity_urn:string,parent_urn:string," + ",".join(f"{k}:string" for k in keys) + ">"
    empty = F.array().cast(f"array<{element}>")
    if kind.openmetadata in ("tags", "glossary"):
        glossary = kind.openmetadata == "glossary"

        def wanted(label: Column) -> Column:
            is_glossary = F.coalesce(label["source"] == OM_GLOSSARY_LABEL_SOURCE, F.lit(False))
            return is_glossary if glossary else ~is_glossary

        own = at_entity(F.filter(entity["tags"], wanted), lambda t: [t["tagFQN"]])
        columns = F.flatten(
            F.transform(
                entity["columns"],
                lambda c: F.transform(  # an untagged column's null tags would null the flatten
                    F.filter(F.coalesce(c["tags"], F.array().cast(f"array<{_OM_LABEL}>")), wanted),
                    lambda t: F.struct(
                        om_column_key(table, F.col("entity_fqn"), c["name"]).alias("entity_urn"),
                        table.alias("parent_urn"),
                        t["tagFQN"].alias(keys[0]),
                    ),
                ),
            )
        )
        chosen = F.concat(F.coalesce(own, empty), F.coalesce(columns, empty))
    elif kind.openmetadata == "owners":
        owners = F.coalesce(entity["owners"], F.when(entity["owner"].isNotNull(), F.array(entity["owner"])))
        chosen = at_entity(owners, lambda o: [F.coalesce(o["name"], o["id"]), o["type"]])
    else:
        named = F.coalesce(
            _om_reference_names(F.get_json_object(F.col("entity"), "$.domains")),
            _om_reference_names(F.get_json_object(F.col("entity"), "$.domain")),
        )
        listed = F.when(F.size(named) > 0, named).otherwise(F.col("domains"))
        chosen = at_entity(listed, lambda d: [d])
    return F.when(F.col("event_type") == OM_CREATED_EVENT, F.coalesce(chosen, empty)).otherwise(empty)


def openmetadata_events(kind: AssociationKind, field_changes: DataFrame) -> DataFrame:
    """Field changes as association events: `new - old` ADDs, `old - new` REMOVEs."""
    new, old = _list_difference(kind)
    entity, parent = _om_entity()

    def tagged(values: Column, action: str) -> Column:
        return F.transform(values, lambda v: F.struct(v.alias("value"), F.lit(action).alias("action")))

    exploded = field_changes.filter(_om_field_filter(kind)).select(
        entity.alias("entity_urn"),
        parent.alias("parent_urn"),
        "event_time",
        "actor",
        "event_id",
        F.explode(
            F.concat(tagged(F.array_except(new, old), ADD), tagged(F.array_except(old, new), REMOVE))
        ).alias("_change"),
    )
    return exploded.select(
        F.lit("openmetadata").alias("source"),
        "entity_urn",
        "parent_urn",
        *[F.col(f"_change.value.{key}").alias(key) for key in kind.key_columns],
        F.col("_change.action").alias("action"),
        "event_time",
        "actor",
        "event_id",
    )


def openmetadata_lifecycle(kind: AssociationKind, change_events: DataFrame) -> DataFrame:
    """`entityDeleted` change events as per-entity ENTITY_DELETED events, `entityCreated` ones as
    ADDs of the created entity's associations. One projection of the change events serves both,
    so a build reads them once (the deletion fan-out reuses it)."""
    keys = kind.key_columns
    none = F.lit(None).cast("string")
    deleted = F.array(
        F.struct(
            F.col("entity_key").alias("entity_urn"),
            none.alias("parent_urn"),
            *[none.alias(key) for key in keys],
            F.lit(ENTITY_DELETED).alias("action"),
        )
    )
    created = F.transform(
        _om_created_associations(kind),
        lambda a: F.struct(
            a["entity_urn"].alias("entity_urn"),
            a["parent_urn"].alias("parent_urn"),
            *[a[key].alias(key) for key in keys],
            F.lit(ADD).alias("action"),
        ),
    )
    exploded = change_events.filter(F.col("event_type").isin(OM_CREATED_EVENT, OM_DELETED_EVENT)).select(
        "event_time",
        "actor",
        "event_id",
        F.explode(F.when(F.col("event_type") == OM_DELETED_EVENT, deleted).otherwise(created)).alias("_e"),
    )
    return exploded.select(
        F.lit("openmetadata").alias("source"),
        *[F.col(f"_e.{column}").alias(column) for column in ("entity_urn", "parent_urn", *keys, "action")],
        "event_time",
        "actor",
        "event_id",
    )


def association_events(kind: AssociationKind, sources: dict[str, DataFrame]) -> DataFrame:
    """The union of the kind's association events from every source present in `sources`."""
    parts = []
    if sources.get(DATAHUB_CHANGES) is not None:
        parts.append(datahub_events(kind, sources[DATAHUB_CHANGES]))
    if kind.openmetadata and sources.get(OM_FIELD_CHANGES) is not None:
        parts.append(openmetadata_events(kind, sources[OM_FIELD_CHANGES]))
    if kind.openmetadata and sources.get(OM_CHANGE_EVENTS) is not None:
        parts.append(openmetadata_lifecycle(kind, sources[OM_CHANGE_EVENTS]))
    columns = _event_columns(kind)
    if not parts:
        schema = ", ".join(f"{c} {'timestamp' if c == 'event_time' else 'string'}" for c in columns)
        return empty_frame(schema)
    typed = [
        p.select(*[F.col(c).cast("timestamp" if c == "event_time" else "string").alias(c) for c in columns])
        for p in parts
    ]
    return reduce(DataFrame.unionByName, typed)


def build_timeline(kind: AssociationKind, sources: dict[str, DataFrame]) -> DataFrame:
    """The kind's SCD2 timeline rows for the groups present in `sources`."""
    return build_intervals(association_events(kind, sources), kind.key_columns).select(
        *interval_columns(kind.key_columns)
    )


def extend_timeline(
    kind: AssociationKind, rows: DataFrame, sources: dict[str, DataFrame], since=None
) -> DataFrame:
    """The kind's timeline `rows` after the events in `sources` (`extend_intervals`)."""
    return extend_intervals(rows, association_events(kind, sources), kind.key_columns, since).select(
        *interval_columns(kind.key_columns)
    )


def timeline_spec(kind: AssociationKind, table: str) -> GoldTableSpec:
    """The GoldTableSpec of one association timeline: group = root entity, row = one interval."""
    return GoldTableSpec(
        table=table,
        sources=kind.sources,
        relevant=lambda source_table, rows: relevant(kind, source_table, rows),
        build=lambda sources: build_timeline(kind, sources),
        incremental=Extend(
            lambda rows, sources, since: extend_timeline(kind, rows, sources, since),
            # intervals are per `source` (datahub, openmetadata): one feed's events never reorder
            # the other's, so a lagging feed does not make the other's new events late
            ordering_domains=((DATAHUB_CHANGES,), (OM_FIELD_CHANGES, OM_CHANGE_EVENTS)),
        ),
        group_key=GROUP_COLUMN,
        row_key=("timeline_id",),
        partition_by=("is_current",),
    )
