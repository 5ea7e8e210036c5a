"""`ops.notification_open`: the conditions notified as open, and the watermark of the last run.

Why: a violation that late events show never happened disappears from
`gold.governance_violations` (its entity's rows are replaced), and a check that passes again
leaves no failing row: neither can be seen in what changed, only against what was said to be
open. The table holds one row per open condition (a violation, or a table's expectation), so
its size follows what is open now, not the history, and a run reads it whole.

The watermark (the event clock and the table versions the run read up to) is the metadata of
the commit that records the run's changes to the open set, so both move together: a run killed
before that commit is repeated from the same watermark, and the notices it plans again are
found in the delivery log already. That commit is one `replace_where` (an overwrite of the
conditions opened or closed, through the DataFrame writer), as the pipeline's batches write
theirs: a SQL `MERGE` could carry the metadata only through a session setting, which Databricks
serverless refuses.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql.types import StringType, StructField, StructType

from pipelines.store.pruning import In

OPEN = "ops.notification_open"
WATERMARK = "notifications"  # the commit metadata key
SCHEMA = StructType(
    [
        StructField("condition_id", StringType(), False),  # violation_id, or <kind>:<table>:<expectation>
        StructField("kind", StringType(), False),
        StructField("entity_urn", StringType()),
        StructField("notice", StringType(), False),  # the opening notice, as JSON
    ]
)


@dataclass(frozen=True)
class Watermark:
    """What the last run had read: the event clock (ISO, UTC) and each source table's version,
    and when that run started (`recorded_at`, ISO): what it planned is in the delivery log from then."""

    event_clock: str | None = None
    violations_version: int | None = None
    change_history_version: int | None = None
    dq_version: int | None = None
    recorded_at: str | None = None

    def as_metadata(self) -> dict:
        return {WATERMARK: self.__dict__.copy()}


def load_watermark(store) -> Watermark | None:
    """The last run's watermark; None before the first run."""
    if not store.exists(OPEN):
        return None
    value = store.last_metadata(OPEN, WATERMARK, scan=200)
    return Watermark(**value) if isinstance(value, dict) else None


def open_rows(store) -> dict[str, dict]:
    """condition_id -> its row, for every open condition."""
    if not store.exists(OPEN):
        return {}
    rows = store.read_rows(OPEN, [f.name for f in SCHEMA.fields], selections=[[]])
    return {row["condition_id"]: row for row in rows}


def record(store, opened: list[dict], closed: list[str], watermark: Watermark) -> None:
    """One commit: the conditions `opened` (rows of SCHEMA as dicts) added, `closed` removed,
    and the run's watermark: the rows of every condition named replaced by the opened ones."""
    spark = store.spark
    metadata = watermark.as_metadata()
    rows = [(r["condition_id"], r["kind"], r.get("entity_urn"), r["notice"]) for r in opened]
    named = [r[0] for r in rows] + list(closed)
    if not named:
        store.commit_no_rows(spark.createDataFrame([], SCHEMA), OPEN, metadata=metadata)
        return
    frame = spark.createDataFrame(rows, SCHEMA)
    store.replace_where(frame, OPEN, [[In("condition_id", named)]], metadata=metadata, rows=len(rows))
