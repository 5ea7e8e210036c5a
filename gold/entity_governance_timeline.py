"""`gold.entity_governance_timeline`: each entity's governance profile over time, one row per period.

A profile is what coverage and classification questions ask of one entity (a dataset, a schema
field, an OpenMetadata table or column, any other entity an association names): is it live, how
many owners, glossary terms and tags it has, its domain, whether it is described, and which tag
classes (`governance.tag_classes`) its tags fall in. A new period starts whenever any of them
changes; `changed_by` is the actor of that change.

It reads the gold tables that own each rule, so they are decided once:
- owners, glossary terms, tags, domains: the association timelines;
- live: `gold.entity_status_timeline` (created, restored, soft- or hard-deleted); an entity no
  lifecycle event has named yet is live from its first event;
- schema fields: present while `gold.schema_field_timeline` has them (a field no schema event
  names is taken to exist with its dataset: DataHub announces a dataset's columns with the
  dataset), and live only while their dataset is; a field's platform and domain are its dataset's;
- described: the last change of `gold.documentation_history` left a text.
- An OpenMetadata rename (`name` updated) ends the entity under its old FQN (the timelines key
  OpenMetadata entities by FQN, so the renamed entity goes on under its new key;
  `gold.change_history.entity_key` follows it through the rename).
The domain is the one added last among those open (an entity has one domain in DataHub).
`unowned_since`: since when a live entity has had no owner (null when it has one).

Group: the root entity (`root_urn`: the dataset for a field), as in the timelines it reads; a
change rebuilds its dataset's periods from the dataset's rows of those tables.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from gold import GROUP, column_names, empty_frame
from gold.entity_names import (
    OM_PREFIX,
    datahub_name,
    datahub_platform,
    openmetadata_service,
)
from gold.governance_rules import GovernanceRules, default_rules
from gold.intervals import GROUP_COLUMN
from pipelines.core.table_specs import GoldTableSpec
from silver.common import deterministic_id

TAGS = "gold.tag_timeline"
OWNERS = "gold.ownership_timeline"
TERMS = "gold.glossary_term_timeline"
DOMAINS = "gold.domain_timeline"
STATUS = "gold.entity_status_timeline"
FIELDS = "gold.schema_field_timeline"
DOCUMENTATION = "gold.documentation_history"
OM_FIELD_CHANGES = "silver.openmetadata_field_changes"
SOURCES = (TAGS, OWNERS, TERMS, DOMAINS, STATUS, FIELDS, DOCUMENTATION, OM_FIELD_CHANGES)
ASSOCIATIONS = {TAGS: ("d_tag", "tag_urn"), OWNERS: ("d_owner", "owner_urn"), TERMS: ("d_term", "term_urn")}
VERSION = "governance-profile-1"
ACTIVE = "ACTIVE"

SCHEMA = (
    "timeline_id string, source string, entity_urn string, entity_name string, parent_urn string, "
    "entity_type string, platform string, is_live boolean, owners int, glossary_terms int, tags int, "
    "domain_urn string, has_description boolean, tag_classes array<string>, valid_from timestamp, "
    "valid_to timestamp, is_current boolean, changed_by string, valid_from_event_id string, "
    f"unowned_since timestamp, {GROUP_COLUMN} string"
)
COLUMNS = column_names(SCHEMA)


def _renames(rows: DataFrame) -> DataFrame:
    """OpenMetadata `name` updates, twice: under the key the entity had before (its FQN's last part
    replaced), which the rename ends, and under its new key, which it begins (`_key`, `_live`)."""
    chosen = rows.filter(
        (F.col("field_name") == "name") & (F.col("change_kind") == "updated") & F.col("column_name").isNull()
    )
    old, new = _unquoted(F.col("old_value")), _unquoted(F.col("new_value"))
    stem = F.when(
        F.col("entity_fqn").endswith(F.col("_new")),
        F.expr("substring(entity_fqn, 1, length(entity_fqn) - length(_new))"),
    )
    old_key = F.concat(F.lit(OM_PREFIX), F.col("entity_type"), F.lit(":"), stem, old)
    sides = F.array(
        F.struct(old_key.alias("key"), F.lit(0).alias("live")),
        F.struct(F.col("entity_key").alias("key"), F.lit(1).alias("live")),
    )
    return (
        chosen.withColumn("_new", new)
        .withColumn("_old_key", old_key)
        .filter(F.col("_old_key").isNotNull() & (F.col("_old_key") != F.col("entity_key")))
        .select("*", F.explode(sides).alias("_side"))
        .select("*", F.col("_side.key").alias("_key"), F.col("_side.live").alias("_live"))
    )


def _unquoted(value: Column) -> Column:
    """A value OpenMetadata sends JSON-quoted or as is."""
    return F.coalesce(F.get_json_object(F.concat(F.lit('{"v":'), value, F.lit("}")), "$.v"), value)


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    """Every row of the gold tables the profile reads, grouped by its root entity; OpenMetadata
    renames under both the entity they end and the one they begin."""
    if source_table in (TAGS, OWNERS, TERMS, DOMAINS, STATUS, FIELDS):
        return rows.withColumn(GROUP, F.col(GROUP_COLUMN))
    if source_table == DOCUMENTATION:
        return rows.withColumn(GROUP, F.coalesce("parent_urn", "entity_urn"))
    if source_table == OM_FIELD_CHANGES:
        return _renames(rows).withColumn(GROUP, F.col("_key"))
    raise ValueError(f"gold.entity_governance_timeline: unknown source table {source_table!r}")


# Signals: what happened to an entity at an instant, one row each, in one shape --------------------

_VALUES = {
    "own": "boolean",  # the entity's own event (not one of its dataset's, repeated on a field)
    "d_owner": "int",
    "d_term": "int",
    "d_tag": "int",
    "d_domain": "int",
    "domain": "string",
    "status": "int",
    "presence": "int",
    "description": "int",
    "parent_status": "int",
    "parent_d_domain": "int",
    "parent_domain": "string",
}


def _signals(
    frame: DataFrame,
    entity: str,
    parent: str | None,
    time: str,
    event: str,
    actor: str,
    classes: int,
    **values,
) -> DataFrame:
    """`frame` as signal rows: entity, parent, instant, event, actor and the given values (the
    others null; `d_class_<i>`: the change in tags of class i)."""
    columns = [
        F.col(entity).cast("string").alias("entity"),
        (F.col(parent) if parent else F.lit(None)).cast("string").alias("parent"),
        F.col(time).alias("time"),
        F.col(event).cast("string").alias("event_id"),
        F.col(actor).cast("string").alias("actor"),
    ]
    values.setdefault("own", F.lit(True))
    columns += [values.get(name, F.lit(None)).cast(kind).alias(name) for name, kind in _VALUES.items()]
    columns += [
        values.get(f"d_class_{i}", F.lit(None)).cast("int").alias(f"d_class_{i}") for i in range(classes)
    ]
    return frame.select(*columns).filter(F.col("entity").isNotNull() & F.col("time").isNotNull())


def _interval_signals(
    intervals: DataFrame, entity: str, parent: str | None, classes: int, **per_side
) -> DataFrame:
    """A value set where each interval starts and another where it ends: `per_side` maps a value
    name to its (start, end) columns."""
    starts = _signals(
        intervals, entity, parent, "valid_from", "valid_from_event_id", "added_by", classes,
        **{name: start for name, (start, _) in per_side.items()},
    )  # fmt: skip
    ends = _signals(
        intervals.filter(F.col("valid_to").isNotNull()), entity, parent, "valid_to", "valid_to_event_id",
        "removed_by", classes, **{name: end for name, (_, end) in per_side.items() if end is not None},
    )  # fmt: skip
    return starts.unionByName(ends)


def _association_signals(table: str, rows: DataFrame, rules: GovernanceRules, classes: int) -> DataFrame:
    delta, key = ASSOCIATIONS[table]
    per_side = {delta: (F.lit(1), F.lit(-1))}
    if table == TAGS:
        found = rules.tag_classes_of(F.col(key))
        for i, name in enumerate(rules.class_names):
            member = F.array_contains(found, name)
            per_side[f"d_class_{i}"] = (F.when(member, F.lit(1)), F.when(member, F.lit(-1)))
    return _interval_signals(rows, "entity_urn", "parent_urn", classes, **per_side)


def _of_some_length(rows: DataFrame) -> DataFrame:
    """Intervals that hold at some instant: one that begins and ends at once changes no state."""
    return rows.filter(F.col("valid_to").isNull() | (F.col("valid_to") > F.col("valid_from")))


def _domain_signals(rows: DataFrame, classes: int) -> DataFrame:
    return _interval_signals(
        _of_some_length(rows), "entity_urn", "parent_urn", classes,
        d_domain=(F.lit(1), F.lit(-1)), domain=(F.col("domain_urn"), None),
    )  # fmt: skip


def _status_signals(rows: DataFrame, classes: int) -> DataFrame:
    """Live (1) or not (0) where each status period of some length starts."""
    live = (F.col("status") == ACTIVE).cast("int")
    return _signals(
        _of_some_length(rows),
        "entity_urn",
        None,
        "valid_from",
        "valid_from_event_id",
        "changed_by",
        classes,
        status=live,
    )


def _field_entity() -> Column:
    """A field's entity: DataHub's `urn:li:schemaField:(<dataset>,<path>)`, OpenMetadata's column key."""
    datahub = F.concat(
        F.lit("urn:li:schemaField:("), F.col("dataset_urn"), F.lit(","), F.col("field_path"), F.lit(")")
    )
    return F.when(F.col("source") == "datahub", datahub).otherwise(F.col("field_urn"))


def _field_signals(rows: DataFrame, classes: int) -> DataFrame:
    fields = _of_some_length(rows).withColumn("_field", _field_entity())
    return _interval_signals(fields, "_field", "dataset_urn", classes, presence=(F.lit(1), F.lit(0)))


def _description_signals(rows: DataFrame, classes: int) -> DataFrame:
    """Described (1) after a change that leaves a text, not (0) after a removal."""
    described = ((F.col("operation") != "REMOVE") & (F.trim(F.coalesce("value", F.lit(""))) != "")).cast(
        "int"
    )
    return _signals(
        rows,
        "entity_urn",
        "parent_urn",
        "changed_at",
        "change_id",
        "changed_by",
        classes,
        description=described,
    )


def _rename_signals(rows: DataFrame, classes: int) -> DataFrame:
    """The entity under its old FQN is not live from its rename on; under its new one it is."""
    return _signals(rows, "_key", None, "event_time", "event_id", "actor", classes, status=F.col("_live"))


def _inherited(parents: DataFrame, children: DataFrame, classes: int) -> DataFrame:
    """Each dataset's status and domain changes repeated on its fields (`own` false)."""
    joined = children.join(
        parents.select(
            F.col("entity").alias("parent"), "time", "event_id", "actor",
            F.col("status").alias("_parent_status"), F.col("d_domain").alias("_parent_d_domain"),
            F.col("domain").alias("_parent_domain"),
        ),
        "parent",
    )  # fmt: skip
    return _signals(
        joined, "entity", "parent", "time", "event_id", "actor", classes, own=F.lit(False),
        parent_status=F.col("_parent_status"), parent_d_domain=F.col("_parent_d_domain"),
        parent_domain=F.col("_parent_domain"),
    )  # fmt: skip


# Profiles ----------------------------------------------------------------------------------------


def _points(signals: DataFrame, classes: int) -> DataFrame:
    """One row per entity and instant: the changes at that instant summed, the values it set."""
    sums = [F.sum(c).alias(c) for c in ("d_owner", "d_term", "d_tag", "d_domain", "parent_d_domain")]
    sums += [F.sum(f"d_class_{i}").alias(f"d_class_{i}") for i in range(classes)]
    last = [
        F.max_by(c, F.when(F.col(c).isNotNull(), F.col("event_id"))).alias(c)
        for c in ("domain", "status", "description", "parent_status", "parent_domain")
    ]
    points = signals.groupBy("entity", "time").agg(
        F.max("parent").alias("parent"),
        F.max("own").alias("own"),
        F.min("event_id").alias("event_id"),
        F.min_by("actor", "event_id").alias("actor"),
        F.max("presence").alias("presence"),  # a field that ends and starts again at once is present
        *sums,
        *last,
    )
    whole = Window.partitionBy("entity")
    first_own = F.min(F.when(F.col("own"), F.col("time"))).over(whole)
    schema_known = F.max(F.col("presence").isNotNull()).over(whole)
    return points.withColumns(
        {"parent": F.max("parent").over(whole), "_first_own": first_own, "_schema_known": schema_known}
    )


def _profiles(points: DataFrame, rules: GovernanceRules) -> DataFrame:
    """The profile after each point: running counts and the last values set, per entity."""
    order = Window.partitionBy("entity").orderBy("time").rowsBetween(Window.unboundedPreceding, 0)

    def running(column: str) -> Column:
        return F.coalesce(F.sum(column).over(order), F.lit(0)).cast("int")

    def last(column: str) -> Column:
        return F.last(column, ignorenulls=True).over(order)

    key, parent = F.col("entity"), F.col("parent")
    is_om = key.startswith(OM_PREFIX)
    datahub_type = F.nullif(F.regexp_extract(key, r"^urn:li:([^:]+):", 1), F.lit(""))
    om_type = F.regexp_extract(key, r"^openmetadata:([^:]+):", 1)
    om_name = F.regexp_extract(key, r"^openmetadata:[^:]+:(.*)$", 1)
    om_table_name = F.regexp_extract(F.coalesce(parent, key), r"^openmetadata:[^:]+:(.*)$", 1)
    live = (
        F.coalesce(F.col("_status"), F.lit(1))
        * F.coalesce(F.col("_presence"), F.lit(1))
        * F.coalesce(F.col("_parent_status"), F.lit(1))
    ) == 1
    own_domain = F.when(F.col("_domains") > 0, F.col("_domain"))
    parent_domain = F.when(F.col("_parent_domains") > 0, F.col("_parent_domain"))
    stated = points.select(
        "*",
        running("d_owner").alias("owners"),
        running("d_term").alias("glossary_terms"),
        running("d_tag").alias("tags"),
        running("d_domain").alias("_domains"),
        running("parent_d_domain").alias("_parent_domains"),
        *[running(f"d_class_{i}").alias(f"_class_{i}") for i in range(len(rules.class_names))],
        last("domain").alias("_domain"),
        last("parent_domain").alias("_parent_domain"),
        last("status").alias("_status"),
        last("presence").alias("_presence"),
        last("parent_status").alias("_parent_status"),
        last("description").alias("_described"),
    )
    # a field the schema timeline knows appears with its first own event (the state its dataset's
    # earlier points set carried in); one it does not know is taken to exist with its dataset
    stated = stated.filter((F.col("time") >= F.col("_first_own")) | ~F.col("_schema_known"))
    class_names = [F.when(F.col(f"_class_{i}") > 0, F.lit(name)) for i, name in enumerate(rules.class_names)]
    tag_classes = F.filter(F.array(*class_names), lambda c: c.isNotNull()) if class_names else F.array()
    return stated.select(
        F.when(is_om, F.lit("openmetadata")).otherwise(F.lit("datahub")).alias("source"),
        key.alias("entity_urn"),
        F.when(is_om, om_name).otherwise(datahub_name(key)).alias("entity_name"),
        parent.alias("parent_urn"),
        F.when(is_om, om_type).otherwise(datahub_type).alias("entity_type"),
        F.when(is_om, openmetadata_service(om_table_name)).otherwise(datahub_platform(key)).alias("platform"),
        live.alias("is_live"),
        "owners",
        "glossary_terms",
        "tags",
        F.when(parent.isNotNull(), parent_domain).otherwise(own_domain).alias("domain_urn"),
        (F.coalesce(F.col("_described"), F.lit(0)) == 1).alias("has_description"),
        tag_classes.cast("array<string>").alias("tag_classes"),
        F.col("time").alias("valid_from"),
        F.col("actor").alias("changed_by"),
        F.col("event_id").alias("valid_from_event_id"),
        F.coalesce(parent, key).alias(GROUP_COLUMN),
    )


_PROFILE = ("is_live", "owners", "glossary_terms", "tags", "domain_urn", "has_description", "tag_classes")


def _periods(profiles: DataFrame) -> DataFrame:
    """Consecutive points with the same profile merged: a period per change of the profile."""
    order = Window.partitionBy("entity_urn").orderBy("valid_from")
    changed = F.lag("valid_from").over(order).isNull()
    for column in _PROFILE:
        changed = changed | ~F.col(column).eqNullSafe(F.lag(column).over(order))
    periods = (
        profiles.withColumn("_changed", changed)
        .filter("_changed")
        .withColumn("valid_to", F.lead("valid_from").over(order))
    )
    ownerless = F.col("is_live") & (F.col("owners") == 0)
    run_starts = (~ownerless.eqNullSafe(F.lag(ownerless).over(order))).cast("int")
    runs = periods.withColumn("_run", F.sum(run_starts).over(order.rowsBetween(Window.unboundedPreceding, 0)))
    since = F.min("valid_from").over(Window.partitionBy("entity_urn", "_run"))
    return runs.select(
        deterministic_id(F.lit("governance"), "entity_urn", "valid_from_event_id", "valid_from").alias(
            "timeline_id"
        ),
        *COLUMNS[1:14],
        "valid_from",
        "valid_to",
        F.col("valid_to").isNull().alias("is_current"),
        "changed_by",
        "valid_from_event_id",
        F.when(ownerless, since).alias("unowned_since"),
        GROUP_COLUMN,
    )


def build(sources: dict[str, DataFrame], rules: GovernanceRules | None = None) -> DataFrame:
    """The periods of every entity the given sources' rows name."""
    rules = rules or default_rules()
    classes = len(rules.class_names)
    present = {s: rows for s, rows in sources.items() if rows is not None}
    parts = [_association_signals(t, present[t], rules, classes) for t in ASSOCIATIONS if t in present]
    readers = {
        DOMAINS: _domain_signals,
        STATUS: _status_signals,
        FIELDS: _field_signals,
        DOCUMENTATION: _description_signals,
        OM_FIELD_CHANGES: _rename_signals,
    }
    by_table = {t: read(present[t], classes) for t, read in readers.items() if t in present}
    parts += list(by_table.values())
    if not parts:
        return empty_frame(SCHEMA)
    own = reduce(DataFrame.unionByName, parts)
    parent_changes = [by_table[t] for t in (STATUS, DOMAINS, OM_FIELD_CHANGES) if t in by_table]
    children = own.filter(F.col("parent").isNotNull()).select("entity", "parent").distinct()
    signals = own
    if parent_changes:
        signals = own.unionByName(
            _inherited(reduce(DataFrame.unionByName, parent_changes), children, classes)
        )
    return _periods(_profiles(_points(signals, classes), rules)).select(*COLUMNS)


def spec_for(rules: GovernanceRules | None = None) -> GoldTableSpec:
    """The table built with `rules` (None: the packaged defaults, read when a build runs)."""
    return GoldTableSpec(
        table="gold.entity_governance_timeline",
        sources=SOURCES,
        relevant=relevant,
        build=lambda sources: build(sources, rules),
        group_key=GROUP_COLUMN,
        row_key=("timeline_id",),
        revision=rules.revision(VERSION, classes=True) if rules is not None else "",
    )


SPEC = spec_for()


def configured_spec(config) -> GoldTableSpec:
    """The table as the run's configuration asks (`governance.tag_classes`)."""
    return spec_for(GovernanceRules.from_config(config))
