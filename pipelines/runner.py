"""Run the job graph in dependency order under the warehouse lock, with bookkeeping.

Each task's module declares a `JOB`; the executor for its kind does the I/O.
A failure (a `fail` expectation, unreadable input) stops the run: later tasks
would build on incomplete data. Every task leaves a row in `ops.runs`.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from dataclasses import dataclass, field

from pipelines.bookkeeping import record_run, wait_for_documents
from pipelines.config import Config
from pipelines.context import JobResult, RunContext
from pipelines.executors import bronze, gold, silver
from pipelines.graph import JobGraph, load_graph
from pipelines.jobs import BronzeJob, GoldJob, SilverJob
from pipelines.lock import warehouse_lock
from pipelines.spark import get_spark
from pipelines.store import open_store

EXECUTORS = {BronzeJob: bronze.run, SilverJob: silver.run, GoldJob: gold.run}
LAYERS = ("bronze", "silver", "gold")


class RunFailed(RuntimeError):
    """A task failed; the message is the one-line reason."""


@dataclass
class RunSummary:
    run_id: str
    results: dict[str, JobResult] = field(default_factory=dict)
    seconds: float = 0.0

    def total(self, attribute: str, layer: str | None = None) -> int:
        return sum(
            getattr(r, attribute) for key, r in self.results.items() if layer is None or key.startswith(layer)
        )


def new_run_id() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:8]


def run_pipeline(
    config: Config,
    layers: tuple[str, ...] = LAYERS,
    graph: JobGraph | None = None,
    log_format: str = "text",
    spark=None,
) -> RunSummary:
    """Run the tasks of `layers`; raises RunFailed with a one-line reason when a task fails."""
    unknown = set(layers) - set(LAYERS)
    if unknown:
        raise ValueError(f"unknown layers {sorted(unknown)}; choose from {LAYERS}")
    if not config.landing.is_dir() and "bronze" in layers:
        raise RunFailed(f"landing folder {config.landing} does not exist")
    graph = graph or load_graph()
    spark = spark or get_spark(config)
    store = open_store(spark, config.warehouse, config.engine)
    run_id = new_run_id()
    ctx = RunContext(spark, store, config, run_id, dt.datetime.now(dt.timezone.utc), log_format)
    summary = RunSummary(run_id)
    started = time.monotonic()
    with warehouse_lock(config.warehouse, config.section("run")["lock_timeout_seconds"]):
        ctx.log("run", run_id=run_id, warehouse=str(config.warehouse), engine=store.engine.name)
        try:
            for task in graph.ordered(set(layers)):
                job = task.job(config)
                result = _run_task(ctx, task.key, job)
                summary.results[task.key] = result
                if result.status == "FAILED":
                    summary.seconds = time.monotonic() - started
                    raise RunFailed(f"{task.key}: {result.message}")
        finally:
            wait_for_documents(ctx)
    summary.seconds = time.monotonic() - started
    return summary


def _run_task(ctx: RunContext, key: str, job) -> JobResult:
    executor = EXECUTORS[type(job)]
    started_at = dt.datetime.now(dt.timezone.utc)
    clock = time.monotonic()
    try:
        result = executor(job, ctx)
    except Exception as exc:  # recorded, then the run stops with this reason
        result = JobResult(status="FAILED", message=f"{type(exc).__name__}: {exc}".splitlines()[0])
    seconds = time.monotonic() - clock
    record_run(ctx, key, job.table, started_at, result, getattr(job, "reconciles", None))
    ctx.log(
        result.status.lower(),
        task=key,
        rows_in=result.rows_in,
        rows_out=result.rows_out,
        quarantined=result.rows_quarantined or None,
        duplicates=result.rows_duplicate or None,
        files=result.files or None,
        seconds=f"{seconds:.1f}",
        note=result.message,
    )
    return result
