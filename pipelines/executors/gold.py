"""Recompute the groups of a gold table that new silver rows touch, and replace them.

The versions of every source already reflected are kept in the gold commit's
metadata (`source_versions`). First run (or a source never seen): full
build and overwrite. Later runs: the touched groups' complete history is read
back from the sources, rebuilt, and merged in place, rows that disappeared
deleted, so the table always equals a full rebuild.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipelines.context import JobResult, RunContext
from pipelines.jobs import GoldJob

WATERMARKS = "source_versions"
DELETE_FLAG = "_delete"


def _union(frames: list[DataFrame]) -> DataFrame:
    return reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames)


def _full_build(job: GoldJob, ctx: RunContext, versions: dict[str, int]) -> JobResult:
    inputs = {s: job.relevant(s, ctx.store.read(s)) for s in versions}
    output = job.build(inputs).persist()
    try:
        rows = output.count()
        ctx.store.overwrite(
            output,
            job.table,
            partition_by=list(job.partition_by),
            metadata={WATERMARKS: versions, "run_id": ctx.run_id, "mode": "full"},
        )
    finally:
        output.unpersist()
    return JobResult(rows_in=rows, rows_out=rows, message="full build")


def run(job: GoldJob, ctx: RunContext) -> JobResult:
    store = ctx.store
    versions = {s: store.version(s) for s in job.sources}
    present = {s: v for s, v in versions.items() if v is not None}
    if not present:
        return JobResult(status="SKIPPED", message="no source table exists yet")
    seen = store.last_metadata(job.table, WATERMARKS) if store.exists(job.table) else None
    if not seen or any(s not in seen for s in present):
        return _full_build(job, ctx, present)
    changed = {s: v for s, v in present.items() if v > seen[s]}
    if not changed:
        return JobResult(status="SKIPPED", message="up to date")

    new_rows = {s: store.read_added_since(s, seen[s]) for s in changed}
    touched = (
        _union([job.relevant(s, rows).select("_group") for s, rows in new_rows.items()]).distinct().persist()
    )
    try:
        source_rows = sum(rows.count() for rows in new_rows.values())
        everything = {s: job.relevant(s, store.read(s)) for s in present}
        if job.expand_groups is not None:
            touched = job.expand_groups(touched, everything).distinct().persist()
        history = {s: rows.join(touched, "_group", "left_semi") for s, rows in everything.items()}
        rebuilt = job.build(history).persist()
        try:
            groups = touched.withColumnRenamed("_group", job.group_key)
            current = store.read(job.table).join(groups, job.group_key, "left_semi")
            stale = current.join(rebuilt.select(*job.row_key), list(job.row_key), "left_anti")
            changes = rebuilt.withColumn(DELETE_FLAG, F.lit(False)).unionByName(
                stale.withColumn(DELETE_FLAG, F.lit(True)), allowMissingColumns=True
            )
            rows_out = rebuilt.count()
            store.merge(
                changes,
                job.table,
                keys=list(job.row_key),
                delete_flag=DELETE_FLAG,
                metadata={WATERMARKS: {**seen, **present}, "run_id": ctx.run_id, "mode": "incremental"},
            )
        finally:
            rebuilt.unpersist()
    finally:
        touched.unpersist()
    return JobResult(source_rows=source_rows, rows_in=rows_out, rows_out=rows_out, message="incremental")
