"""What a pack covers: a time range of `event_time`, and optionally one actor, one entity (with
its fields) and one catalog; and how a read of `gold.change_history` is narrowed to it.

Why here: the scope is the pack's identity together with the table versions, so it is written
into the pack as given (`as_document`), and the same object decides which rows are read. The
time range is pushed down as bounds the table store prunes files by (`event_time` from the
start, the range's dates), so a pack costs what its scope holds, not what the table holds.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F

from pipelines.evidence.canonical import time_text
from pipelines.store.pruning import AtLeast, Bound, In

CATALOGS = ("datahub", "openmetadata", "dataworks")  # the `source` values of gold.change_history
MAX_DATE_BOUND_DAYS = 3660  # a longer range is bounded by its start only (a date list that long helps little)
SCHEMA_FIELD_PREFIX = "urn:li:schemaField:("


class ScopeError(ValueError):
    """A scope that cannot be read: an unreadable time, an empty range, an unknown catalog."""


def parse_time(text: str, option: str) -> dt.datetime:
    """An ISO date or date-time, UTC unless it gives an offset."""
    try:
        value = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ScopeError(f"{option} {text!r} is not an ISO date or date-time") from None
    return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)


@dataclass(frozen=True)
class Scope:
    """Changes with `start <= event_time < end`, by `actor`, on `entity` or its fields, from `catalog`."""

    start: dt.datetime
    end: dt.datetime
    actor: str | None = None
    entity: str | None = None
    catalog: str | None = None

    def __post_init__(self) -> None:
        if self.start.tzinfo is None or self.end.tzinfo is None:
            raise ScopeError("the scope's times must carry a time zone")
        if self.end <= self.start:
            raise ScopeError(f"--to ({time_text(self.end)}) must be after --from ({time_text(self.start)})")
        if self.catalog is not None and self.catalog not in CATALOGS:
            raise ScopeError(f"--catalog must be one of {', '.join(CATALOGS)}, got {self.catalog!r}")

    @classmethod
    def parse(
        cls,
        start: str,
        end: str,
        actor: str | None = None,
        entity: str | None = None,
        catalog: str | None = None,
    ) -> Scope:
        return cls(
            parse_time(start, "--from"),
            parse_time(end, "--to"),
            actor or None,
            entity or None,
            catalog or None,
        )

    def as_document(self) -> dict:
        """The scope as the pack states it (times in UTC)."""
        return {
            "from": time_text(self.start),
            "to": time_text(self.end),
            "to_is": "exclusive",
            "actor": self.actor,
            "entity": self.entity,
            "entity_includes_fields": self.entity is not None,
            "catalog": self.catalog,
        }

    def bounds(self) -> list[Bound]:
        """What the store may skip files by: `event_time` from the start and, for a range of up to
        `MAX_DATE_BOUND_DAYS`, the range's dates (a day either side: `event_date` is the event's
        date in the session's time zone)."""
        start = self.start.astimezone(dt.timezone.utc)
        bounds: list[Bound] = [AtLeast("event_time", start)]
        first = start.date() - dt.timedelta(days=1)
        last = self.end.astimezone(dt.timezone.utc).date() + dt.timedelta(days=1)
        days = (last - first).days
        if days <= MAX_DATE_BOUND_DAYS:
            bounds.append(In("event_date", [first + dt.timedelta(days=n) for n in range(days + 1)]))
        return bounds

    def condition(self) -> Column:
        """The exact condition of an in-scope row of `gold.change_history`."""
        time = F.col("event_time")
        wanted = (time >= F.lit(self.start)) & (time < F.lit(self.end))
        if self.actor is not None:
            wanted &= F.col("actor") == F.lit(self.actor)
        if self.catalog is not None:
            wanted &= F.col("source") == F.lit(self.catalog)
        if self.entity is not None:
            entity = F.lit(self.entity)
            field_of = F.col("entity_urn").startswith(f"{SCHEMA_FIELD_PREFIX}{self.entity},")
            wanted &= (F.col("entity_urn") == entity) | (F.col("parent_urn") == entity) | field_of
        return wanted
