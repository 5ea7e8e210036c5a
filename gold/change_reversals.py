"""`gold.change_reversals`: associations undone soon after they were made, with both actors.

From the tag, ownership, glossary term and domain timelines, within
`governance.reversal_window_hours`:
- `ADDED_THEN_REMOVED`: an interval that a REMOVE ended within the window of its start (a tag put
  on and taken off again);
- `REMOVED_THEN_RESTORED`: an association added back within the window of its removal (an owner
  replaced and then changed back shows as the replacement ADDED_THEN_REMOVED and the first owner
  REMOVED_THEN_RESTORED).
Ends by an entity's deletion are not undos. `first_by` made the change `second_by` undid, and
each actor's kind comes from `governance.actor_kinds`, so "ingestion undid a steward's edit" is
`WHERE first_by_kind = 'person' AND second_by_kind = 'service'`.

Group: the root entity, as in the timelines it reads.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from gold import GROUP, column_names, empty_frame
from gold.governance_rules import GovernanceRules, default_rules
from gold.intervals import GROUP_COLUMN
from pipelines.core.table_specs import GoldTableSpec
from silver.common import deterministic_id

# timeline -> (association, value column, detail column)
TIMELINES = {
    "gold.tag_timeline": ("tag", "tag_urn", None),
    "gold.ownership_timeline": ("owner", "owner_urn", "owner_type"),
    "gold.glossary_term_timeline": ("glossary_term", "term_urn", None),
    "gold.domain_timeline": ("domain", "domain_urn", None),
}
SOURCES = tuple(TIMELINES)
ADDED_THEN_REMOVED, REMOVED_THEN_RESTORED = "ADDED_THEN_REMOVED", "REMOVED_THEN_RESTORED"
REMOVED = "REMOVED"
VERSION = "reversals-1"
SCHEMA = (
    "reversal_id string, source string, entity_urn string, parent_urn string, association string, "
    "value string, detail string, reversal string, first_at timestamp, first_by string, first_by_kind string, "
    "second_at timestamp, second_by string, second_by_kind string, hours_between double, "
    f"first_event_id string, second_event_id string, {GROUP_COLUMN} string"
)
COLUMNS = column_names(SCHEMA)
_HOUR_MICROS = 3_600_000_000.0


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    if source_table not in TIMELINES:
        raise ValueError(f"gold.change_reversals: unknown source table {source_table!r}")
    return rows.withColumn(GROUP, F.col(GROUP_COLUMN))


def _of(table: str, intervals: DataFrame) -> DataFrame:
    """Consecutive intervals of each association of one timeline, as (earlier end, later start)."""
    association, value, detail = TIMELINES[table]
    shaped = intervals.select(
        "source",
        "entity_urn",
        "parent_urn",
        F.lit(association).alias("association"),
        F.col(value).alias("value"),
        (F.col(detail) if detail else F.lit(None)).cast("string").alias("detail"),
        "valid_from",
        "valid_to",
        "added_by",
        "removed_by",
        "end_reason",
        "valid_from_event_id",
        "valid_to_event_id",
        GROUP_COLUMN,
    )
    key = ["source", "entity_urn", "association", "value", "detail"]
    order = Window.partitionBy(*key).orderBy("valid_from", "valid_from_event_id")
    return shaped.select(
        "*",
        F.lag("valid_to").over(order).alias("_previous_end"),
        F.lag("removed_by").over(order).alias("_previous_by"),
        F.lag("end_reason").over(order).alias("_previous_reason"),
        F.lag("valid_to_event_id").over(order).alias("_previous_event_id"),
    )


def _hours(first: str, second: str):
    return (F.unix_micros(second) - F.unix_micros(first)) / F.lit(_HOUR_MICROS)


def build(sources: dict[str, DataFrame], rules: GovernanceRules | None = None) -> DataFrame:
    """The reversals among the given timelines' intervals."""
    rules = rules or default_rules()
    parts = [_of(t, rows) for t, rows in sources.items() if rows is not None and t in TIMELINES]
    if not parts:
        return empty_frame(SCHEMA)
    pairs = reduce(DataFrame.unionByName, parts)
    window = F.lit(rules.reversal_window_hours)
    common = ["source", "entity_urn", "parent_urn", "association", "value", "detail"]
    undone = pairs.where(
        (F.col("end_reason") == REMOVED) & (_hours("valid_from", "valid_to") <= window)
    ).select(
        *common,
        F.lit(ADDED_THEN_REMOVED).alias("reversal"),
        F.col("valid_from").alias("first_at"),
        F.col("added_by").alias("first_by"),
        F.col("valid_to").alias("second_at"),
        F.col("removed_by").alias("second_by"),
        F.col("valid_from_event_id").alias("first_event_id"),
        F.col("valid_to_event_id").alias("second_event_id"),
        GROUP_COLUMN,
    )
    restored = pairs.where(
        (F.col("_previous_reason") == REMOVED) & (_hours("_previous_end", "valid_from") <= window)
    ).select(
        *common,
        F.lit(REMOVED_THEN_RESTORED).alias("reversal"),
        F.col("_previous_end").alias("first_at"),
        F.col("_previous_by").alias("first_by"),
        F.col("valid_from").alias("second_at"),
        F.col("added_by").alias("second_by"),
        F.col("_previous_event_id").alias("first_event_id"),
        F.col("valid_from_event_id").alias("second_event_id"),
        GROUP_COLUMN,
    )
    both = undone.unionByName(restored)
    return both.select(
        deterministic_id(
            "reversal",
            "source",
            "entity_urn",
            "association",
            "value",
            "detail",
            "first_event_id",
            "second_event_id",
        ).alias("reversal_id"),
        *common,
        "reversal",
        "first_at",
        "first_by",
        rules.actor_kind(F.col("first_by")).alias("first_by_kind"),
        "second_at",
        "second_by",
        rules.actor_kind(F.col("second_by")).alias("second_by_kind"),
        _hours("first_at", "second_at").alias("hours_between"),
        "first_event_id",
        "second_event_id",
        GROUP_COLUMN,
    )


def spec_for(rules: GovernanceRules | None = None) -> GoldTableSpec:
    """The table built with `rules` (None: the packaged defaults, read when a build runs)."""
    return GoldTableSpec(
        table="gold.change_reversals",
        sources=SOURCES,
        relevant=relevant,
        build=lambda sources: build(sources, rules),
        group_key=GROUP_COLUMN,
        row_key=("reversal_id",),
        revision=rules.revision(VERSION, actors=True, window=True) if rules is not None else "",
    )


SPEC = spec_for()


def configured_spec(config) -> GoldTableSpec:
    """The table as the run's configuration asks (`governance.actor_kinds`, `reversal_window_hours`)."""
    return spec_for(GovernanceRules.from_config(config))
