"""`gold.sensitive_exposure`: for every entity and schema field and every tag class
(`governance.tag_classes`, e.g. sensitive, pii), when it appeared, when a tag of the class was
first put on it and by whom (the classification latency), when the class last came off and by
whom, and whether it is classified now.

Read from `gold.entity_governance_timeline`: `appeared_at` is the entity's first period (its
creation, or its first event; a field's first own event), `first_classified_at` the start of its
first period holding a tag of the class, `hours_to_classify` the time between. A field never
classified has a row with `first_classified_at` null, so "fields never classified" is a filter.
`last_declassified_at` is the start of the latest period without the class after one with it
(`last_declassified_by` its actor: the removal of the last such tag, or the entity's deletion).

Group: the root entity, as the timeline it reads.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from gold import GROUP, column_names, empty_frame
from gold import entity_governance_timeline as profiles
from gold.governance_rules import GovernanceRules, default_rules
from gold.intervals import GROUP_COLUMN
from pipelines.core.table_specs import GoldTableSpec
from silver.common import deterministic_id

TIMELINE = profiles.SPEC.table
SOURCES = (TIMELINE,)
VERSION = "exposure-1"
SCHEMA = (
    "exposure_id string, source string, entity_urn string, entity_name string, parent_urn string, "
    "entity_type string, platform string, tag_class string, appeared_at timestamp, "
    "first_classified_at timestamp, first_classified_by string, hours_to_classify double, "
    "last_declassified_at timestamp, last_declassified_by string, is_classified boolean, is_live boolean, "
    f"{GROUP_COLUMN} string"
)
COLUMNS = column_names(SCHEMA)


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    if source_table != TIMELINE:
        raise ValueError(f"gold.sensitive_exposure: unknown source table {source_table!r}")
    return rows.withColumn(GROUP, F.col(GROUP_COLUMN))


def build(sources: dict[str, DataFrame], rules: GovernanceRules | None = None) -> DataFrame:
    """One row per entity of the given periods and configured tag class."""
    rules = rules or default_rules()
    periods = sources.get(TIMELINE)
    if periods is None or not rules.class_names:
        return empty_frame(SCHEMA)
    classes = F.array(*[F.lit(name) for name in rules.class_names])
    per_class = periods.select("*", F.explode(classes).alias("tag_class")).withColumn(
        "_held", F.array_contains("tag_classes", F.col("tag_class"))
    )
    key = ["entity_urn", "tag_class"]
    order = Window.partitionBy(*key).orderBy("valid_from")
    marked = per_class.withColumn("_dropped", ~F.col("_held") & F.lag("_held").over(order))
    entity = Window.partitionBy(*key)
    newest = Window.partitionBy(*key).orderBy(F.col("valid_from").desc())
    held_at = F.when(F.col("_held"), F.col("valid_from"))
    dropped_at = F.when(F.col("_dropped"), F.col("valid_from"))
    summary = marked.select(
        *key,
        F.row_number().over(newest).alias("_n"),
        "source",
        "entity_name",
        "parent_urn",
        "entity_type",
        "platform",
        F.min("valid_from").over(entity).alias("appeared_at"),
        F.min(held_at).over(entity).alias("first_classified_at"),
        F.min_by("changed_by", held_at).over(entity).alias("first_classified_by"),
        F.max(dropped_at).over(entity).alias("last_declassified_at"),
        F.max_by("changed_by", dropped_at).over(entity).alias("last_declassified_by"),
        F.col("_held").alias("is_classified"),
        "is_live",
        GROUP_COLUMN,
    ).filter("_n = 1")
    hours = (F.unix_micros("first_classified_at") - F.unix_micros("appeared_at")) / F.lit(3_600_000_000.0)
    return summary.select(
        deterministic_id(F.lit("exposure"), "entity_urn", "tag_class").alias("exposure_id"),
        "source",
        "entity_urn",
        *COLUMNS[3:7],
        "tag_class",
        "appeared_at",
        "first_classified_at",
        "first_classified_by",
        hours.alias("hours_to_classify"),
        *COLUMNS[12:],
    )


def spec_for(rules: GovernanceRules | None = None) -> GoldTableSpec:
    """The table built with `rules` (None: the packaged defaults, read when a build runs)."""
    return GoldTableSpec(
        table="gold.sensitive_exposure",
        sources=SOURCES,
        relevant=relevant,
        build=lambda sources: build(sources, rules),
        group_key=GROUP_COLUMN,
        row_key=("exposure_id",),
        revision=rules.revision(VERSION, classes=True) if rules is not None else "",
    )


SPEC = spec_for()


def configured_spec(config) -> GoldTableSpec:
    """The table as the run's configuration asks (`governance.tag_classes`)."""
    return spec_for(GovernanceRules.from_config(config))
