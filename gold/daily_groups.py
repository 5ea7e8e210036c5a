"""Days as recompute groups, for daily tables of what holds at the end of each day.

A daily table (`gold.governance_coverage_daily`, `gold.review_backlog_daily`) counts, for every
day, the periods of a *state* table (the governance timeline, the proposals) open at its end. An
event at time t changes the state from t on: the figures of its day and of every later day, never
of an earlier one. So each day is a group (`yyyy-MM-dd`); the silver events feeding the state
touch their days, `DailyGroups.expand` adds every later day up to the state's last day, and the
state table is read whole as one more group (`STATE`), the build keeping the periods still open
on the first rebuilt day. An in-order batch rebuilds its day and the next; a late event every
day since.

Some events change the state before their own time: a state table may date what an event tells
back to an earlier event of the same entity (the governance timeline takes a schema field no
schema event names to exist with its dataset, so the field's first event makes it exist from
its dataset's first change on). Those events (`ReachBack.entity`) are grouped as their day and
that entity (`yyyy-MM-dd <entity>`), and the days are rebuilt from the entity's first day in the
state on, or from the event's day where that is earlier.

    groups = DailyGroups(state="gold.proposals", last_day=lambda rows: F.max(...))
    GoldTableSpec(..., incremental=groups.rebuild())
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from gold import GROUP
from pipelines.core.table_specs import RebuildGroups

STATE = "state"  # the group every row of the state table is read under
DAY_LENGTH = len("yyyy-MM-dd")  # a group's day; after it, a space and the entity (`ReachBack`)


def day_text(day: Column) -> Column:
    """A day as its group: `yyyy-MM-dd`."""
    return F.date_format(day, "yyyy-MM-dd")


def _day_of(group: Column) -> Column:
    """A group's day (null for `STATE`: Spark may fold the cast of a literal group before a filter
    leaves it out)."""
    return F.try_to_date(F.substring(group, 1, DAY_LENGTH), "yyyy-MM-dd")


def _entity_of(group: Column) -> Column:
    return F.when(F.length(group) > DAY_LENGTH + 1, group.substr(F.lit(DAY_LENGTH + 2), F.length(group)))


@dataclass(frozen=True)
class ReachBack:
    """Events that change the state from an entity's first day in it on, not from their own time.

    `entity(source_table)`: a column of that table's rows naming the entity (as the state's
    `state_entity` column names it) for an event that may reach back, null for the others;
    `first_day(rows)`: an aggregate column, the first day of the state's rows of one entity."""

    entity: Callable[[str], Column]
    state_entity: str
    first_day: Callable[[DataFrame], Column]

    def firsts(self, state: DataFrame) -> DataFrame:
        """(`_entity`, `_first`): each entity's first day in the state."""
        return state.groupBy(F.col(self.state_entity).alias("_entity")).agg(
            self.first_day(state).alias("_first")
        )


@dataclass(frozen=True)
class DailyGroups:
    """`state`: the state table; `last_day(rows)`: an aggregate column, the last day of its rows;
    `reach_back`: the events that change the state before their own time, if any may."""

    state: str
    last_day: Callable[[DataFrame], Column]
    reach_back: ReachBack | None = None

    def rebuild(self) -> RebuildGroups:
        """The daily table's strategy: touched days expanded to every later day, the state kept whole."""
        return RebuildGroups(
            expand_groups=self.expand, expand_group_values=self.expand_values, kept_whole=(self.state,)
        )

    def relevant(self, source_table: str, rows: DataFrame) -> DataFrame:
        """The state table's rows under `STATE`; an event table's rows under their `event_date`,
        followed by the entity an event reaching back names."""
        if source_table == self.state:
            return rows.withColumn(GROUP, F.lit(STATE))
        day = day_text(F.col("event_date"))
        if self.reach_back is None:
            return rows.withColumn(GROUP, day)
        entity = self.reach_back.entity(source_table)
        return rows.withColumn(GROUP, F.when(entity.isNull(), day).otherwise(F.concat_ws(" ", day, entity)))

    def _from(self, days: DataFrame, state: DataFrame) -> DataFrame:
        """`days` (`_day`, `_entity`) with each day moved back to its entity's first day in the
        state where that is earlier (one row per entity first, so the state's side stays small)."""
        if self.reach_back is None:
            return days.select("_day")
        reaching = (
            days.where(F.col("_entity").isNotNull()).groupBy("_entity").agg(F.min("_day").alias("_day"))
        )
        moved = reaching.join(self.reach_back.firsts(state), "_entity", "left").select(
            F.least("_day", "_first").alias("_day")
        )
        return days.where(F.col("_entity").isNull()).select("_day").unionByName(moved)

    def span(self, events: list[DataFrame], state: DataFrame) -> DataFrame:
        """One row (`first`, `last`): the earliest day of `events` (or of the first days of the
        entities they reach back to) and the state's last day; no row when there is no event or
        the first day comes after the last."""
        days = None
        for rows in events:
            reaching = _entity_of(F.col(GROUP)) if GROUP in rows.columns else F.lit(None)
            more = rows.select(F.col("event_date").alias("_day"), reaching.cast("string").alias("_entity"))
            days = more if days is None else days.unionByName(more)
        bounds = (
            self._from(days, state)
            .agg(F.min("_day").alias("first"))
            .crossJoin(state.agg(self.last_day(state).alias("last")))
        )
        return bounds.where(
            F.col("first").isNotNull() & F.col("last").isNotNull() & (F.col("first") <= F.col("last"))
        )

    def expand_values(self, touched: list[str], sources: dict[str, DataFrame]) -> set[str]:
        """The touched days (an event reaching back: from its entity's first day), every later
        day up to the state's last day, and `STATE`."""
        groups = sorted(g for g in touched if g is not None and g != STATE)
        state = sources.get(self.state)
        if not groups or state is None:
            return set(touched)
        first = min(g[:DAY_LENGTH] for g in groups)
        entities = sorted({g[DAY_LENGTH + 1 :] for g in groups if len(g) > DAY_LENGTH + 1})
        if self.reach_back is not None and entities:
            found = (
                state.where(F.col(self.reach_back.state_entity).isin(entities))
                .agg(self.reach_back.first_day(state).alias("d"))
                .first()["d"]
            )
            first = min(first, found.isoformat()) if found is not None else first
        start = F.to_date(F.lit(first))
        row = state.select(F.sequence(start, F.greatest(start, self.last_day(state))).alias("d")).first()
        return set(touched) | {day.isoformat() for day in row["d"] or []} | {STATE}

    def expand(self, touched: DataFrame, sources: dict[str, DataFrame]) -> DataFrame:
        """`expand_values` for touched groups as a frame."""
        state = sources.get(self.state)
        if state is None:
            return touched
        groups = touched.where(F.col(GROUP) != STATE).select(
            _day_of(F.col(GROUP)).alias("_day"), _entity_of(F.col(GROUP)).alias("_entity")
        )
        first = self._from(groups, state).agg(F.min("_day").alias("first"))
        later = first.crossJoin(state.agg(self.last_day(state).alias("last"))).where(
            F.col("first").isNotNull()
        )
        days = later.select(F.explode(F.sequence("first", F.greatest("first", "last"))).alias("d"))
        return (
            touched.unionByName(days.select(day_text(F.col("d")).alias(GROUP)))
            .unionByName(later.select(F.lit(STATE).alias(GROUP)))
            .distinct()
        )
