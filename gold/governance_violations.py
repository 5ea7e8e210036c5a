"""`gold.governance_violations`: one row per interval during which one rule of the rules file
(`gold.violation_rules`) held on one entity.

A rule's *condition* is read from the gold tables that already decide it, so it is decided once:
- `owner_missing`, `domain_missing`: a live period of `gold.entity_governance_timeline` with no
  owner / no domain; consecutive such periods are one condition;
- `sensitive_tag_removed`: a live period holding no tag of the rule's classes after one that held
  one (the classes of `governance.tag_classes`), until a tag of them is back;
- `proposal_pending`: a `gold.proposals` row from `created_at` until `resolved_at` (its resource is
  the entity);
- `unattributed_change`: a `gold.change_history` change whose `actor_kind` is unattributed, until
  the entity's next change by an actor (consecutive unattributed changes are one condition).
An entity's deletion ends its conditions (`is_live` of the profile; for proposals and changes, the
first deletion in `gold.entity_status_timeline` after the condition began).

`condition_since` is when the condition began, `opened_at` = `condition_since` + the rule's
duration, `resolved_at` when it ended (null while it goes on). A condition that ended before its
duration passed never was a violation and has no row. Whether a row is a violation *now* follows
from the warehouse's event clock (`gold.event_clock`): open when `opened_at <= clock` and
`resolved_at` is null or later, so a duration running out rewrites nothing.

`responsible`: the entity's owner when the violation opened (an owner of a field's dataset when
the field has none of its own; the smallest owner urn of several), else the proposal's first
assignee or its author, else the actor who began the condition.

Group: the root entity (`root_urn`), as the timelines; a proposal's is its resource.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from gold import GROUP, column_names, empty_frame, string_map
from gold.governance_rules import GovernanceRules, default_rules
from gold.intervals import GROUP_COLUMN
from gold.proposals import PENDING, proposal_group
from gold.violation_rules import (
    DOMAIN_MISSING,
    OWNER_MISSING,
    PROPOSAL_PENDING,
    SENSITIVE_TAG_REMOVED,
    UNATTRIBUTED_CHANGE,
    ViolationRule,
    digest,
    load_rules,
)
from pipelines.core import defaults
from pipelines.core.table_specs import GoldTableSpec
from silver.common import deterministic_id

PROFILES = "gold.entity_governance_timeline"
OWNERS = "gold.ownership_timeline"
STATUS = "gold.entity_status_timeline"
PROPOSALS = "gold.proposals"
CHANGES = "gold.change_history"
SOURCES = (PROFILES, OWNERS, STATUS, PROPOSALS, CHANGES)
DEFAULT_RULES_FILE = "conf/governance_rules.yaml"
UNATTRIBUTED = "unattributed"
DELETED_STATUSES = ("SOFT_DELETED", "HARD_DELETED")
VERSION = "violations-1"
SCHEMA = (
    "violation_id string, rule_id string, rule_kind string, severity string, source string, "
    "entity_urn string, entity_type string, entity_name string, responsible string, "
    "condition_since timestamp, opened_at timestamp, resolved_at timestamp, details map<string,string>, "
    f"{GROUP_COLUMN} string"
)
COLUMNS = column_names(SCHEMA)
# a condition before the rule's filters and timing: the columns every kind's reader returns
_CONDITION = (
    "source", "entity_urn", "entity_type", "entity_name", "since", "until", "fallback", "discriminator",
    "details", GROUP_COLUMN,
)  # fmt: skip


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    """Every row of the tables the rules read, grouped by its root entity; proposals by their
    resource, changes without their DataWorks pre-events (announcements, not changes)."""
    if source_table in (PROFILES, OWNERS, STATUS):
        return rows.withColumn(GROUP, F.col(GROUP_COLUMN))
    if source_table == PROPOSALS:
        return rows.withColumn(GROUP, proposal_group())
    if source_table == CHANGES:
        changes = rows.filter(~F.coalesce(F.col("is_pre_event"), F.lit(False)))
        return changes.withColumn(GROUP, F.coalesce("parent_urn", "entity_urn"))
    raise ValueError(f"gold.governance_violations: unknown source table {source_table!r}")


# Conditions: intervals during which a flag held, per entity -------------------------------------


def _islands(periods: DataFrame, flag: Column, keep: list[str]) -> DataFrame:
    """Runs of consecutive periods (`valid_from`, `valid_to`) of one entity where `flag` holds, as
    (`since`, `until`, the `keep` columns of the run's first period); `until` null while it goes on,
    `_first` true for a run starting at the entity's first period."""
    entity = Window.partitionBy("source", "entity_urn").orderBy("valid_from", "_tie")
    marked = periods.withColumn("_flag", F.coalesce(flag, F.lit(False))).withColumn(
        "_start", F.col("_flag") & ~F.coalesce(F.lag("_flag").over(entity), F.lit(False))
    )
    numbered = marked.withColumn("_run", F.sum(F.col("_start").cast("int")).over(entity)).withColumn(
        "_first", F.row_number().over(entity) == 1
    )
    run = Window.partitionBy("source", "entity_urn", "_run")
    ongoing = F.max(F.col("valid_to").isNull().cast("int")).over(run) == 1
    return (
        numbered.filter("_flag")
        .select(
            "*",
            F.min("valid_from").over(run).alias("since"),
            F.when(~ongoing, F.max("valid_to").over(run)).alias("until"),
            F.max(F.col("_start") & F.col("_first")).over(run).alias("_new"),
        )
        .filter("_start")
        .select("since", "until", "_new", *keep)
    )


def _profile_conditions(profiles: DataFrame, flag: Column, rule: ViolationRule, details: Column) -> DataFrame:
    periods = profiles.withColumn("_tie", F.col("valid_from_event_id"))
    keep = ["source", "entity_urn", "entity_type", "entity_name", "changed_by", GROUP_COLUMN]
    runs = _islands(periods, F.col("is_live") & flag, keep)
    if rule.new_only:
        runs = runs.filter("_new")
    return runs.select(
        "source", "entity_urn", "entity_type", "entity_name", "since", "until",
        F.col("changed_by").alias("fallback"), F.lit(None).cast("string").alias("discriminator"),
        details, GROUP_COLUMN,
    )  # fmt: skip


def _owner_missing(profiles: DataFrame, rule: ViolationRule) -> DataFrame:
    details = string_map({"begun_by": F.col("changed_by")}).alias("details")
    return _profile_conditions(profiles, F.col("owners") == 0, rule, details)


def _domain_missing(profiles: DataFrame, rule: ViolationRule) -> DataFrame:
    details = string_map({"begun_by": F.col("changed_by")}).alias("details")
    return _profile_conditions(profiles, F.col("domain_urn").isNull(), rule, details)


def _sensitive_tag_removed(profiles: DataFrame, rule: ViolationRule) -> DataFrame:
    classes = F.array(*[F.lit(c) for c in rule.tag_classes])
    held = F.arrays_overlap(F.coalesce("tag_classes", F.array().cast("array<string>")), classes)
    before = Window.partitionBy("source", "entity_urn").orderBy("valid_from", "valid_from_event_id")
    earlier = before.rowsBetween(Window.unboundedPreceding, -1)
    marked = profiles.withColumn("_held", held).withColumn(
        "_held_before", F.coalesce(F.max(F.col("_held") & F.col("is_live")).over(earlier), F.lit(False))
    )
    details = string_map(
        {"tag_classes": F.lit(",".join(rule.tag_classes)), "removed_by": F.col("changed_by")}
    ).alias("details")
    return _profile_conditions(marked, ~F.col("_held") & F.col("_held_before"), rule, details)


def _proposal_pending(proposals: DataFrame, rule: ViolationRule) -> DataFrame:
    ended = F.when(F.col("status") != PENDING, F.coalesce("resolved_at", "created_at"))
    return proposals.filter(F.col("created_at").isNotNull()).select(
        "source",
        F.coalesce("resource_urn", "proposal_urn").alias("entity_urn"),
        F.col("resource_type").alias("entity_type"),
        F.lit(None).cast("string").alias("entity_name"),
        F.col("created_at").alias("since"),
        ended.alias("until"),
        F.coalesce(F.get(F.col("assignees"), 0), F.col("created_by")).alias("fallback"),
        F.col("proposal_urn").alias("discriminator"),
        string_map(
            {
                "proposal_urn": F.col("proposal_urn"),
                "action_request_type": F.col("action_request_type"),
                "created_by": F.col("created_by"),
                "assignees": F.array_join("assignees", ","),
                "status": F.col("status"),
            }
        ).alias("details"),
        proposal_group().alias(GROUP_COLUMN),
    )


def _unattributed_change(changes: DataFrame, rule: ViolationRule) -> DataFrame:
    entity = Window.partitionBy("source", "entity_urn").orderBy("event_time", "change_id")
    periods = changes.select(
        "*",
        F.col("event_time").alias("valid_from"),
        F.lead("event_time").over(entity).alias("valid_to"),
        F.col("change_id").alias("_tie"),
    )
    keep = [
        "source",
        "entity_urn",
        "entity_type",
        "entity_name",
        "change_id",
        "category",
        "operation",
        "_group",
    ]
    runs = _islands(periods, F.col("actor_kind") == UNATTRIBUTED, keep)
    return runs.select(
        "source", "entity_urn", "entity_type", "entity_name", "since", "until",
        F.lit(None).cast("string").alias("fallback"), F.lit(None).cast("string").alias("discriminator"),
        string_map(
            {"first_change_id": F.col("change_id"), "category": F.col("category"), "operation": F.col("operation")}
        ).alias("details"),
        F.col(GROUP).alias(GROUP_COLUMN),
    )  # fmt: skip


# The kinds: which source each reads, and whether deletions must be applied to it afterwards
_READERS = {
    OWNER_MISSING: (PROFILES, _owner_missing, False),
    DOMAIN_MISSING: (PROFILES, _domain_missing, False),
    SENSITIVE_TAG_REMOVED: (PROFILES, _sensitive_tag_removed, False),
    PROPOSAL_PENDING: (PROPOSALS, _proposal_pending, True),
    UNATTRIBUTED_CHANGE: (CHANGES, _unattributed_change, True),
}


def _filtered(conditions: DataFrame, rule: ViolationRule) -> DataFrame:
    if rule.entity_types:
        conditions = conditions.filter(F.col("entity_type").isin(*rule.entity_types))
    if rule.sources:
        conditions = conditions.filter(F.col("source").isin(*rule.sources))
    return conditions


def _ended_by_deletion(conditions: DataFrame, status: DataFrame | None) -> DataFrame:
    """`until` no later than the entity's (or its root's) first deletion after `since`."""
    if status is None:
        return conditions
    deletions = status.filter(F.col("status").isin(*DELETED_STATUSES)).select(
        F.col("entity_urn").alias("_deleted_urn"),
        F.col("valid_from").alias("_deleted_at"),
        F.col(GROUP_COLUMN).alias("_deleted_group"),
    )
    keyed = conditions.withColumn("_key", deterministic_id("source", "entity_urn", "since", "discriminator"))
    matched = keyed.join(
        deletions,
        (F.col(GROUP_COLUMN) == F.col("_deleted_group"))
        & F.col("_deleted_urn").isin(F.col("entity_urn"), F.col(GROUP_COLUMN))
        & (F.col("_deleted_at") >= F.col("since")),
    )
    first = matched.groupBy("_key").agg(F.min("_deleted_at").alias("_deleted_at"))
    return keyed.join(first, "_key", "left").select(
        *[c for c in _CONDITION if c != "until"],
        F.when(F.col("_deleted_at").isNull(), F.col("until"))
        .otherwise(F.least(F.coalesce("until", "_deleted_at"), F.col("_deleted_at")))
        .alias("until"),
    )


def _timed(conditions: DataFrame, rule: ViolationRule) -> DataFrame:
    """The rule's violations among its conditions: those lasting past its duration."""
    opened = F.timestamp_micros(F.unix_micros("since") + F.lit(round(rule.after_hours * 3_600_000_000)))
    return (
        conditions.withColumn("opened_at", opened)
        .filter(F.col("until").isNull() | (F.col("until") > F.col("opened_at")))
        .select(
            deterministic_id(F.lit(rule.id), "entity_urn", "since", "discriminator").alias("violation_id"),
            F.lit(rule.id).alias("rule_id"),
            F.lit(rule.kind).alias("rule_kind"),
            F.lit(rule.severity).alias("severity"),
            "source",
            "entity_urn",
            "entity_type",
            "entity_name",
            "fallback",
            F.col("since").alias("condition_since"),
            "opened_at",
            F.col("until").alias("resolved_at"),
            "details",
            GROUP_COLUMN,
        )  # fmt: skip
    )


def _with_responsible(violations: DataFrame, owners: DataFrame | None) -> DataFrame:
    """`responsible`: an owner of the entity (else of its root) when the violation opened, else the
    condition's own fallback."""
    if owners is None:
        return violations.withColumn("responsible", F.col("fallback"))
    held = owners.select(
        F.col("entity_urn").alias("_owned_urn"),
        F.col("owner_urn").alias("_owner"),
        F.col("valid_from").alias("_from"),
        F.col("valid_to").alias("_to"),
        F.col(GROUP_COLUMN).alias("_owned_group"),
    )
    matched = violations.join(
        held,
        (F.col(GROUP_COLUMN) == F.col("_owned_group"))
        & F.col("_owned_urn").isin(F.col("entity_urn"), F.col(GROUP_COLUMN))
        & (F.col("_from") <= F.col("opened_at"))
        & (F.col("_to").isNull() | (F.col("_to") > F.col("opened_at"))),
        "left",
    )
    # the entity's own owners before its root's, then by urn
    rank = F.struct(
        (F.col("_owned_urn") != F.col("entity_urn")).alias("root"), F.col("_owner").alias("owner")
    )
    chosen = matched.groupBy("violation_id").agg(
        F.min(F.when(F.col("_owner").isNotNull(), rank)).alias("_chosen")
    )
    return violations.join(chosen, "violation_id", "left").withColumn(
        "responsible", F.coalesce(F.col("_chosen.owner"), F.col("fallback"))
    )


def _names(violations: DataFrame, profiles: DataFrame | None) -> DataFrame:
    """A missing `entity_name` (proposals name only their resource) from the entity's profile."""
    if profiles is None:
        return violations
    names = profiles.groupBy(
        F.col("entity_urn").alias("_named_urn"), F.col(GROUP_COLUMN).alias("_named_group")
    ).agg(F.max_by("entity_name", "valid_from").alias("_name"))
    joined = violations.join(
        names,
        (F.col("_named_group") == F.col(GROUP_COLUMN)) & (F.col("_named_urn") == F.col("entity_urn")),
        "left",
    )
    return joined.withColumn("entity_name", F.coalesce("entity_name", "_name"))


def build(sources: dict[str, DataFrame], rules: tuple[ViolationRule, ...] | None = None) -> DataFrame:
    """The violations of every rule among the given groups' rows."""
    rules = default_violation_rules() if rules is None else rules
    parts = []
    for rule in rules:
        table, reader, deletable = _READERS[rule.kind]
        rows = sources.get(table)
        if rows is None:
            continue
        conditions = _filtered(reader(rows, rule).select(*_CONDITION), rule)
        if deletable:
            conditions = _ended_by_deletion(conditions, sources.get(STATUS))
        parts.append(_timed(conditions, rule))
    if not parts:
        return empty_frame(SCHEMA)
    violations = _with_responsible(reduce(DataFrame.unionByName, parts), sources.get(OWNERS))
    return _names(violations, sources.get(PROFILES)).select(*COLUMNS)


def default_violation_rules() -> tuple[ViolationRule, ...]:
    """The packaged rules file, checked against the packaged tag classes."""
    return load_rules(defaults.resolve(DEFAULT_RULES_FILE), default_rules().class_names)


def spec_for(
    rules: tuple[ViolationRule, ...] | None = None, governance: GovernanceRules | None = None
) -> GoldTableSpec:
    """The table evaluating `rules` (None: the packaged rules file, read when a build runs);
    its revision names the rules and the tag classes they read."""
    revision = ""
    if rules is not None:
        governance = governance or default_rules()
        revision = governance.revision(f"{VERSION}:{digest(rules)}", classes=True)
    return GoldTableSpec(
        table="gold.governance_violations",
        sources=SOURCES,
        relevant=relevant,
        build=lambda sources: build(sources, rules),
        group_key=GROUP_COLUMN,
        row_key=("violation_id",),
        revision=revision,
    )


SPEC = spec_for()


def configured_spec(config) -> GoldTableSpec:
    """The table as the run's configuration asks (`governance.rules_file`, `governance.tag_classes`)."""
    governance = GovernanceRules.from_config(config)
    path = config.section("governance")["rules_file"]
    return spec_for(load_rules(defaults.resolve(path), governance.class_names), governance)
