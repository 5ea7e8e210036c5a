"""How tables are laid out on disk so that an incremental run reads only the part it needs.

Why: the warehouse keeps history forever, so a run that had to read a table whole would get
slower every week. Silver tables are partitioned by the month of their events (`event_month`):
a duplicate of an event has the event's time, so a batch's key probe reads the months its
events fall in; an event that arrives late re-reads its sources from its own month on. Gold
interval tables are partitioned by `is_current`: a run replaces open intervals, which grow
with the catalog, not with its history (`pipelines.core.table_specs.Extend`).

A table keeps the layout it was created with: tables written before a layout existed are read
and written as they are, and the bounds below are filters that hold either way.
"""

from __future__ import annotations

import datetime as dt

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipelines.core.table_specs import EVENT_MONTH
from pipelines.store.pruning import AtLeast, Bound, In

EVENT_TIME = "event_time"
EVENT_DATE = "event_date"


def event_month(date: str = EVENT_DATE) -> Column:
    """The first day of the month of the date column `date`."""
    return F.trunc(F.col(date), "month")


def month_of(day: dt.date) -> dt.date:
    return day.replace(day=1)


def dates_bounds(columns: list[str], dates: list[dt.date]) -> list[Bound]:
    """Rows of the given event dates: the date itself, and its month where the table holds it
    (a partition, so whole months are skipped)."""
    bounds: list[Bound] = [In(EVENT_DATE, dates)]
    if EVENT_MONTH in columns:
        bounds.append(In(EVENT_MONTH, sorted({month_of(d) for d in dates})))
    return bounds


def since_bounds(columns: list[str], since: dt.datetime) -> list[Bound]:
    """Rows whose `event_time` is `since` or later, and (where the table holds it) whose month is
    `since`'s or later."""
    bounds: list[Bound] = [AtLeast(EVENT_TIME, since)]
    if EVENT_MONTH in columns:
        utc = since.astimezone(dt.timezone.utc) if since.tzinfo else since
        bounds.append(AtLeast(EVENT_MONTH, month_of(utc.date())))
    return bounds


def with_layout_columns(rows: DataFrame, partition_by: tuple[str, ...]) -> DataFrame:
    """`rows` with the partition columns a layout derives from their other columns (`event_month`
    from `event_date`), where the layout names them and `rows` lacks them."""
    if EVENT_MONTH in partition_by and EVENT_MONTH not in rows.columns and EVENT_DATE in rows.columns:
        return rows.withColumn(EVENT_MONTH, event_month())
    return rows
