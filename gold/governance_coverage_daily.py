"""`gold.governance_coverage_daily`: per day, catalog, platform, entity type and domain, how many live
entities there were and how many of them had an owner, a glossary term, a domain, a description,
a tag, and a tag of each configured class (`governance.tag_classes`).

A day's figures are the state at its end (after its last event), counted over the periods of
`gold.entity_governance_timeline`: an entity counts on day d when a live period of it began on or
before d and had not ended by the end of d. Days run from the first period to the last change of
any profile, every day (a day without events repeats the day before). Schema fields and
OpenMetadata columns are counted as entities of their own type under their dataset's platform and
domain. DataWorks objects carry no owners, tags, terms or domains in their events: not counted.

Incremental: a new event at time t changes profiles from t on, so it changes the figures of its
day and every later day, and no earlier one. Each day is a group (`day_group`); a run rebuilds the
days from the earliest day of its new events to the last day, starting from the periods still
open then (what the timeline holds now, read as the group `state`), so an in-order batch
rebuilds the last day or two, and a late event the days since it. An event naming a schema
field or an OpenMetadata column, or a field's presence, is the exception: the timeline takes a
field no schema event names to exist with its dataset, so the field's first event makes it exist
from its dataset's first change on, and its first schema event leaves it existing from its own
first event only. Such an event rebuilds the days from its dataset's first day in the timeline
(`REACH_BACK`).
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from gold import column_names, empty_frame
from gold import entity_governance_timeline as profiles
from gold.daily_groups import DailyGroups, ReachBack, day_text
from gold.governance_rules import GovernanceRules, default_rules
from pipelines.core.table_specs import GoldTableSpec
from silver.common import deterministic_id

TIMELINE = profiles.SPEC.table
DATAHUB_CHANGES = "silver.datahub_entity_changes"
OM_FIELD_CHANGES = "silver.openmetadata_field_changes"
OM_CHANGE_EVENTS = "silver.openmetadata_change_events"
# the silver tables whose events change profiles: their days are the days an increment touches
EVENTS = (DATAHUB_CHANGES, OM_FIELD_CHANGES, OM_CHANGE_EVENTS)
SOURCES = (TIMELINE, *EVENTS)
GROUP_COLUMN = "day_group"
VERSION = "coverage-1"
CELL = ("source", "platform", "entity_type", "domain_urn")
COUNTS = ("live_entities", "with_owner", "with_glossary_term", "with_domain", "with_description", "with_tag")
SCHEMA = (
    "coverage_id string, day date, source string, platform string, entity_type string, domain_urn string, "
    "live_entities bigint, with_owner bigint, with_glossary_term bigint, with_domain bigint, "
    "with_description bigint, with_tag bigint, with_tag_class map<string,bigint>, day_group string"
)
COLUMNS = column_names(SCHEMA)
_DATAHUB_CATEGORIES = (
    "TAG", "OWNER", "OWNERSHIP", "GLOSSARY_TERM", "DOMAIN", "LIFECYCLE", "DOCUMENTATION", "TECHNICAL_SCHEMA",
)  # fmt: skip
_OM_FIELDS = ("tags", "owners", "owner", "domains", "domain", "description")
_OM_EVENTS = ("entityCreated", "entityDeleted", "entitySoftDeleted", "entityRestored")


def _last_change(timeline: DataFrame) -> Column:
    """The day of the last change of any profile."""
    return F.to_date(F.max(F.greatest("valid_from", F.coalesce("valid_to", "valid_from"))))


def _field_event_dataset(source_table: str) -> Column:
    """The dataset (the timeline's root entity) of an event that names one of its fields or columns
    or their presence: DataHub's events on a schema field (which silver gives its dataset as
    `parent_urn`) and its schema events; OpenMetadata's column changes. Null for the others."""
    if source_table == DATAHUB_CHANGES:
        names_field = F.col("parent_urn").isNotNull() | (F.col("category") == "TECHNICAL_SCHEMA")
        return F.when(names_field, F.coalesce("parent_urn", "entity_urn"))
    if source_table == OM_FIELD_CHANGES:
        names_column = F.col("column_name").isNotNull() | (F.col("field_name") == "columns")
        return F.when(names_column, F.col("entity_key"))
    return F.lit(None).cast("string")


REACH_BACK = ReachBack(
    entity=_field_event_dataset,
    state_entity=profiles.GROUP_COLUMN,
    first_day=lambda rows: F.to_date(F.min("valid_from")),
)
DAYS = DailyGroups(TIMELINE, _last_change, REACH_BACK)


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    """Every timeline row (group `state`); the silver events that reach profiles, by their day."""
    if source_table == DATAHUB_CHANGES:
        rows = rows.filter(F.col("category").isin(*_DATAHUB_CATEGORIES))
    elif source_table == OM_FIELD_CHANGES:
        rows = rows.filter(
            F.col("field_base").isin(*_OM_FIELDS) | F.col("field_name").isin("columns", "name")
        )
    elif source_table == OM_CHANGE_EVENTS:
        rows = rows.filter(F.col("event_type").isin(*_OM_EVENTS))
    elif source_table != TIMELINE:
        raise ValueError(f"gold.governance_coverage_daily: unknown source table {source_table!r}")
    return DAYS.relevant(source_table, rows)


def _counted(periods: DataFrame, rules: GovernanceRules) -> list[Column]:
    """The 0/1 figures one live period contributes (`COUNTS`, then one per tag class)."""
    flags = [
        F.lit(1),
        (F.col("owners") > 0).cast("int"),
        (F.col("glossary_terms") > 0).cast("int"),
        F.col("domain_urn").isNotNull().cast("int"),
        F.col("has_description").cast("int"),
        (F.col("tags") > 0).cast("int"),
    ]
    flags += [F.array_contains("tag_classes", name).cast("int") for name in rules.class_names]
    return flags


def build(sources: dict[str, DataFrame], rules: GovernanceRules | None = None) -> DataFrame:
    """The figures of every day from the earliest day of the given events to the last day."""
    rules = rules or default_rules()
    timeline = sources.get(TIMELINE)
    events = [sources[s] for s in EVENTS if sources.get(s) is not None]
    if timeline is None or not events:
        return empty_frame(SCHEMA)
    span = DAYS.span(events, timeline)
    names = [*COUNTS, *[f"_class_{i}" for i in range(len(rules.class_names))]]
    live = timeline.where("is_live").crossJoin(F.broadcast(span))
    live = live.where(
        (F.to_date("valid_from") <= F.col("last"))
        & (F.col("valid_to").isNull() | (F.to_date("valid_to") > F.col("first")))
    )
    start = F.greatest(F.to_date("valid_from"), F.col("first"))
    end = F.when(F.to_date("valid_to") <= F.col("last"), F.to_date("valid_to"))
    values = _counted(live, rules)
    sides = F.array(
        F.struct(start.alias("day"), F.array(*values).alias("v")),
        F.struct(end.alias("day"), F.array(*[-v for v in values]).alias("v")),
    )
    deltas = (
        live.select(*CELL, F.explode(sides).alias("_s"))
        .where(F.col("_s.day").isNotNull())
        .select(
            *CELL, F.col("_s.day").alias("day"), *[F.col("_s.v")[i].alias(n) for i, n in enumerate(names)]
        )
        .groupBy(*CELL, "day")
        .agg(*[F.sum(n).alias(n) for n in names])
    )
    calendar = span.select(F.explode(F.sequence("first", "last")).alias("day"))
    cells = deltas.select(*CELL).distinct()
    grid, found = cells.crossJoin(calendar).alias("g"), deltas.alias("d")
    same = reduce(lambda a, b: a & b, [F.col(f"g.{c}").eqNullSafe(F.col(f"d.{c}")) for c in (*CELL, "day")])
    dense = grid.join(found, same, "left").select(
        *[F.col(f"g.{c}").alias(c) for c in (*CELL, "day")], *[F.col(f"d.{n}").alias(n) for n in names]
    )
    order = Window.partitionBy(*CELL).orderBy("day").rowsBetween(Window.unboundedPreceding, 0)
    levels = dense.select(*CELL, "day", *[F.sum(F.coalesce(n, F.lit(0))).over(order).alias(n) for n in names])
    classes = F.map_from_arrays(
        F.array(*[F.lit(name) for name in rules.class_names]).cast("array<string>"),
        F.array(*[F.col(f"_class_{i}") for i in range(len(rules.class_names))]).cast("array<bigint>"),
    )
    return levels.where(F.col("live_entities") > 0).select(
        deterministic_id(day_text(F.col("day")), *CELL).alias("coverage_id"),
        "day",
        *CELL,
        *[F.col(n).cast("bigint").alias(n) for n in COUNTS],
        classes.alias("with_tag_class"),
        day_text(F.col("day")).alias(GROUP_COLUMN),
    )


def spec_for(rules: GovernanceRules | None = None) -> GoldTableSpec:
    """The table built with `rules` (None: the packaged defaults, read when a build runs)."""
    return GoldTableSpec(
        table="gold.governance_coverage_daily",
        sources=SOURCES,
        relevant=relevant,
        build=lambda sources: build(sources, rules),
        group_key=GROUP_COLUMN,
        row_key=("coverage_id",),
        incremental=DAYS.rebuild(),
        revision=rules.revision(VERSION, classes=True) if rules is not None else "",
    )


SPEC = spec_for()


def configured_spec(config) -> GoldTableSpec:
    """The table as the run's configuration asks (`governance.tag_classes`)."""
    return spec_for(GovernanceRules.from_config(config))
