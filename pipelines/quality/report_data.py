"""What the data-quality report reads: the ops tables aggregated by Spark, so that only the last
runs' rows and per-reason counts reach the driver.

`ops.dq_results` (each rule's outcome per table and run), `silver.quarantine` (rejected rows
and why), `ops.runs` (row counts that must reconcile), `ops.ingestion_log` (landing files
that could not be read, or only in part) and `ops.collector_losses` (what the collectors refused
or could not collect).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from dataclasses import dataclass

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from pipelines.landing import ingestion_log
from pipelines.quality.suites import SEVERITIES

# The severities, worst first: `fail` stops the run, `drop` quarantines rows, `warn` records.
WORST_FIRST = tuple(reversed(SEVERITIES))
FAIL, PASS, NOT_EVALUATED = "fail", "pass", "not-evaluated"


def state(result: dict) -> str:
    """A rule's result: `fail`, `pass`, or `not-evaluated` when it saw no rows (GX counts it
    as a success; it says nothing)."""
    if not result["element_count"]:
        return NOT_EVALUATED
    return PASS if result["success"] else FAIL


def severity_rank(severity: str | None) -> int:
    """3 for `fail`, 2 for `drop`, 1 for `warn`, 0 for none."""
    return len(WORST_FIRST) - WORST_FIRST.index(severity) if severity in WORST_FIRST else 0


def layer_of(table: str) -> str:
    return table.partition(".")[0]


@dataclass(frozen=True)
class Run:
    """One run of one table's suite (from ops.dq_results)."""

    run_id: str
    validated_at: dt.datetime
    results: list[dict]

    @property
    def failing(self) -> list[dict]:
        return [r for r in self.results if state(r) == FAIL]

    @property
    def failed(self) -> int:
        return len(self.failing)

    @property
    def not_evaluated(self) -> int:
        return sum(1 for r in self.results if state(r) == NOT_EVALUATED)

    @property
    def failing_by_severity(self) -> Counter:
        return Counter(r["severity"] for r in self.failing)

    @property
    def worst_severity(self) -> str | None:
        """The worst severity among the failing rules, None when none failed."""
        return next((s for s in WORST_FIRST if self.failing_by_severity[s]), None)

    @property
    def worst_percent(self) -> float:
        """The highest unexpected % of the failing rules (of every rule when none failed)."""
        pool = self.failing or self.results
        return max((r["unexpected_percent"] or 0.0 for r in pool), default=0.0)


def dq_runs(dq: DataFrame, last_runs: int) -> dict[str, list[Run]]:
    """Per table, its last `last_runs` validation runs, newest first."""
    per_run = dq.groupBy("table", "run_id").agg(F.max("validated_at").alias("validated_at"))
    recent = per_run.withColumn(
        "_rank",
        F.row_number().over(Window.partitionBy("table").orderBy(F.desc("validated_at"), F.desc("run_id"))),
    ).where(F.col("_rank") <= last_runs)
    rows = dq.join(recent.select("table", "run_id", F.col("validated_at").alias("_at")), ["table", "run_id"])
    runs: dict[str, dict[str, Run]] = defaultdict(dict)
    for row in rows.orderBy("table", "expectation").collect():
        run = runs[row["table"]].setdefault(row["run_id"], Run(row["run_id"], row["_at"], []))
        run.results.append(row.asDict())
    return {
        table: sorted(by_id.values(), key=lambda r: (r.validated_at, r.run_id), reverse=True)
        for table, by_id in sorted(runs.items())
    }


def quarantine_counts(quarantine: DataFrame) -> dict[str, dict]:
    """Per source table: quarantined rows, overall and in its latest quarantining run, and by failed
    check, each with the smallest and largest `event_id` among them (examples to look up)."""
    latest = quarantine.groupBy("source_table").agg(F.max_by("run_id", "quarantined_at").alias("latest_run"))
    tagged = quarantine.join(latest, "source_table").withColumn(
        "_in_latest", F.when(F.col("run_id") == F.col("latest_run"), 1).otherwise(0)
    )

    def counted(df: DataFrame, *keys: str) -> DataFrame:
        return df.groupBy(*keys).agg(
            F.count(F.lit(1)).alias("rows"),
            F.sum("_in_latest").alias("latest_rows"),
            F.first("latest_run").alias("latest_run"),
            F.min("event_id").alias("first_event_id"),
            F.max("event_id").alias("last_event_id"),
        )

    counts = {
        row["source_table"]: {**row.asDict(), "reasons": []}
        for row in counted(tagged, "source_table").collect()
    }
    by_reason = counted(
        tagged.withColumn("reason", F.explode_outer("failed_checks")), "source_table", "reason"
    )
    for row in by_reason.orderBy("source_table", F.desc("rows"), "reason").collect():
        counts[row["source_table"]]["reasons"].append(row.asDict())
    return dict(sorted(counts.items()))


def unread_files(log: DataFrame) -> list[dict]:
    """Landing files whose latest log row says they could not be read, or only in part (damaged,
    unreadable, vanished, still being written, too large): what someone has to look at. A file
    later replaced by a good one and ingested drops off."""
    latest = Window.partitionBy("source", F.coalesce("landing_key", "path")).orderBy(F.desc("logged_at"))
    problems = (*ingestion_log.NOT_READ, ingestion_log.DAMAGED, ingestion_log.TOO_LARGE)
    rows = (
        log.withColumn("_rank", F.row_number().over(latest))
        .where((F.col("_rank") == 1) & F.col("status").isin(*problems))
        .select(
            "source",
            "landing_key",
            "path",
            "status",
            "note",
            "records",
            "corrupt_records",
            "run_id",
            "logged_at",
        )
        .orderBy(F.desc("logged_at"), "source", "path")
    )
    return [row.asDict() for row in rows.collect()]


def collector_losses(losses: DataFrame) -> list[dict]:
    """What the collectors refused or could not collect, per collector, source, status and reason:
    how many, first and last seen; the most recent first."""
    rows = (
        losses.groupBy("collector", "source", "status", "reason")
        .agg(
            F.sum("count").alias("count"),
            F.min("first_at").alias("first_at"),
            F.max("last_at").alias("last_at"),
        )
        .orderBy(F.desc("last_at"), "collector", "source", "status")
    )
    return [row.asDict() for row in rows.collect()]


def recent_runs(runs: DataFrame, last_runs: int) -> list[tuple[str, list[dict]]]:
    """The last `last_runs` pipeline runs (newest first) with their task rows."""
    ids = (
        runs.groupBy("run_id")
        .agg(F.min("started_at").alias("_started"))
        .orderBy(F.desc("_started"), F.desc("run_id"))
        .limit(last_runs)
    )
    grouped: dict[str, list[dict]] = defaultdict(list)
    order: dict[str, dt.datetime] = {}
    for row in runs.join(ids, "run_id").orderBy("started_at", "job").collect():
        grouped[row["run_id"]].append(row.asDict())
        order[row["run_id"]] = row["_started"]
    return [
        (run_id, grouped[run_id]) for run_id in sorted(grouped, key=lambda r: (order[r], r), reverse=True)
    ]


def reconcile(tasks: list[dict], bronze_tables: dict[str, str]) -> list[dict]:
    """Per landing source of one run: bronze rows read = silver + quarantined + duplicates?"""
    by_source: dict[str, list[dict]] = defaultdict(list)
    for task in tasks:
        if task.get("reconciles"):
            by_source[task["reconciles"]].append(task)
    checks = []
    for source, group in sorted(by_source.items()):
        done = [t for t in group if t["status"] == "SUCCESS"]
        landed = [t["rows_out"] for t in tasks if t["table"] == bronze_tables.get(source)]
        read = {t["source_rows"] or 0 for t in done}
        parts = {k: sum(t[k] or 0 for t in done) for k in ("rows_out", "rows_quarantined", "rows_duplicate")}
        accounted = sum(parts.values())
        if any(t["status"] == "FAILED" for t in group):
            verdict = "INCOMPLETE"
        elif not done:
            verdict = "NO NEW ROWS"
        elif len(read) == 1 and read == {accounted}:
            verdict = "OK"
        else:
            verdict = "MISMATCH"
        checks.append(
            {
                "source": source,
                "tables": ", ".join(sorted(t["table"] for t in group)),
                "landed": landed[0] if landed else None,
                "read": max(read) if read else None,
                **parts,
                "accounted": accounted,
                "verdict": verdict,
            }
        )
    return checks
