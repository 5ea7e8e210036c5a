"""`gold.actors`: every actor seen in any catalog, what kind of account it is, and what it changed.

One row per (source, actor): its kind (`person`, `service` for service and ingestion accounts,
`system`, by the patterns of `governance.actor_kinds`; `unattributed` for the row counting the
changes no actor signed), when it was first and last seen (a change of `gold.change_history`, or
a DataHub audit event such as a login), how many changes it made, per change category, and how
many audit events it caused. "Which changes were made by people?" is a join on `source, actor`,
or `gold.change_history.actor_kind` directly.

Group: the row itself (`actor_id`). Counts, first and last times add up (`Accumulate`): a new
event changes only its actor's row, so incremental runs read no history.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from gold import GROUP, column_names, empty_frame
from gold import change_history as history
from gold.governance_rules import GovernanceRules, default_rules
from pipelines.core.table_specs import Accumulate, GoldTableSpec
from silver.common import deterministic_id

AUDIT_EVENTS = "silver.datahub_audit_events"
SOURCES = (*history.SOURCES, AUDIT_EVENTS)
# the actor column of each source table, and the catalog it belongs to
_ACTOR_OF = {
    history.DATAHUB_CHANGES: ("datahub", "actor"),
    history.DATAHUB_PROPOSALS: ("datahub", "actor"),
    history.OM_FIELD_CHANGES: ("openmetadata", "actor"),
    history.OM_CHANGE_EVENTS: ("openmetadata", "actor"),
    history.DATAWORKS_EVENTS: ("dataworks", "operator"),
    AUDIT_EVENTS: ("datahub", "actor"),
}
SCHEMA = (
    "actor_id string, source string, actor string, actor_kind string, first_seen timestamp, "
    "last_seen timestamp, changes bigint, audit_events bigint, changes_by_category map<string,bigint>"
)
COLUMNS = column_names(SCHEMA)
VERSION = "actors-1"


def actor_id(source: Column, actor: Column) -> Column:
    """The row key: one id per catalog and actor (the unattributed row: a null actor)."""
    return deterministic_id(source, F.nullif(F.trim(actor), F.lit("")))


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    """The rows `gold.change_history` keeps, and every audit event, grouped by their actor's row."""
    if source_table not in _ACTOR_OF:
        raise ValueError(f"gold.actors: unknown source table {source_table!r}")
    catalog, actor = _ACTOR_OF[source_table]
    chosen = rows if source_table == AUDIT_EVENTS else history.relevant(source_table, rows)
    return chosen.withColumn(GROUP, actor_id(F.lit(catalog), F.col(actor).cast("string")))


def _changes(sources: dict[str, DataFrame], rules: GovernanceRules) -> DataFrame | None:
    present = {s: rows for s, rows in sources.items() if s in history.SOURCES and rows is not None}
    if not present:
        return None
    changes = history.build(present, rules)
    return changes.groupBy("source", "actor", "category").agg(
        F.count("*").alias("changes"),
        F.lit(0).cast("bigint").alias("audit_events"),
        F.min("event_time").alias("first_seen"),
        F.max("event_time").alias("last_seen"),
    )


def _audit(audit: DataFrame | None) -> DataFrame | None:
    if audit is None:
        return None
    return audit.groupBy(F.lit("datahub").alias("source"), F.col("actor").cast("string").alias("actor")).agg(
        F.lit(None).cast("string").alias("category"),
        F.lit(0).cast("bigint").alias("changes"),
        F.count("*").alias("audit_events"),
        F.min("event_time").alias("first_seen"),
        F.max("event_time").alias("last_seen"),
    )


def _rows(counted: DataFrame, rules: GovernanceRules) -> DataFrame:
    """Per (source, actor, category) counts -> one row per actor in `COLUMNS`."""
    actor = F.nullif(F.trim("actor"), F.lit(""))  # a blank actor is no actor: one row for both
    per_category = (
        counted.withColumn("actor", actor)
        .groupBy("source", "actor", "category")
        .agg(
            F.min("first_seen").alias("first_seen"),
            F.max("last_seen").alias("last_seen"),
            F.sum("changes").alias("changes"),
            F.sum("audit_events").alias("audit_events"),
        )
    )
    per_actor = per_category.groupBy("source", "actor").agg(
        F.min("first_seen").alias("first_seen"),
        F.max("last_seen").alias("last_seen"),
        F.sum("changes").cast("bigint").alias("changes"),
        F.sum("audit_events").cast("bigint").alias("audit_events"),
        F.map_from_entries(
            F.array_sort(
                F.collect_list(
                    F.when(
                        F.col("category").isNotNull() & (F.col("changes") > 0),
                        F.struct(F.col("category"), F.col("changes").cast("bigint")),
                    )
                )
            )
        ).alias("changes_by_category"),
    )
    return per_actor.select(
        actor_id(F.col("source"), F.col("actor")).alias("actor_id"),
        "source",
        "actor",
        rules.actor_kind(F.col("actor")).alias("actor_kind"),
        "first_seen",
        "last_seen",
        "changes",
        "audit_events",
        "changes_by_category",
    )


def build(sources: dict[str, DataFrame], rules: GovernanceRules | None = None) -> DataFrame:
    """One row per actor of the given sources' rows."""
    rules = rules or default_rules()
    parts = [p for p in (_changes(sources, rules), _audit(sources.get(AUDIT_EVENTS))) if p is not None]
    if not parts:
        return empty_frame(SCHEMA)
    return _rows(reduce(DataFrame.unionByName, parts), rules)


def combine(current: DataFrame, increment: DataFrame) -> DataFrame:
    """An actor's stored row and its row over the new events become one: counts summed per
    category, first and last times widened."""
    both = current.select(*COLUMNS).unionByName(increment.select(*COLUMNS))
    per_category = both.select(
        "actor_id", F.explode_outer("changes_by_category").alias("category", "category_changes")
    )
    categories = (
        per_category.where(F.col("category").isNotNull())
        .groupBy("actor_id", "category")
        .agg(F.sum("category_changes").cast("bigint").alias("changes"))
        .groupBy("actor_id")
        .agg(
            F.map_from_entries(F.array_sort(F.collect_list(F.struct("category", "changes")))).alias("merged")
        )
    )
    totals = both.groupBy("actor_id", "source", "actor", "actor_kind").agg(
        F.min("first_seen").alias("first_seen"),
        F.max("last_seen").alias("last_seen"),
        F.sum("changes").cast("bigint").alias("changes"),
        F.sum("audit_events").cast("bigint").alias("audit_events"),
    )
    empty = F.create_map().cast("map<string,bigint>")
    return totals.join(categories, "actor_id", "left").select(
        *COLUMNS[:-1], F.coalesce("merged", empty).alias("changes_by_category")
    )


def spec_for(rules: GovernanceRules | None = None) -> GoldTableSpec:
    """The table built with `rules` (None: the packaged defaults, read when a build runs)."""
    return GoldTableSpec(
        table="gold.actors",
        sources=SOURCES,
        relevant=relevant,
        build=lambda sources: build(sources, rules),
        group_key="actor_id",
        row_key=("actor_id",),
        incremental=Accumulate(combine),
        revision=rules.revision(VERSION, actors=True) if rules is not None else "",
    )


SPEC = spec_for()


def configured_spec(config) -> GoldTableSpec:
    """The table as the run's configuration asks (`governance.actor_kinds`)."""
    return spec_for(GovernanceRules.from_config(config))
