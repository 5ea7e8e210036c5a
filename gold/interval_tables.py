"""Shared shape of the single-purpose interval tables (entity status, deprecation, structured
properties, schema fields): events in the interval builder's input shape, intervals out.

Each table module says which silver rows it reads and how a row becomes interval events
(`gold.intervals` actions: ADD, REMOVE, RENAME, ENTITY_DELETED, SUPERSEDE, REMOVE_ALL);
the recompute group is the root entity (`root_urn`), so a late event rebuilds its entity's
rows from their history and an incremental run equals a full rebuild.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from gold import empty_frame
from gold.intervals import build_intervals, interval_columns

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
    parts = [read(sources[name]) for name, read in readers.items() if sources.get(name) is not None]
    return build_intervals(typed_events(parts, keys), keys).select(*interval_columns(keys))
