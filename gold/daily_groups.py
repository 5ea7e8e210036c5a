"""Days as recompute groups, for daily tables of what holds at the end of each day.

A daily table (`gold.governance_coverage_daily`, `gold.review_backlog_daily`) counts, for every
day, the periods of a *state* table (the governance timeline, the proposals) open at its end. An
event at time t changes the state from t on: the figures of its day and of every later day, never
of an earlier one. So each day is a group (`yyyy-MM-dd`); the silver events feeding the state
touch their days, `DailyGroups.expand` adds every later day up to the state's last day, and the
state table is read whole as one more group (`STATE`), the build keeping the periods still open
on the first rebuilt day. An in-order batch rebuilds its day and the next; a late event every
day since.

    groups = DailyGroups(state="gold.proposals", last_day=lambda rows: F.max(...))
    RebuildGroups(expand_groups=groups.expand, expand_group_values=groups.expand_values)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from gold import GROUP

STATE = "state"  # the group every row of the state table is read under


def day_text(day: Column) -> Column:
    """A day as its group: `yyyy-MM-dd`."""
    return F.date_format(day, "yyyy-MM-dd")


@dataclass(frozen=True)
class DailyGroups:
    """`state`: the state table; `last_day(rows)`: an aggregate column, the last day of its rows."""

    state: str
    last_day: Callable[[DataFrame], Column]

    def relevant(self, source_table: str, rows: DataFrame) -> DataFrame:
        """The state table's rows under `STATE`; an event table's rows under their `event_date`."""
        if source_table == self.state:
            return rows.withColumn(GROUP, F.lit(STATE))
        return rows.withColumn(GROUP, day_text(F.col("event_date")))

    def span(self, events: list[DataFrame], state: DataFrame) -> DataFrame:
        """One row (`first`, `last`): the earliest day of `events` and the state's last day; no row
        when there is no event or the first day comes after the last."""
        first = events[0].select("event_date")
        for more in events[1:]:
            first = first.unionByName(more.select("event_date"))
        bounds = first.agg(F.min("event_date").alias("first")).crossJoin(
            state.agg(self.last_day(state).alias("last"))
        )
        return bounds.where(
            F.col("first").isNotNull() & F.col("last").isNotNull() & (F.col("first") <= F.col("last"))
        )

    def expand_values(self, touched: list[str], sources: dict[str, DataFrame]) -> set[str]:
        """The touched days, every later day up to the state's last day, and `STATE`."""
        days = sorted(g for g in touched if g is not None and g != STATE)
        state = sources.get(self.state)
        if not days or state is None:
            return set(touched)
        start = F.to_date(F.lit(days[0]))
        row = state.select(F.sequence(start, F.greatest(start, self.last_day(state))).alias("d")).first()
        return set(touched) | {day.isoformat() for day in row["d"] or []} | {STATE}

    def expand(self, touched: DataFrame, sources: dict[str, DataFrame]) -> DataFrame:
        """`expand_values` for touched groups as a frame."""
        state = sources.get(self.state)
        if state is None:
            return touched
        first = touched.where(F.col(GROUP) != STATE).agg(F.min(F.to_date(GROUP)).alias("first"))
        later = first.crossJoin(state.agg(self.last_day(state).alias("last"))).where(
            F.col("first").isNotNull()
        )
        days = later.select(F.explode(F.sequence("first", F.greatest("first", "last"))).alias("d"))
        return (
            touched.unionByName(days.select(day_text(F.col("d")).alias(GROUP)))
            .unionByName(later.select(F.lit(STATE).alias(GROUP)))
            .distinct()
        )
