"""The one SCD2 interval builder behind every association timeline (tags, owners, terms, domains).

Input: one row per association event with the columns `source`, `entity_urn`,
`parent_urn`, the association key columns (e.g. `tag_urn`; `owner_urn` +
`owner_type`), `action` (ADD | REMOVE | ENTITY_DELETED), `event_time`,
`actor`, `event_id`. ENTITY_DELETED rows are per entity: their key columns are
ignored and they close every association of that entity and of its fields
(rows whose `parent_urn` is the entity). A SUPERSEDE row opens its association
and closes the entity's other associations that share its first key column
(an owner whose ownership type changed: the owner under its previous type ends
where the owner under the new type begins), as REMOVEs at that time; a
REMOVE_ALL closes them all (a structured property removed whatever its values).
A RENAME closes like a REMOVE, with end reason RENAMED.

Order: `event_time`, then the action (ADD before REMOVE before ENTITY_DELETED:
an association must exist before it can be removed, and a deletion is
terminal), then `event_id`. Identical events count once. ADD on an open
association and REMOVE/DELETE on a closed one are no-ops, so the state after an
event is simply "open" when its action is ADD: an interval starts at an ADD
whose predecessor is not an ADD and ends at the first later non-ADD event. An
ADD and a REMOVE at the same instant give a zero-length interval
(valid_from = valid_to), kept as a record that is never visible "as of" a time.
Everything is window functions over (source, entity, association) partitions,
so the cost grows with the events, never with a Python loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from gold import column_names
from silver.common import deterministic_id

ADD, REMOVE, ENTITY_DELETED = "ADD", "REMOVE", "ENTITY_DELETED"
RENAME = "RENAME"
SUPERSEDE = "SUPERSEDE"  # input only: an ADD that closes the entity's siblings under the first key
REMOVE_ALL = "REMOVE_ALL"  # input only: a REMOVE of the entity's siblings under the first key too
ACTION_ORDER = (ADD, REMOVE, RENAME, ENTITY_DELETED)  # processing order of events with equal event_time
END_REASONS = {REMOVE: "REMOVED", RENAME: "RENAMED", ENTITY_DELETED: "ENTITY_DELETED"}
GROUP_COLUMN = "root_urn"  # the dataset (or entity) a timeline row belongs to: the recompute unit
ROW_KEY = "timeline_id"


def root_urn() -> Column:
    """The recompute group of an association: its parent dataset when it has one, else the entity."""
    return F.coalesce(F.col("parent_urn"), F.col("entity_urn"))


# The columns every interval row ends with, after its association's key columns, with their types.
INTERVAL_TAIL_SCHEMA = (
    "valid_from timestamp, valid_to timestamp, is_current boolean, added_by string, removed_by string, "
    f"end_reason string, valid_from_event_id string, valid_to_event_id string, {GROUP_COLUMN} string"
)
INTERVAL_TAIL = column_names(INTERVAL_TAIL_SCHEMA)


def interval_columns(association_key: Sequence[str]) -> list[str]:
    """Output columns of `build_intervals`, in order."""
    return [ROW_KEY, "source", "entity_urn", "parent_urn", *association_key, *INTERVAL_TAIL]


def _action_rank(action: Column) -> Column:
    rank = F.lit(len(ACTION_ORDER))
    for position, name in reversed(list(enumerate(ACTION_ORDER))):
        rank = F.when(action == name, F.lit(position)).otherwise(rank)
    return rank


def _deduplicated(events: DataFrame, keys: list[str]) -> DataFrame:
    """One row per distinct event (same event_id, or same identity with another id), with
    `_deletion` = is it an ENTITY_DELETED event.

    `_deletion` is computed by the aggregate, not read from `action`, on purpose: the fan-out
    splits these rows three ways (association events, associations, deletions), and a filter on
    `action`, a grouping column, would be pushed below the aggregate into the source scans, so
    every source would be read three times. A filter on an aggregate's result stays above it:
    the three branches share one aggregate, and Spark reuses its exchange (one scan a source)."""
    identity = ["source", "entity_urn", "parent_urn", *keys, "action", "event_time", "actor"]
    return events.groupBy(*identity).agg(
        F.min("event_id").alias("event_id"),
        F.max(F.col("action") == ENTITY_DELETED).alias("_deletion"),
        F.max(F.col("action").isin(SUPERSEDE, REMOVE_ALL)).alias("_supersede"),
    )


def _fan_out_deletions(events: DataFrame, keys: list[str]) -> DataFrame:
    """Association events plus, per entity deletion, a closing event on every association of that
    entity or of its fields. A deletion of an entity with no association yields nothing.

    Every branch reads all of `events`' columns (see `_deduplicated`): the associations are the
    first event of each, not a group-by that would drop `event_id`, and the deletions' join key
    is null on other rows rather than filtered by `action`, so that no branch prunes a column
    or gets a filter pushed into its scans that the others lack."""
    is_deletion = F.col("_deletion")
    association = Window.partitionBy("source", "entity_urn", *keys)
    association_events = events.filter(~is_deletion).withColumn(
        "parent_urn", F.max("parent_urn").over(association)
    )
    associations = association_events.withColumn(
        "_n", F.row_number().over(association.orderBy("event_time", "event_id"))
    ).filter(F.col("_n") == 1)
    # each association is reachable from its own entity and from its parent: two equi-join keys
    targets = associations.select(
        "source",
        "entity_urn",
        "parent_urn",
        *keys,
        F.explode(
            F.array_distinct(F.filter(F.array("entity_urn", "parent_urn"), lambda u: u.isNotNull()))
        ).alias("deleted_urn"),
    )
    deletions = events.select(
        "source",
        F.when(is_deletion, F.col("entity_urn")).alias("deleted_urn"),
        "event_time",
        "actor",
        "event_id",
    ).filter(F.col("deleted_urn").isNotNull())
    closing = targets.join(deletions, ["source", "deleted_urn"]).select(
        "source",
        "entity_urn",
        "parent_urn",
        *keys,
        F.lit(ENTITY_DELETED).alias("action"),
        "event_time",
        "actor",
        "event_id",
    )
    columns = ["source", "entity_urn", "parent_urn", *keys, "action", "event_time", "actor", "event_id"]
    association_events = association_events.withColumn(
        "action",
        F.when(F.col("action") == SUPERSEDE, F.lit(ADD))
        .when(F.col("action") == REMOVE_ALL, F.lit(REMOVE))
        .otherwise(F.col("action")),
    )
    parts = [association_events.select(*columns), closing.select(*columns)]
    if len(keys) > 1:
        parts.append(_superseded(associations, association_events, keys).select(*columns))
    return reduce(DataFrame.unionByName, parts)


def _superseded(associations: DataFrame, events: DataFrame, keys: list[str]) -> DataFrame:
    """A REMOVE, at the time of each SUPERSEDE event, of every other association of its entity
    that shares its first key column (a REMOVE of one not open then changes nothing)."""
    first, rest = keys[0], keys[1:]
    supersedes = events.filter(F.col("_supersede")).select(
        "source",
        "entity_urn",
        first,
        *[F.col(k).alias(f"_new_{k}") for k in rest],
        "event_time",
        "actor",
        "event_id",
    )
    siblings = associations.select("source", "entity_urn", "parent_urn", *keys)
    differs = reduce(lambda a, b: a | b, [~F.col(k).eqNullSafe(F.col(f"_new_{k}")) for k in rest])
    return (
        siblings.join(supersedes, ["source", "entity_urn", first])
        .filter(differs)
        .select(
            "source",
            "entity_urn",
            "parent_urn",
            *keys,
            F.lit(REMOVE).alias("action"),
            "event_time",
            "actor",
            "event_id",
        )
    )


def _typed(events: DataFrame, keys: list[str]) -> DataFrame:
    """The input columns cast to their types; rows without a known action or a time dropped."""
    return events.select(
        F.col("source").cast("string").alias("source"),
        F.col("entity_urn").cast("string").alias("entity_urn"),
        F.col("parent_urn").cast("string").alias("parent_urn"),
        *[
            F.when(F.col("action") != ENTITY_DELETED, F.col(k).cast("string")).alias(k)
            for k in keys  # deletions are per entity: their key columns never matter
        ],
        F.col("action").cast("string").alias("action"),
        F.col("event_time").cast("timestamp").alias("event_time"),
        F.col("actor").cast("string").alias("actor"),
        F.col("event_id").cast("string").alias("event_id"),
    ).filter(F.col("action").isin(*ACTION_ORDER, SUPERSEDE, REMOVE_ALL) & F.col("event_time").isNotNull())


def _intervals(ordered_events: DataFrame, keys: list[str]) -> DataFrame:
    """The intervals of the (deduplicated, fanned-out) events of each association."""
    ordered_events = ordered_events.withColumn("_rank", _action_rank(F.col("action")))
    order = Window.partitionBy("source", "entity_urn", *keys).orderBy("event_time", "_rank", "event_id")
    is_add = F.col("action") == ADD
    previous_action = F.lag("action").over(order)
    closing = F.first(
        F.when(~is_add, F.struct("event_time", "action", "actor", "event_id")), ignorenulls=True
    ).over(order.rowsBetween(1, Window.unboundedFollowing))

    starts = (
        ordered_events.withColumn("_previous", previous_action)
        .withColumn("_closing", closing)
        .filter(is_add & (F.col("_previous").isNull() | (F.col("_previous") != ADD)))
    )
    end_action = F.col("_closing.action")
    return starts.select(
        deterministic_id(F.lit("interval"), "source", "entity_urn", *keys, "event_id").alias(ROW_KEY),
        "source",
        "entity_urn",
        "parent_urn",
        *keys,
        F.col("event_time").alias("valid_from"),
        F.col("_closing.event_time").alias("valid_to"),
        F.col("_closing").isNull().alias("is_current"),
        F.col("actor").alias("added_by"),
        F.col("_closing.actor").alias("removed_by"),
        F.when(end_action == REMOVE, F.lit(END_REASONS[REMOVE]))
        .when(end_action == RENAME, F.lit(END_REASONS[RENAME]))
        .when(end_action == ENTITY_DELETED, F.lit(END_REASONS[ENTITY_DELETED]))
        .alias("end_reason"),
        F.col("event_id").alias("valid_from_event_id"),
        F.col("_closing.event_id").alias("valid_to_event_id"),
        root_urn().alias(GROUP_COLUMN),
    )


def build_intervals(events: DataFrame, association_key: Sequence[str]) -> DataFrame:
    """SCD2 intervals (`interval_columns(association_key)`) of every association in `events`.

    Example: `build_intervals(tag_events, ["tag_urn"]).filter("is_current")` is what is tagged now.
    """
    keys = list(association_key)
    return _intervals(_fan_out_deletions(_deduplicated(_typed(events, keys), keys), keys), keys)


def extend_intervals(
    rows: DataFrame, new_events: DataFrame, association_key: Sequence[str], since=None
) -> DataFrame:
    """The intervals of some groups after `new_events`, equal to `build_intervals` over all their events.

    `since=None` (an in-order batch): `rows` are the groups' current intervals (with, passed
    through untouched, any closed ones the caller read too), and every new event comes after
    every event they were built from. `since=T` (a late batch): `rows` are every interval of the
    groups still open at T or later (valid_to null or >= T), and `new_events` are all of the
    groups' events at or after T, old and new; the intervals closed before T stay as they are.

    Why it holds: an association's state just before a time T is its interval open then, or
    nothing, since an ADD that follows another ADD and a REMOVE or deletion of a closed
    association change nothing. So the intervals open at T re-enter as their opening ADD (same
    event, same id), the events from T on follow them in the usual order, and the intervals that
    closed before T stay: no event from T on can reach them. Intervals that began at T or later
    are rebuilt from their events. Reads the groups' rows from T on and their events from T on:
    for an in-order batch, their current rows and the new events, no history.
    """
    keys = list(association_key)
    if since is None:
        reopen, kept = rows.filter(F.col("is_current")), rows.filter(~F.col("is_current"))
    else:
        moment = F.lit(since).cast("timestamp")
        reopen = rows.filter(F.col("valid_from") < moment)
        kept = rows.limit(0)
    reopened = reopen.select(
        "source",
        "entity_urn",
        "parent_urn",
        *keys,
        F.lit(ADD).alias("action"),
        F.col("valid_from").alias("event_time"),
        F.col("added_by").alias("actor"),
        F.col("valid_from_event_id").alias("event_id"),
        F.lit(False).alias("_deletion"),
        F.lit(False).alias("_supersede"),
    )
    events = _deduplicated(_typed(new_events, keys), keys)
    extended = _intervals(_fan_out_deletions(reopened.unionByName(events), keys), keys)
    columns = interval_columns(keys)
    return kept.select(*columns).unionByName(extended.select(*columns))
