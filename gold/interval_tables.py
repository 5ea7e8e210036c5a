"""Shared shape of the single-purpose interval tables (entity status, deprecation, structured
properties, schema fields): events in the interval builder's input shape, intervals out.

Each table module says which silver rows it reads and how a row becomes interval events
(`gold.intervals` actions: ADD, REMOVE, RENAME, ENTITY_DELETED, SUPERSEDE, REMOVE_ALL);
the recompute group is the root entity (`root_urn`). Each table is extended in event-time
order (`pipelines.core.table_specs.Extend`): `extended_of` turns its rows back into the builder's
interval columns, extends them with the new events (`gold.intervals.extend_intervals`) and
shapes the result as the table's, so an incremental run equals a full rebuild.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from gold import empty_frame
from gold.intervals import build_intervals, extend_intervals, interval_columns

EVENT_COLUMNS = ("source", "entity_urn", "parent_urn", "action", "event_time", "actor", "event_id")


def typed_events(parts: list[DataFrame], keys: list[str]) -> DataFrame:
    """The union of event frames, every column as the builder expects it."""
    columns = [*EVENT_COLUMNS[:3], *keys, *EVENT_COLUMNS[3:]]
    if not parts:
        return empty_frame(
            ", ".join(f"{c} {'timestamp' if c == 'event_time' else 'string'}" for c in columns)
        )
    typed = [
        p.select(*[F.col(c).cast("timestamp" if c == "event_time" else "string").alias(c) for c in columns])
        for p in parts
    ]
    return reduce(DataFrame.unionByName, typed)


def intervals_of(
    sources: dict[str, DataFrame],
    readers: dict[str, Callable[[DataFrame], DataFrame]],
    keys: list[str],
) -> DataFrame:
    """`build_intervals` over the events `readers` (per source table) make of the present sources."""
    return build_intervals(events_of(sources, readers, keys), keys).select(*interval_columns(keys))


def events_of(
    sources: dict[str, DataFrame], readers: dict[str, Callable[[DataFrame], DataFrame]], keys: list[str]
) -> DataFrame:
    """The interval events `readers` (per source table) make of the present sources."""
    return typed_events(
        [read(sources[name]) for name, read in readers.items() if sources.get(name) is not None], keys
    )


def extended_of(
    readers: dict[str, Callable[[DataFrame], DataFrame]],
    keys: list[str],
    as_intervals: Callable[[DataFrame], DataFrame],
    as_table: Callable[[DataFrame], DataFrame],
) -> Callable[[DataFrame, dict[str, DataFrame], object], DataFrame]:
    """An `Extend.extend` for an interval table: its `rows` as the builder's interval columns
    (`as_intervals`), extended by the events `readers` make of the new source rows, back in the
    table's columns (`as_table`)."""

    def extend(rows: DataFrame, sources: dict[str, DataFrame], since) -> DataFrame:
        events = events_of(sources, readers, keys)
        extended = extend_intervals(as_intervals(rows), events, keys, since)
        return as_table(extended.select(*interval_columns(keys)))

    return extend
