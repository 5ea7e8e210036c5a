"""Type the new rows of a silver table's source, gate them, quarantine the bad, append the rest.

Incremental and idempotent: the source version processed is stored in the
silver commit itself (`source_version` in the commit metadata), so the data
and the watermark move together; re-running with nothing new does nothing.
Quarantine writes are keyed, so a run that dies after quarantining and before
the silver commit does not quarantine twice when it is re-run.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from pipelines import faults
from pipelines.bookkeeping import record_dq
from pipelines.context import JobResult, RunContext
from pipelines.jobs import ERRORS_COLUMN, SilverJob
from pipelines.quality import (
    FAILED_DROP,
    FAILED_FAIL,
    FAILED_WARN,
    QualityGateError,
    breaches,
    flag_rows,
    load_suite,
    measure,
    measure_uniqueness,
    suites_dir,
)

QUARANTINE = "silver.quarantine"
WATERMARK = "source_version"
HELPER_COLUMNS = (ERRORS_COLUMN, FAILED_DROP, FAILED_WARN, FAILED_FAIL, "_bad")


def quarantine_rows(bad: DataFrame, table: str, ctx: RunContext) -> DataFrame:
    """Rows for silver.quarantine: what failed, with the raw record to replay or inspect."""
    event_id = F.col("event_id") if "event_id" in bad.columns else F.lit(None).cast("string")
    return bad.select(
        F.sha2(
            F.concat_ws(
                "|",
                F.lit(table),
                "source_file",
                F.col("record_index").cast("string"),
                F.coalesce(event_id, F.lit("")),
            ),
            256,
        ).alias("quarantine_id"),
        F.lit(table).alias("source_table"),
        event_id.alias("event_id"),
        F.col("raw"),
        F.array_distinct(F.concat(F.col(ERRORS_COLUMN), F.col(FAILED_DROP))).alias("failed_checks"),
        F.lit(ctx.run_id).alias("run_id"),
        F.lit(ctx.started_at).cast("timestamp").alias("quarantined_at"),
        F.col("source_file"),
        F.col("record_index"),
    )


def _first_per_key(df: DataFrame, key: str) -> DataFrame:
    """One row per key, the earliest landed (deterministic, whatever the partitioning)."""
    order = Window.partitionBy(key).orderBy("ingested_at", "source_file", "record_index")
    return df.withColumn("_n", F.row_number().over(order)).where(F.col("_n") == 1).drop("_n")


def run(job: SilverJob, ctx: RunContext) -> JobResult:
    store = ctx.store
    source_version = store.version(job.source)
    if source_version is None:
        return JobResult(status="SKIPPED", message=f"{job.source} does not exist yet")
    watermark = store.last_metadata(job.table, WATERMARK) if store.exists(job.table) else None
    if watermark is not None and watermark >= source_version:
        return JobResult(status="SKIPPED", message="up to date")

    new_rows = store.read_added_since(job.source, watermark)
    quality = ctx.config.section("quality")
    suite = load_suite(job.table, suites_dir(quality["suites_dir"]))
    flagged = flag_rows(job.transform(new_rows), suite)
    bad = (F.size(ERRORS_COLUMN) > 0) | (F.size(FAILED_DROP) > 0)
    flagged = flagged.withColumn("_bad", bad).persist()
    try:
        rows_in, outcomes, quarantined = measure(flagged, suite, count_flag="_bad")
        source_rows = store.count_added_since(job.source, watermark)
        fatal = breaches(outcomes)
        if fatal and quality["fail_on_breach"]:
            record_dq(ctx, job.table, outcomes)
            first = fatal[0]
            raise QualityGateError(
                f"{job.table}: fail-severity expectation '{first.expectation.name}' failed for "
                f"{first.unexpected_count} of {first.element_count} rows (e.g. {', '.join(first.examples) or '-'})"
            )
        rejected = flagged.where(F.col("_bad"))
        if quarantined:
            store.merge(quarantine_rows(rejected, job.table, ctx), QUARANTINE, keys=["quarantine_id"])
        faults.checkpoint("silver_after_quarantine", job.table)

        accepted = _first_per_key(flagged.where(~F.col("_bad")), job.dedup_key)
        if store.exists(job.table):
            existing = store.read(job.table).select(job.dedup_key)
            accepted = accepted.join(existing, job.dedup_key, "left_anti")
        output = accepted.drop(*HELPER_COLUMNS).persist()
        try:
            rows_out, uniqueness = measure_uniqueness(output, suite)
            store.append(
                output,
                job.table,
                partition_by=list(job.partition_by),
                metadata={WATERMARK: source_version, "source": job.source, "run_id": ctx.run_id},
            )
        finally:
            output.unpersist()
        record_dq(ctx, job.table, outcomes + uniqueness)
    finally:
        flagged.unpersist()
    return JobResult(
        source_rows=source_rows,
        rows_in=rows_in,
        rows_out=rows_out,
        rows_quarantined=quarantined,
        rows_duplicate=rows_in - quarantined - rows_out,
    )
