"""`ops.runs` (one row per task run) and `ops.dq_results` (one row per expectation per table per run).

Tasks record their rows in the run's `PendingRows`; `write_bookkeeping` appends them when the
run ends (also when a task failed), each table in one commit: a run killed part-way leaves no
rows of its own, and its committed data is accounted for by the next run's.
"""

from __future__ import annotations

import datetime as dt
import importlib
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pyspark.sql.types import (
    BooleanType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from pipelines.core.context import RunContext, TaskResult
from pipelines.quality import Outcome, to_gx_result
from pipelines.quality.validation_documents import table_folder

RUNS = "ops.runs"
DQ_RESULTS = "ops.dq_results"

RUNS_SCHEMA = StructType(
    [
        StructField("run_id", StringType(), False),
        StructField("job", StringType(), False),
        StructField("table", StringType(), False),
        StructField("started_at", TimestampType(), False),
        StructField("finished_at", TimestampType(), False),
        StructField("status", StringType(), False),
        StructField("source_rows", LongType()),
        StructField("rows_in", LongType()),
        StructField("rows_out", LongType()),
        StructField("rows_quarantined", LongType()),
        StructField("rows_duplicate", LongType()),
        StructField("files", LongType()),
        StructField("reconciles", StringType()),
        StructField("message", StringType()),
    ]
)

DQ_SCHEMA = StructType(
    [
        StructField("run_id", StringType(), False),
        StructField("table", StringType(), False),
        StructField("expectation", StringType(), False),
        StructField("expectation_type", StringType(), False),
        StructField("column", StringType()),
        StructField("severity", StringType(), False),
        StructField("success", BooleanType(), False),
        StructField("unexpected_count", LongType(), False),
        StructField("element_count", LongType(), False),
        StructField("unexpected_percent", DoubleType(), False),
        StructField("examples", StringType()),
        StructField("validated_at", TimestampType(), False),
    ]
)


def record_run(
    ctx: RunContext,
    job: str,
    table: str,
    started: dt.datetime,
    result: TaskResult,
    reconciles: str | None = None,
) -> None:
    row = (
        ctx.run_id,
        job,
        table,
        started,
        dt.datetime.now(dt.timezone.utc),
        result.status,
        result.source_rows,
        result.rows_in,
        result.rows_out,
        result.rows_quarantined,
        result.rows_duplicate,
        result.files,
        reconciles,
        result.message[:2000],
    )
    ctx.bookkeeping.add(RUNS, RUNS_SCHEMA, [row])


def record_dq(ctx: RunContext, table: str, outcomes: list[Outcome]) -> None:
    """Rows in ops.dq_results plus the GX validation result document beside the warehouse."""
    if not outcomes:
        return
    now = dt.datetime.now(dt.timezone.utc)
    rows = [
        (
            ctx.run_id,
            table,
            o.expectation.name,
            o.expectation.type,
            o.expectation.column,
            o.expectation.severity,
            o.success,
            o.unexpected_count,
            o.element_count,
            o.unexpected_percent,
            json.dumps(_examples(o), ensure_ascii=False),
            now,
        )
        for o in outcomes
    ]
    ctx.bookkeeping.add(DQ_RESULTS, DQ_SCHEMA, rows)
    folder = table_folder(ctx.store.warehouse, table)
    ctx.pending.append(_DOC_WRITER.submit(_write_gx_document, folder, table, list(outcomes), ctx.run_id))


def _examples(outcome: Outcome) -> list:
    """`examples` of ops.dq_results: the failing values with their row counts and example row keys
    when they were counted, else example values."""
    if outcome.failing_values:
        return [
            {"value": v.value, "rows": v.rows, "row_keys": list(v.row_keys)} for v in outcome.failing_values
        ]
    return list(outcome.examples)


# Building GX result objects is pure Python (about a second per table on a small machine):
# it runs beside the next Spark job instead of before it. The run waits for it at its end.
_DOC_WRITER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gx-documents")


def prepare_documents() -> None:
    """Start loading Great Expectations (a few seconds of imports) on the documents' thread, so
    that it overlaps what the run waits on first (a new JVM's start) rather than its tasks."""
    _DOC_WRITER.submit(importlib.import_module, "great_expectations")


def _write_gx_document(folder: Path, table: str, outcomes: list[Outcome], run_id: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    result = to_gx_result(table, outcomes, run_id)
    document = folder / f"{run_id}.json"
    document.write_text(json.dumps(result.to_json_dict(), indent=1, default=str))
    return document


def wait_for_documents(ctx: RunContext) -> None:
    """Block until the run's validation documents are written; re-raises a writer's error."""
    pending, ctx.pending[:] = list(ctx.pending), []
    for future in pending:
        future.result()


def discard_bookkeeping(ctx: RunContext) -> None:
    """Drop what the run would have recorded (its `ops.runs` and `ops.dq_results` rows, its
    validation documents): an attempt that is started again records nothing of its own."""
    ctx.bookkeeping.take()
    pending, ctx.pending[:] = list(ctx.pending), []
    for future in pending:
        document = future.result()
        if isinstance(document, Path):
            document.unlink(missing_ok=True)


def write_bookkeeping(ctx: RunContext) -> None:
    """Append the run's pending `ops.runs` and `ops.dq_results` rows (one commit a table), then
    wait for its validation documents."""
    for table, schema, rows in ctx.bookkeeping.take():
        ctx.store.append_rows(rows, schema, table)
    wait_for_documents(ctx)
