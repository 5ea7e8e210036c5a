"""`gold.change_history`: one row per distinct change, from every source, in one shape.

Rows: DataHub entity changes and proposal events (`silver.datahub_action_requests`),
OpenMetadata field changes plus the change events that carry no field change
(entityCreated, entityDeleted, ...), and DataWorks events. Every change is kept,
no-ops included (an ADD of an open tag is history even if the timeline ignores
it). `change_id` is the silver `event_id`, which is also the recompute group.
Silver writes an `event_id` once (a re-delivered record is a duplicate there),
so the table is append-only: an incremental run types the new rows alone.
`details` keeps the typed specifics of each source as map<string,string>.
DataWorks extension-point events (Pre*, sent before an operation that may never
happen) are flagged `is_pre_event`, and `blocking` when the operation waits for
the extension's answer; every other row is a completed change. DataWorks entity
keys and status names follow silver's rule and the catalog's enums.
Every row also names its entity the same way in every catalog (`entity_name`, and
`entity_key`, which follows an OpenMetadata entity through renames: `gold.entity_names`)
and says what kind of actor made the change (`actor_kind`: person, service, system or
unattributed, by the configured patterns: `gold.governance_rules`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from gold import GROUP, column_names, empty_frame, string_map
from gold.entity_names import (
    datahub_name,
    dataworks_name,
    openmetadata_entity_id,
    openmetadata_name,
    openmetadata_stable_key,
)
from gold.governance_rules import GovernanceRules, default_rules
from pipelines.core.table_specs import Append, GoldTableSpec
from silver import dataworks_catalog as catalog
from silver import dataworks_entity_keys as entity_keys

DATAHUB_CHANGES = "silver.datahub_entity_changes"
DATAHUB_PROPOSALS = "silver.datahub_action_requests"
OM_FIELD_CHANGES = "silver.openmetadata_field_changes"
OM_CHANGE_EVENTS = "silver.openmetadata_change_events"
DATAWORKS_EVENTS = "silver.dataworks_events"
SOURCES = (DATAHUB_CHANGES, DATAHUB_PROPOSALS, OM_FIELD_CHANGES, OM_CHANGE_EVENTS, DATAWORKS_EVENTS)


# OpenMetadata vocabulary mapped onto the DataHub categories/operations where they mean the same.
OM_FIELD_CATEGORIES = {
    "tags": "TAG",
    "owners": "OWNERSHIP",
    "owner": "OWNERSHIP",
    "description": "DOCUMENTATION",
    "domain": "DOMAIN",
    "domains": "DOMAIN",
}
OM_CHANGE_KINDS = {"added": "ADD", "updated": "MODIFY", "deleted": "REMOVE"}
OM_LIFECYCLE_EVENTS = {
    "entityCreated": "CREATE",
    "entityDeleted": "HARD_DELETE",
    "entitySoftDeleted": "SOFT_DELETE",
    "entityRestored": "REINSTATE",
}
OM_OTHER_EVENT_CATEGORY = "CHANGE_EVENT"  # thread, task, suggestion ... events: operation = eventType

DATAWORKS_DETAIL_KEYS = (
    "status",
    "changeType",
    "nodeName",
    "fileName",
    "fileVersion",
    "tableName",
    "maxComputeProject",
    "dagName",
    "dagType",
    "taskType",
    "alarmType",
    "baselineStatus",
    "checkResult",
    "ruleId",
    "ruleName",
)
# Status codes named from the catalog's enums (the one source of the names), per event code.
DATAWORKS_STATUS_ENUMS = {"instance-status-changes": "instance_status", "dag-status-changes": "dag_status"}


def _mapped(column: Column, mapping: dict[str, str], default: Column) -> Column:
    out = default
    for key, value in mapping.items():
        out = F.when(column == key, F.lit(value)).otherwise(out)
    return out


def _om_has_field_changes() -> Column:
    """True when the change description lists a field change (then field_changes holds its rows).

    Decided from the event itself, not by looking up field_changes, so an event
    and its group agree whichever batch they arrive in.
    """
    parts = ("fieldsAdded", "fieldsUpdated", "fieldsDeleted")
    listed = [F.get_json_object(F.col("change_description"), f"$.{part}[0]").isNotNull() for part in parts]
    return reduce(lambda a, b: a | b, listed)


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    """Every change row, grouped by its own id (OpenMetadata events only when they hold no field change)."""
    if source_table not in SOURCES:
        raise ValueError(f"gold.change_history: unknown source table {source_table!r}")
    if source_table == OM_CHANGE_EVENTS:
        rows = rows.filter(~_om_has_field_changes())
    return rows.withColumn(GROUP, F.col("event_id"))


def datahub_changes(df: DataFrame, *extra: Column) -> DataFrame:
    """DataHub entity-change rows in the change history's shape (before `event_date` and the
    pre-event flags), plus `extra` columns of the silver row: the one reading of a DataHub
    change that the tables of one change category narrow (`gold.documentation_history`)."""
    return df.select(
        F.col("event_id").alias("change_id"),
        F.lit("datahub").alias("source"),
        "entity_urn",
        "parent_urn",
        "entity_type",
        "category",
        "operation",
        "modifier",
        "actor",
        "event_time",
        string_map({"impersonator": F.col("impersonator")}, F.col("parameters")).alias("details"),
        *extra,
    )


def _datahub_proposals(df: DataFrame) -> DataFrame:
    return df.select(
        F.col("event_id").alias("change_id"),
        F.lit("datahub").alias("source"),
        F.col("proposal_urn").alias("entity_urn"),
        F.lit(None).cast("string").alias("parent_urn"),
        F.lit("actionRequest").alias("entity_type"),
        F.lit("LIFECYCLE").alias("category"),
        "operation",
        F.col("action_request_type").alias("modifier"),
        "actor",
        "event_time",
        F.coalesce(F.col("parameters"), F.create_map().cast("map<string,string>")).alias("details"),
    )


def om_field_changes(df: DataFrame, *extra: Column) -> DataFrame:
    """OpenMetadata field-change rows in the change history's shape (a `columns.<col>.*` change
    on the column's key, its table the parent), plus `extra` columns of the silver row."""
    is_column = F.col("column_name").isNotNull()
    fqn = F.coalesce(F.col("entity_fqn"), F.regexp_extract("entity_key", r"^openmetadata:[^:]+:(.*)$", 1))
    column_key = F.concat(F.lit("openmetadata:column:"), fqn, F.lit("."), F.col("column_name"))
    return df.select(
        F.col("event_id").alias("change_id"),
        F.lit("openmetadata").alias("source"),
        F.when(is_column, column_key).otherwise(F.col("entity_key")).alias("entity_urn"),
        F.when(is_column, F.col("entity_key")).alias("parent_urn"),
        F.when(is_column, F.lit("column")).otherwise(F.col("entity_type")).alias("entity_type"),
        _mapped(F.col("field_base"), OM_FIELD_CATEGORIES, F.upper("field_base")).alias("category"),
        _mapped(F.col("change_kind"), OM_CHANGE_KINDS, F.upper("change_kind")).alias("operation"),
        F.col("field_name").alias("modifier"),
        "actor",
        "event_time",
        string_map(
            {
                "field_name": F.col("field_name"),
                "change_kind": F.col("change_kind"),
                "column_name": F.col("column_name"),
                "old_value": F.col("old_value"),
                "new_value": F.col("new_value"),
                "change_event_id": F.col("change_event_id"),
                "previous_version": F.col("previous_version"),
                "current_version": F.col("current_version"),
            }
        ).alias("details"),
        *extra,
    )


def _om_field_changes(df: DataFrame) -> DataFrame:
    return om_field_changes(df, *_om_identity(openmetadata_entity_id(df), F.col("column_name")))


def _om_identity(entity_id: Column, column_name: Column) -> list[Column]:
    """What the stable key of an OpenMetadata row is made of (`_identified`)."""
    return [
        entity_id.alias("_entity_id"),
        F.col("entity_type").alias("_om_entity_type"),
        column_name.cast("string").alias("_column"),
    ]


def _om_change_events(df: DataFrame) -> DataFrame:
    lifecycle = F.col("event_type").isin(*OM_LIFECYCLE_EVENTS)
    return df.filter(~_om_has_field_changes()).select(
        F.col("event_id").alias("change_id"),
        F.lit("openmetadata").alias("source"),
        F.col("entity_key").alias("entity_urn"),
        F.lit(None).cast("string").alias("parent_urn"),
        "entity_type",
        F.when(lifecycle, F.lit("LIFECYCLE")).otherwise(F.lit(OM_OTHER_EVENT_CATEGORY)).alias("category"),
        _mapped(F.col("event_type"), OM_LIFECYCLE_EVENTS, F.col("event_type")).alias("operation"),
        F.lit(None).cast("string").alias("modifier"),
        "actor",
        "event_time",
        string_map(
            {
                "event_type": F.col("event_type"),
                "om_event_id": F.col("om_event_id"),
                "entity_id": F.col("entity_id"),
                "previous_version": F.col("previous_version"),
                "current_version": F.col("current_version"),
                "impersonated_by": F.col("impersonated_by"),
            }
        ).alias("details"),
        *_om_identity(F.col("entity_id"), F.lit(None)),
    )


def _dataworks_paths() -> list[str]:
    """Every JSON path of `data` the DataWorks rows read."""
    paths = [f"$.{p}" for p in entity_keys.payload_paths()]
    paths += ["$.status", "$.blockBusiness", *[f"$.{key}" for key in DATAWORKS_DETAIL_KEYS]]
    return list(dict.fromkeys(paths))


def _with_data_fields(df: DataFrame) -> tuple[DataFrame, Callable[[str], Column]]:
    """`df` with the top-level fields of `data` those paths name, parsed in one pass
    (`json_tuple`), and the lookup of a path among them. One `get_json_object` per path
    parsed each row's JSON dozens of times, a large share of the full build. The values are
    `get_json_object`'s (strings unquoted, numbers and objects as their JSON text); a
    nested path reads its top-level field's text."""
    names = list(dict.fromkeys(path[2:].split(".")[0] for path in _dataworks_paths()))
    columns = {name: f"_data_{name}" for name in names}
    parsed = df.select("*", F.json_tuple(F.col("data"), *names).alias(*columns.values()))

    def field(path: str) -> Column:
        head, *rest = path[2:].split(".")
        column = F.col(columns[head])
        return F.get_json_object(column, "$." + ".".join(rest)) if rest else column

    return parsed, field


def dataworks_entity_urn(field: Callable[[str], Column]) -> Column:
    """`dataworks:<kind>:<id>` by the one rule silver's family tables follow
    (`silver.dataworks_entity_keys`); `field` looks up a JSON path of `data`."""
    return entity_keys.entity_key_col(F.col("event_code"), F.col("project_id"), lambda p: field(f"$.{p}"))


def _dataworks_status_name(field: Callable[[str], Column]) -> Column:
    code = catalog.canonical_code_col(F.col("event_code"))
    name = F.lit(None).cast("string")
    for event_code, kind in DATAWORKS_STATUS_ENUMS.items():
        name = F.when(code == event_code, catalog.status_name_col(kind, field("$.status"))).otherwise(name)
    return name


def _dataworks_pre_event() -> tuple[Column, Column]:
    """(is_pre_event, blocking): a catalog extension point is sent before its operation, which
    waits for the extension's answer when the payload's `blockBusiness` says so (assumed when
    absent); an event sent after its operation blocks nothing."""
    is_pre = F.coalesce(
        catalog.extension_point_col(catalog.canonical_code_col(F.col("event_code"))), F.lit(False)
    )
    return is_pre, is_pre & F.coalesce(F.col("_block_business").try_cast("boolean"), F.lit(True))


def _dataworks_events(df: DataFrame) -> DataFrame:
    df, field = _with_data_fields(df)
    df = df.withColumn("_block_business", field("$.blockBusiness"))
    entity = dataworks_entity_urn(field)
    is_pre_event, blocking = _dataworks_pre_event()
    details = {key: field(f"$.{key}") for key in DATAWORKS_DETAIL_KEYS}
    details.update(
        {
            "status_name": _dataworks_status_name(field),
            "event_code": F.col("event_code"),
            "type": F.col("type"),
            "project_id": F.col("project_id"),
            "tenant_id": F.col("tenant_id"),
            "cloud_event_id": F.col("cloud_event_id"),
        }
    )
    return df.select(
        F.col("event_id").alias("change_id"),
        F.lit("dataworks").alias("source"),
        entity.alias("entity_urn"),
        F.lit(None).cast("string").alias("parent_urn"),
        F.regexp_extract(entity, r"^dataworks:([^:]+):", 1).alias("entity_type"),
        "category",
        "action",
        F.col("event_code").alias("modifier"),
        F.col("operator").alias("actor"),
        "event_time",
        string_map(details).alias("details"),
        is_pre_event.alias("is_pre_event"),
        blocking.alias("blocking"),
    ).withColumnRenamed("action", "operation")


_NORMALISERS = {
    DATAHUB_CHANGES: datahub_changes,
    DATAHUB_PROPOSALS: _datahub_proposals,
    OM_FIELD_CHANGES: _om_field_changes,
    OM_CHANGE_EVENTS: _om_change_events,
    DATAWORKS_EVENTS: _dataworks_events,
}
_SCHEMA = (
    "change_id string, source string, entity_urn string, parent_urn string, entity_type string, "
    "category string, operation string, modifier string, actor string, event_time timestamp, "
    "event_date date, details map<string,string>, is_pre_event boolean, blocking boolean, "
    "entity_key string, entity_name string, actor_kind string"
)
COLUMNS = column_names(_SCHEMA)
# the columns' version: a table built before `entity_key`, `entity_name` and `actor_kind` existed
# is built again once (the table spec's revision)
VERSION = "entity-keys-1"


def _identified(rows: DataFrame, rules: GovernanceRules) -> DataFrame:
    """Normalised rows with `entity_key`, `entity_name` and `actor_kind` (`gold.entity_names`)."""
    source, urn = F.col("source"), F.col("entity_urn")
    if "_entity_id" in rows.columns:
        om_key = openmetadata_stable_key(F.col("_om_entity_type"), F.col("_entity_id"), F.col("_column"), urn)
    else:
        om_key = urn
    key = F.when(source == "openmetadata", om_key).otherwise(urn)
    name = (
        F.when(source == "datahub", datahub_name(urn))
        .when(source == "openmetadata", openmetadata_name(urn))
        .otherwise(dataworks_name(urn, F.col("details")))
    )
    return rows.withColumns(
        {"entity_key": key, "entity_name": name, "actor_kind": rules.actor_kind(F.col("actor"))}
    )


def build(sources: dict[str, DataFrame], rules: GovernanceRules | None = None) -> DataFrame:
    """Change rows of the given sources (one per `change_id`), in the contract's shape.

    Each silver table holds an `event_id` once, and the sources' ids hash different inputs
    (the source's name, or an OpenMetadata event's id and field), with one exception: a
    DataHub record's id does not hash its `entityType`, so a proposal could share the id of
    an entity change with the same urn, category, operation, parameters, actor and time.
    Such a proposal yields to the change (`_without_ids_of`). So the union needs no
    `dropDuplicates`, which shuffled and sorted every row: most of a full build.
    """
    normalised = {
        name: normalise(sources[name])
        for name, normalise in _NORMALISERS.items()
        if sources.get(name) is not None
    }
    if not normalised:
        return empty_frame(_SCHEMA)
    if DATAHUB_CHANGES in normalised and DATAHUB_PROPOSALS in normalised:
        normalised[DATAHUB_PROPOSALS] = _without_ids_of(
            normalised[DATAHUB_PROPOSALS], normalised[DATAHUB_CHANGES]
        )
    rules = rules or default_rules()
    changes = reduce(
        DataFrame.unionByName,
        [
            _identified(_with_pre_event_flags(p), rules)
            .withColumn("event_date", F.to_date("event_time"))
            .select(*COLUMNS)
            for p in normalised.values()
        ],
    )
    return changes


def _with_pre_event_flags(rows: DataFrame) -> DataFrame:
    """DataWorks rows carry their flags; every other source's change happened (false, false)."""
    if "is_pre_event" in rows.columns:
        return rows
    return rows.withColumn("is_pre_event", F.lit(False)).withColumn("blocking", F.lit(False))


def _without_ids_of(rows: DataFrame, other: DataFrame) -> DataFrame:
    """`rows` whose `change_id` `other` does not hold. Only ids move: the ids of `other`
    that `rows` share (usually none), then those rows dropped."""
    shared = other.select("change_id").join(rows.select("change_id"), "change_id", "left_semi")
    return rows.join(shared, "change_id", "left_anti")


def spec_for(rules: GovernanceRules | None = None) -> GoldTableSpec:
    """The table built with `rules` (None: the packaged defaults, read when a build runs)."""
    return GoldTableSpec(
        table="gold.change_history",
        sources=SOURCES,
        relevant=relevant,
        build=lambda sources: build(sources, rules),
        group_key="change_id",
        row_key=("change_id",),
        incremental=Append(),
        revision=rules.revision(VERSION, actors=True) if rules is not None else "",
    )


SPEC = spec_for()


def configured_spec(config) -> GoldTableSpec:
    """The table as the run's configuration asks (`governance.actor_kinds`)."""
    return spec_for(GovernanceRules.from_config(config))
