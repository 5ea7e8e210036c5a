"""Run the task graph in dependency order under the warehouse lock, with bookkeeping.

Each task's module declares a `SPEC`; the executor for its kind does the I/O.
A failure (a `fail` expectation, unreadable input) stops the run: later tasks
would build on incomplete data. Every task leaves a row in `ops.runs`.

Tasks whose upstream tasks are done may run at once, as Databricks runs a job's
tasks: the graph is wide (fifteen DataWorks families, nine gold tables). Each task
run beside others gets a Spark session of its own (`task_session`), so its SQL
settings stay its own; writes to shared tables (`silver.quarantine`, `ops.*`) take
turns in the table store. `run.parallel_tasks` says how many
(`pipelines.orchestration.admission`): with `auto`, small tasks side by side, large ones alone.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

from pyspark.sql import SparkSession

from pipelines.core.config import Config
from pipelines.core.context import RunContext, TaskObserver, TaskResult
from pipelines.core.graph import Task, TaskGraph, inputs_of, load_graph
from pipelines.core.table_specs import BronzeTableSpec, GoldTableSpec, SilverTableSpec
from pipelines.executors import bronze, gold, silver
from pipelines.landing.folder_marks import TABLE as LANDING_FOLDERS
from pipelines.landing.ingestion_log import TABLE as INGESTION_LOG
from pipelines.ops.bookkeeping import (
    DQ_RESULTS,
    RUNS,
    discard_bookkeeping,
    prepare_documents,
    record_run,
    write_bookkeeping,
)
from pipelines.ops.collector_losses import load_collector_losses
from pipelines.ops.compaction import TableCompaction, compact_after_run
from pipelines.orchestration.admission import Start, admission_for
from pipelines.orchestration.failure import one_line_reason
from pipelines.orchestration.lock import warehouse_lock
from pipelines.orchestration.session_on_demand import NO_SESSION, SessionNeeded, may_run_without_session
from pipelines.runtime.spark import (
    get_spark,
    is_connect,
    release_task_session,
    runs_tasks_side_by_side,
    task_session,
)
from pipelines.store import open_configured_store, open_folder_store

EXECUTORS = {BronzeTableSpec: bronze.run, SilverTableSpec: silver.run, GoldTableSpec: gold.run}
LAYERS = ("bronze", "silver", "gold")
TASK_TAG = "lakehouse-task-"  # the Spark job tag of a task's jobs, followed by the task's key
SHARED_TABLES = (RUNS, DQ_RESULTS, INGESTION_LOG, LANDING_FOLDERS, silver.QUARANTINE)  # written by many tasks


class RunFailed(RuntimeError):
    """A task failed; the message is the one-line reason."""


@dataclass
class RunSummary:
    run_id: str
    results: dict[str, TaskResult] = field(default_factory=dict)
    seconds: float = 0.0
    compactions: list[TableCompaction] = field(default_factory=list)

    def total(self, attribute: str, layer: str | None = None) -> int:
        return sum(
            getattr(r, attribute) for key, r in self.results.items() if layer is None or key.startswith(layer)
        )


def new_run_id() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:8]


def run_pipeline(
    config: Config,
    layers: tuple[str, ...] = LAYERS,
    graph: TaskGraph | None = None,
    log_format: str = "text",
    spark=None,
    lock: bool = True,
    observer: TaskObserver | None = None,
    compact: bool = True,
    notes: dict[str, str] | None = None,
    session: Callable[[], SparkSession] | None = None,
    in_sight: Callable[[], int] | None = None,
) -> RunSummary:
    """Run the tasks of `layers`; raises RunFailed with a one-line reason when a task fails.

    `lock`: hold the warehouse lock for the run (one run at a time). A task of a scheduled
    Databricks job runs without it: the Jobs service starts one run of the job at a time
    (`max_concurrent_runs: 1`), its tasks run side by side on distinct tables, and the tables
    they share only take appends, which Delta commits concurrently without conflict.

    `observer` watches each task (`TaskObserver`). `compact`: compact the tables the run wrote
    once it succeeded (`maintenance`); a run of part of the graph beside others leaves that to
    a maintenance step of its own. `notes`: more fields for the run's first line (how the
    caller started Spark, say). `session`: starts the run's Spark session when `spark` is not
    given (`get_spark` by default); a run with nothing in sight first runs without one
    (`pipelines.orchestration.session_on_demand`), so an idle run starts no JVM. `in_sight`: the
    rows the run has in sight, where the caller weighed them already (`rows_in_sight`)."""
    unknown = set(layers) - set(LAYERS)
    if unknown:
        raise ValueError(f"unknown layers {sorted(unknown)}; choose from {LAYERS}")
    through_spark = config.section("bronze").get("read_landing") == "spark"
    if (
        "bronze" in layers
        and not through_spark
        and not config.landing.is_dir()
        and not _remote(spark, config)
    ):
        raise RunFailed(f"landing folder {config.landing} does not exist")
    graph = graph or load_graph()
    prepare_documents()
    attempt = functools.partial(_run, config, layers, graph, log_format, lock, observer, compact, notes)
    if spark is None and may_run_without_session(config, layers, graph, in_sight):
        try:
            return attempt(NO_SESSION, open_folder_store(config.warehouse, NO_SESSION).for_run())
        except SessionNeeded:
            pass  # new work arrived since the weighing: the run starts again with a session
    spark = spark or (session or functools.partial(get_spark, config))()
    return attempt(spark, open_configured_store(spark, config).for_run())


def _run(
    config: Config,
    layers: tuple[str, ...],
    graph: TaskGraph,
    log_format: str,
    lock: bool,
    observer: TaskObserver | None,
    compact: bool,
    notes: dict[str, str] | None,
    spark,
    store,
) -> RunSummary:
    """`run_pipeline` on `spark` (or `NO_SESSION`) and `store`, a run's own."""
    run_id = new_run_id()
    ctx = RunContext(spark, store, config, run_id, dt.datetime.now(dt.timezone.utc), log_format)
    if observer is not None:
        ctx.observer = observer
    summary = RunSummary(run_id)
    started = time.monotonic()
    held = (
        warehouse_lock(config.warehouse, config.section("run")["lock_timeout_seconds"])
        if lock
        else nullcontext()
    )
    with held:
        tasks = graph.ordered(set(layers))
        store.prefetch(_tables_of(tasks, config))
        abandoned = False
        try:
            ctx.log(
                "run",
                run_id=run_id,
                warehouse=str(config.warehouse),
                engine=store.engine_name,
                spark=_spark_note(spark),
                **(notes or {}),
            )
            failed = _run_graph(ctx, tasks, config.section("run")["parallel_tasks"], summary)
            if "bronze" in layers:  # the collectors' refusals, beside landing, into ops.collector_losses
                load_collector_losses(ctx)
        except SessionNeeded:
            abandoned = True
            raise
        finally:
            if abandoned:
                discard_bookkeeping(ctx)
            else:
                write_bookkeeping(ctx)
        if failed:
            summary.seconds = time.monotonic() - started
            raise RunFailed(f"{failed}: {summary.results[failed].message}")
        if compact:
            summary.compactions = _compact_written_tables(ctx, tasks, summary)
        store.remember_logs(_tables_of(tasks, config))
        summary.seconds = time.monotonic() - started
    return summary


def _spark_note(spark) -> str | None:
    """The run's first line says `spark=none` for a run without a session, `connect` over Spark Connect."""
    if spark is NO_SESSION:
        return "none"
    return "connect" if is_connect(spark) else None


def _remote(spark, config: Config) -> bool:
    """Whether the run's Spark is (or will be) a Spark Connect server, which may see a landing
    folder this machine does not (bronze then reads it through Spark and checks it there)."""
    if spark is not None:
        return is_connect(spark)
    return config.raw.get("profile") == "connect"


def _tables_of(tasks: list[Task], config: Config) -> list[str]:
    """The tables `tasks` build and read, and the ingestion log bronze tasks consult."""
    tables = [INGESTION_LOG, LANDING_FOLDERS] if any(task.layer == "bronze" for task in tasks) else []
    for task in tasks:
        spec = task.spec(config)
        tables += [spec.table, *inputs_of(spec)]
    return tables


def _compact_written_tables(ctx: RunContext, tasks: list[Task], summary: RunSummary) -> list[TableCompaction]:
    """After a successful run: the tables its tasks wrote, and the shared ones tasks write to."""
    ran = [t for t in tasks if t.key in summary.results and summary.results[t.key].status != "SKIPPED"]
    if not ran:
        return []
    written = [*(t.spec(ctx.config).table for t in ran), *SHARED_TABLES]
    try:
        return compact_after_run(ctx.store, ctx.config, written, ctx.log)
    except Exception as exc:  # the run's data is committed; a compaction left its table as it was
        raise RunFailed(f"compaction: {one_line_reason(exc)}") from exc


def _run_graph(ctx: RunContext, tasks: list[Task], parallel: int | str, summary: RunSummary) -> str | None:
    """Run `tasks` (in dependency order), each once its upstream tasks among them succeeded.
    After a failure no task starts; those running finish. Returns the first failed task's key.
    A task that runs alone runs on this thread in the run's own session, as one by one; so do
    all of a session's that has no sibling sessions for tasks side by side (the session of a
    Databricks serverless runtime: `pipelines.runtime.connect_siblings`)."""
    side_by_side = ctx.spark is not NO_SESSION and runs_tasks_side_by_side(ctx.spark)
    admission = admission_for(ctx, parallel if side_by_side else 1)
    if admission.one_by_one:
        for task in tasks:
            summary.results[task.key] = _run_task(ctx, task.key, task.spec(ctx.config))
            if summary.results[task.key].status == "FAILED":
                return task.key
        return None
    keys = {t.key for t in tasks}
    waiting, running, succeeded = list(tasks), {}, set()
    failed: str | None = None

    def settle(task: Task, result: TaskResult) -> None:
        nonlocal failed
        summary.results[task.key] = result
        if result.status == "FAILED":
            failed = failed or task.key
        else:
            succeeded.add(task.key)

    with ThreadPoolExecutor(admission.width, thread_name_prefix="lakehouse-task") as pool:
        while waiting or running:
            ready = [t for t in waiting if all(d in succeeded for d in t.depends_on if d in keys)]
            ran_alone = False
            for task in ready if failed is None else []:
                start = admission.start(task, list(running.values()))
                if start is Start.WAIT:
                    continue
                waiting.remove(task)
                if start is Start.ALONE:
                    settle(task, _run_task(ctx, task.key, task.spec(ctx.config)))
                    ran_alone = True
                    break  # what is ready now follows from its result
                running[pool.submit(_run_task_in_own_session, ctx, task)] = task
            if ran_alone:
                continue
            if not running:
                break  # done, or after a failure: the waiting tasks never start
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                settle(running.pop(future), future.result())
    return failed


def _run_task_in_own_session(ctx: RunContext, task: Task) -> TaskResult:
    session = task_session(ctx.spark)
    try:
        own = dataclasses.replace(ctx, spark=session, store=ctx.store.for_session(session))
        return _run_task(own, task.key, task.spec(ctx.config))
    finally:
        release_task_session(session)


@contextmanager
def _tagged(spark, key: str) -> Iterator[None]:
    """The Spark jobs started inside carry the job tag `TASK_TAG` + the task's key, so Spark's UI
    and event log (and `make bench`) tell which task ran which job."""
    if spark is NO_SESSION:
        yield
        return
    spark.addTag(TASK_TAG + key)
    try:
        yield
    finally:
        spark.removeTag(TASK_TAG + key)


def _run_task(ctx: RunContext, key: str, spec) -> TaskResult:
    executor = EXECUTORS[type(spec)]
    started_at = dt.datetime.now(dt.timezone.utc)
    clock = time.monotonic()
    ctx.observer.task_started(key, spec)
    with _tagged(ctx.spark, key):
        try:
            result = executor(spec, ctx)
        except Exception as exc:  # recorded, then the run stops with this reason
            result = TaskResult(status="FAILED", message=one_line_reason(exc))
    seconds = time.monotonic() - clock
    ctx.observer.task_executed(key, spec, result)
    record_run(ctx, key, spec.table, started_at, result, getattr(spec, "reconciles", None))
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
    ctx.observer.task_recorded(key, spec, result)
    return result
