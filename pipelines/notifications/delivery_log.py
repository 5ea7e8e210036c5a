"""`ops.notification_deliveries`: one row per notice per target, what makes delivery once.

Why: the log is written before a message is sent (`pending`, with the digest that names the
message) and after (`delivered`, or `failed` with the error), so
- a notice delivered to a target is never planned for it again (its key is in the log);
- a failed message is sent again by the next run, rebuilt from the notices the log keeps, so
  it carries the same digest and the same idempotency key;
- a run killed between sending and recording leaves the message `pending`: the next run sends
  it once more with the same key (at-least-once, with a key the receiver can deduplicate on);
- a target's first run records a `baseline` row and sends nothing: a target added later hears
  of what happens after, not the whole history.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from pyspark.sql.types import IntegerType, StringType, StructField, StructType, TimestampType

from pipelines.store.pruning import AtLeast, In

DELIVERIES = "ops.notification_deliveries"
BASELINE = "baseline"  # the notice key and status of a target's first row
PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"
SCHEMA = StructType(
    [
        StructField("target", StringType(), False),
        StructField("notice_key", StringType(), False),
        StructField("kind", StringType()),
        StructField("group_key", StringType()),
        StructField("message_digest", StringType()),
        StructField("status", StringType(), False),
        StructField("attempts", IntegerType(), False),
        StructField("first_tried_at", TimestampType()),
        StructField("delivered_at", TimestampType()),
        StructField("last_error", StringType()),
        StructField("notice", StringType()),  # the notice as JSON: a retry rebuilds its message
        StructField("planned_at", TimestampType(), False),
    ]
)
COLUMNS = [f.name for f in SCHEMA.fields]


@dataclass
class Entry:
    """One row of the log."""

    target: str
    notice_key: str
    status: str
    planned_at: dt.datetime
    kind: str | None = None
    group_key: str | None = None
    message_digest: str | None = None
    attempts: int = 0
    first_tried_at: dt.datetime | None = None
    delivered_at: dt.datetime | None = None
    last_error: str | None = None
    notice: str | None = None

    def as_tuple(self) -> tuple:
        return tuple(getattr(self, name) for name in COLUMNS)


def _entries(rows: list[dict]) -> list[Entry]:
    return [Entry(**{k: v for k, v in row.items() if k in COLUMNS}) for row in rows]


def known_targets(store) -> set[str]:
    """Targets that have their baseline."""
    if not store.exists(DELIVERIES):
        return set()
    return {r["target"] for r in store.read_rows(DELIVERIES, ["target"], where={"notice_key": BASELINE})}


def unfinished(store) -> list[Entry]:
    """Entries still to deliver: `pending` (a run stopped before it recorded the outcome) and
    `failed`, read through the files' statistics of `status`."""
    if not store.exists(DELIVERIES):
        return []
    return _entries(store.read_rows(DELIVERIES, COLUMNS, selections=[[In("status", [PENDING, FAILED])]]))


def recorded_keys(store, keys: list[str], since: dt.datetime | None = None) -> set[tuple[str, str]]:
    """(target, notice_key) of the log's entries for `keys` planned at or after `since` (all
    when None), whatever their status. A run finds each notice once (the open conditions say
    what was told); the same notice found again was planned by a run stopped before it moved
    the watermark, at or after the last watermark's run began, so only the log's newest files
    are read."""
    if not keys or not store.exists(DELIVERIES):
        return set()
    selection = [In("notice_key", keys), *([AtLeast("planned_at", since)] if since else [])]
    rows = store.read_rows(DELIVERIES, ["target", "notice_key"], selections=[selection])
    return {(r["target"], r["notice_key"]) for r in rows}


def write(store, entries: list[Entry]) -> None:
    """Insert or update `entries` (on target and notice key) in one commit."""
    if not entries:
        return
    frame = store.spark.createDataFrame([e.as_tuple() for e in entries], SCHEMA)
    store.merge(frame, DELIVERIES, keys=["target", "notice_key"], rows=len(entries))
