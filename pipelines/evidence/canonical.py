"""Rows as canonical JSON text: the same rows give the same bytes on any machine and engine.

Why: a pack must be byte-identical when rebuilt from the same table versions. Spark hands
timestamps to Python in the session's time zone and maps in no fixed order, so every value is
first brought to one form: timestamps as UTC text with microseconds (read as epoch
microseconds, never through a time zone), dates as ISO text, maps and objects with sorted keys,
floats as Python's shortest round-trip text.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DateType, TimestampNTZType, TimestampType

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def micros_text(micros: int | None) -> str | None:
    """Epoch microseconds as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC), None as None."""
    if micros is None:
        return None
    return (EPOCH + dt.timedelta(microseconds=micros)).strftime(TIME_FORMAT)


def time_text(value: dt.datetime) -> str:
    """An aware date-time in the packs' one timestamp form."""
    delta = value.astimezone(dt.timezone.utc) - EPOCH
    return micros_text((delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds)


def portable(df: DataFrame) -> tuple[DataFrame, set[str]]:
    """`df` with its timestamp columns as epoch microseconds and its dates as ISO text, and the
    names of the columns turned into microseconds (`row_dict` writes them back as UTC text)."""
    columns: list[Column] = []
    timestamps: set[str] = set()
    for field in df.schema.fields:
        column = F.col(f"`{field.name}`")
        if isinstance(field.dataType, (TimestampType, TimestampNTZType)):
            columns.append(F.unix_micros(column.cast("timestamp")).alias(field.name))
            timestamps.add(field.name)
        elif isinstance(field.dataType, DateType):
            columns.append(column.cast("string").alias(field.name))
        else:
            columns.append(column)
    return df.select(*columns), timestamps


def row_dict(row: Any, timestamps: set[str]) -> dict[str, Any]:
    """A collected row of a `portable` frame as a plain dict, its timestamps as UTC text."""
    values = row.asDict(recursive=True)
    for name in timestamps:
        values[name] = micros_text(values[name])
    return values


def collect(df: DataFrame) -> list[dict[str, Any]]:
    """Every row of `df` as a plain dict in canonical form (unsorted)."""
    frame, timestamps = portable(df)
    return [row_dict(row, timestamps) for row in frame.collect()]


def dumps(value: Any) -> str:
    """One JSON text: keys sorted, no spaces, non-ASCII kept as is."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True)


def pretty(value: Any) -> str:
    """Indented JSON with sorted keys and a final newline, for the pack's small documents."""
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def json_lines(rows: list[dict[str, Any]], key) -> str:
    """Rows as JSON Lines, ordered by `key` then by their own text (a total order even where
    `key` ties)."""
    texts = sorted(((key(row), dumps(row)) for row in rows), key=lambda pair: (_sortable(pair[0]), pair[1]))
    return "".join(text + "\n" for _, text in texts)


def _sortable(key: tuple) -> tuple:
    """A key whose None parts sort first, so rows with missing values still compare."""
    return tuple((value is not None, value if value is not None else "") for value in key)
