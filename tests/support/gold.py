"""Gold tests: small readable frames with the silver column names of `silver/COLUMNS.md`.

Each `*_SCHEMA` holds only the columns the gold builders read. Records are
dicts (missing keys are null); timestamps are written "HH:MM" on DAY (or a
full "YYYY-MM-DD HH:MM") and `event_date` follows `event_time`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from functools import reduce

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DateType, TimestampType

from pipelines.core.table_specs import GoldTableSpec, RebuildGroups

DAY = "2026-01-01"

DATAHUB_CHANGES_SCHEMA = (
    "event_id string, event_time timestamp, event_date date, entity_urn string, entity_type string, "
    "parent_urn string, category string, operation string, modifier string, actor string, impersonator string, "
    "parameters map<string,string>, tagUrn string, termUrn string, domainUrn string, ownerUrn string, "
    "ownerType string, fieldPath string, description string, documentation string, propertyUrn string, "
    "propertyValues array<string>, fieldUrn string, nullable boolean, modificationCategory string, "
    "status string"
)
ACTION_REQUESTS_SCHEMA = (
    "event_id string, event_time timestamp, event_date date, proposal_urn string, operation string, actor string, "
    "action_request_type string, resource_urn string, resource_type string, sub_resource_type string, "
    "sub_resource string, action_request_status string, action_request_result string, domains array<string>, "
    "owners array<struct<type:string,typeUrn:string,ownerUrn:string>>, "
    "structuredProperties array<struct<propertyUrn:string,values:array<string>>>, tagUrn string, "
    "glossaryTermUrn string, description string, parentNodeUrn string, glossaryEntityName string, "
    "workflowUrn string, fields map<string,array<string>>, expiresAtMs bigint, parameters map<string,string>"
)
_TAG_LABELS = "array<struct<tagFQN:string,source:string,labelType:string,state:string>>"
_OWNER_REFS = "array<struct<id:string,type:string,name:string,fullyQualifiedName:string,displayName:string,deleted:boolean>>"
OM_FIELD_CHANGES_SCHEMA = (
    "event_id string, event_time timestamp, event_date date, change_event_id string, entity_key string, "
    "entity_type string, entity_id string, entity_fqn string, actor string, change_kind string, field_name string, "
    f"field_base string, column_name string, old_value string, new_value string, old_tags {_TAG_LABELS}, "
    f"new_tags {_TAG_LABELS}, old_owners {_OWNER_REFS}, new_owners {_OWNER_REFS}, "
    "previous_version double, current_version double"
)
OM_CHANGE_EVENTS_SCHEMA = (
    "event_id string, event_time timestamp, event_date date, om_event_id string, event_type string, "
    "entity_type string, entity_id string, entity_fqn string, entity_key string, actor string, "
    "impersonated_by string, previous_version double, current_version double, change_description string, "
    "domains array<string>, entity string"
)
AUDIT_EVENTS_SCHEMA = "event_id string, event_time timestamp, event_date date, event_type string, actor string, source_ip string"
DATAWORKS_EVENTS_SCHEMA = (
    "event_id string, event_time timestamp, event_date date, cloud_event_id string, type string, "
    "event_code string, category string, action string, tenant_id long, project_id long, operator string, "
    "data string"
)
INSTANCE_STATUS_CHANGES_SCHEMA = (
    "event_id string, event_time timestamp, event_date date, event_code string, project_id bigint, "
    "task_id bigint, node_id bigint, dag_id bigint, status int, status_name string, "
    "begin_running_time timestamp, finish_time timestamp, changed_at timestamp"
)
DATAWORKS_APPROVALS_SCHEMA = (
    "event_id string, event_time timestamp, event_date date, event_code string, operator string, "
    "entity_key string, process_id string, workflow_id string, status string, assignee string, "
    "assignee_name string, create_time timestamp, process_create_time timestamp, applicant string, "
    "applicant_name string, assignment_category string, title string, apply_reason string"
)
SCHEMAS = {
    "silver.dataworks_instance_status_changes": INSTANCE_STATUS_CHANGES_SCHEMA,
    "silver.datahub_entity_changes": DATAHUB_CHANGES_SCHEMA,
    "silver.datahub_action_requests": ACTION_REQUESTS_SCHEMA,
    "silver.openmetadata_field_changes": OM_FIELD_CHANGES_SCHEMA,
    "silver.openmetadata_change_events": OM_CHANGE_EVENTS_SCHEMA,
    "silver.datahub_audit_events": AUDIT_EVENTS_SCHEMA,
    "silver.dataworks_events": DATAWORKS_EVENTS_SCHEMA,
    "silver.dataworks_approvals": DATAWORKS_APPROVALS_SCHEMA,
}


def at(text: str) -> dt.datetime:
    """UTC datetime of "HH:MM" on DAY or of "YYYY-MM-DD HH:MM"."""
    full = text if len(text) > 5 else f"{DAY} {text}"
    return dt.datetime.strptime(full, "%Y-%m-%d %H:%M").replace(tzinfo=dt.timezone.utc)


def frame(spark: SparkSession, schema: str, records: Iterable[dict]) -> DataFrame:
    """A frame of `schema` from dict records (see the module docstring)."""
    fields = spark.createDataFrame([], schema).schema.fields
    data = []
    for record in records:
        values = dict(record)
        if isinstance(values.get("event_time"), str):
            values["event_time"] = at(values["event_time"])
        if "event_time" in values and values["event_time"] is not None:
            values.setdefault("event_date", values["event_time"].date())
        row = []
        for f in fields:
            value = values.get(f.name)
            if isinstance(f.dataType, TimestampType) and isinstance(value, str):
                value = at(value)
            if isinstance(f.dataType, DateType) and isinstance(value, str):
                value = dt.date.fromisoformat(value)
            row.append(value)
        data.append(tuple(row))
    return spark.createDataFrame(data, schema)


def entity_change(
    event_id: str, time: str, category: str, operation: str, entity: str, actor: str, **params
) -> dict:
    """A `silver.datahub_entity_changes` record for `source`: a schema field's parent is its
    dataset, as silver sets it. Test modules fix their own entity and actor with
    `functools.partial`."""
    parent = entity.split("(", 1)[1].rsplit(",", 1)[0] if entity.startswith("urn:li:schemaField:(") else None
    return dict(
        event_id=event_id,
        event_time=time,
        entity_urn=entity,
        parent_urn=parent,
        category=category,
        operation=operation,
        actor=actor,
        **params,
    )


def source(spark: SparkSession, table: str, *records: dict) -> DataFrame:
    """A frame of the silver `table` (by name) from dict records."""
    return frame(spark, SCHEMAS[table], records)


def rows(df: DataFrame, *columns: str) -> list[tuple]:
    """The chosen columns as sorted tuples, timestamps as "HH:MM", for readable asserts."""
    types = {f.name: f.dataType for f in df.schema.fields}
    shown = [
        F.date_format(c, "HH:mm").alias(c) if isinstance(types[c], TimestampType) else F.col(c)
        for c in columns
    ]
    out = [tuple(r) for r in df.select(*shown).collect()]
    return sorted(out, key=lambda r: tuple("" if v is None else str(v) for v in r))


def build_all(spec: GoldTableSpec, batch: dict[str, DataFrame]) -> DataFrame:
    """A full build: `build` over the relevant rows of every source."""
    return spec.build({name: spec.relevant(name, rows) for name, rows in batch.items()})


def touched_groups(spec: GoldTableSpec, batch: dict[str, DataFrame]) -> DataFrame:
    """The distinct `_group` values the batch's relevant rows touch."""
    groups = [spec.relevant(name, rows_).select("_group") for name, rows_ in batch.items()]
    return reduce(DataFrame.unionByName, groups).distinct()


def build_incrementally(
    spec: GoldTableSpec, first: dict[str, DataFrame], second: dict[str, DataFrame]
) -> DataFrame:
    """What the runner does: build the first batch, then rebuild only the groups the second batch
    touches (and the groups `expand_groups` links to them; `expand_group_values` must find the
    same) from all rows, and replace those groups in the first result."""
    result = build_all(spec, first)
    touched = touched_groups(spec, second)
    everything = {name: spec.relevant(name, first[name].unionByName(second[name])) for name in second}
    linking = spec.incremental if isinstance(spec.incremental, RebuildGroups) else RebuildGroups()
    if linking.expand_groups is not None:
        expanded = linking.expand_groups(touched, everything).distinct()
        if linking.expand_group_values is not None:  # the runner's path for collected groups: the same
            values = sorted(row[0] for row in touched.collect())
            assert linking.expand_group_values(values, everything) == {row[0] for row in expanded.collect()}
        touched = expanded
    history = {name: rows_.join(touched, "_group", "left_semi") for name, rows_ in everything.items()}
    kept = result.join(touched.withColumnRenamed("_group", spec.group_key), spec.group_key, "left_anti")
    return kept.select(*result.columns).unionByName(spec.build(history))


def assert_incremental_equals_full(
    spec: GoldTableSpec, first: dict[str, DataFrame], second: dict[str, DataFrame]
) -> None:
    """The GoldTableSpec contract: group-wise recompute of a second batch == a full rebuild."""
    full = build_all(spec, {name: first[name].unionByName(second[name]) for name in second})
    incremental = build_incrementally(spec, first, second)
    columns = full.columns
    assert incremental.columns == columns
    assert rows(incremental, *columns) == rows(full, *columns)
    keys = list(spec.row_key)
    assert full.count() == full.select(*keys).distinct().count(), "row_key is not unique"
    assert full.filter(F.col(spec.group_key).isNull()).count() == 0, "a row without group"


def build_extended(
    spec: GoldTableSpec, first: dict[str, DataFrame], second: dict[str, DataFrame]
) -> DataFrame:
    """What the runner does for an `extend` job when every event of `second` comes after every
    event of `first`: build the first batch, then extend the touched groups' rows with the
    second batch's rows alone (no history), and replace those groups."""
    result = build_all(spec, first)
    touched = touched_groups(spec, second)
    later = {name: spec.relevant(name, rows_) for name, rows_ in second.items()}  # all in touched groups
    groups = touched.withColumnRenamed("_group", spec.group_key)
    current = result.join(groups, spec.group_key, "left_semi")
    kept = result.join(groups, spec.group_key, "left_anti")
    return kept.unionByName(spec.incremental.extend(current, later, None).select(*result.columns))


def build_since(spec: GoldTableSpec, first: dict[str, DataFrame], second: dict[str, DataFrame]) -> DataFrame:
    """What the runner does for an `extend` job whose second batch may be late: build the first
    batch, then rebuild the touched groups from T on (the earliest event of `second`): their rows
    open at T or later, extended by all their events from T on; their rows closed before T stay."""
    strategy = spec.incremental
    result = build_all(spec, first)
    later = {name: spec.relevant(name, rows_) for name, rows_ in second.items()}
    since = min(
        row[0]
        for rows_ in later.values()
        for row in rows_.agg(F.min("event_time")).collect()
        if row[0] is not None
    )
    touched = touched_groups(spec, second).withColumnRenamed("_group", spec.group_key)
    moment = F.lit(since).cast("timestamp")
    from_since = F.col(strategy.open_flag) | (F.col(strategy.ends) >= moment)
    of_touched = result.join(touched, spec.group_key, "left_semi")
    events = {
        name: spec.relevant(name, first[name].unionByName(rows_))
        .where(F.col("event_time") >= moment)
        .join(touched.withColumnRenamed(spec.group_key, "_group"), "_group", "left_semi")
        for name, rows_ in second.items()
    }
    rebuilt = strategy.extend(of_touched.where(from_since), events, since).select(*result.columns)
    kept = result.join(touched, spec.group_key, "left_anti").unionByName(of_touched.where(~from_since))
    return kept.unionByName(rebuilt)


def assert_rebuilt_since_equals_full(
    spec: GoldTableSpec, first: dict[str, DataFrame], second: dict[str, DataFrame]
) -> None:
    """The `extend` contract for late batches: the touched groups rebuilt from the second batch's
    earliest event on == a full rebuild."""
    full = build_all(spec, {name: first[name].unionByName(second[name]) for name in second})
    rebuilt = build_since(spec, first, second)
    assert rows(rebuilt, *full.columns) == rows(full, *full.columns)


def assert_extended_equals_full(
    spec: GoldTableSpec, first: dict[str, DataFrame], second: dict[str, DataFrame]
) -> None:
    """The `extend` contract: the first batch's rows extended by a later second batch == a full rebuild."""
    full = build_all(spec, {name: first[name].unionByName(second[name]) for name in second})
    extended = build_extended(spec, first, second)
    assert rows(extended, *full.columns) == rows(full, *full.columns)


def build_accumulated(
    spec: GoldTableSpec, first: dict[str, DataFrame], second: dict[str, DataFrame]
) -> DataFrame:
    """What the runner does for an `accumulate` spec: build the first batch, then combine the rows
    of the groups the second batch touches with `build` of the second batch alone (no history)."""
    result = build_all(spec, first)
    touched = touched_groups(spec, second).withColumnRenamed("_group", spec.group_key)
    current = result.join(touched, spec.group_key, "left_semi")
    kept = result.join(touched, spec.group_key, "left_anti")
    return kept.unionByName(
        spec.incremental.combine(current, build_all(spec, second)).select(*result.columns)
    )


def assert_interval_invariants(df: DataFrame, keys: list[str]) -> None:
    """The timeline invariants: `is_current` exactly when `valid_to` is null, `valid_from <= valid_to`,
    at most one current interval per key and no two intervals of a key overlapping."""
    from pyspark.sql import Window

    order = Window.partitionBy(*keys).orderBy("valid_from", "valid_to")
    checked = df.select(
        *keys,
        (F.col("is_current") != F.col("valid_to").isNull()).alias("current_mismatch"),
        (F.col("valid_from") > F.col("valid_to")).alias("backwards"),
        (
            F.lead("valid_from").over(order) < F.coalesce("valid_to", F.lit("9999-12-31").cast("timestamp"))
        ).alias("overlap"),
        F.sum(F.col("is_current").cast("int")).over(Window.partitionBy(*keys)).alias("current"),
    )
    found = checked.agg(
        F.sum(F.col("current_mismatch").cast("int")).alias("current_mismatch"),
        F.sum(F.col("backwards").cast("int")).alias("backwards"),
        F.sum(F.col("overlap").cast("int")).alias("overlap"),
        F.max("current").alias("max_current"),
    ).first()
    assert not found["current_mismatch"], "is_current disagrees with valid_to"
    assert not found["backwards"], "an interval ends before it starts"
    assert not found["overlap"], "two intervals of a key overlap"
    assert (found["max_current"] or 0) <= 1, "more than one current interval for a key"
