"""`python -m benchmarks.run`: wall time, throughput and memory of the pipeline, per stage, with targets.

Why: performance claims need numbers a reader can reproduce with one command.
One run generates N events, runs the whole job graph from an empty warehouse
(Spark start-up included), adds ~1% new events in new files and runs again
incrementally, then runs the DuckDB reference on the same files and
cross-checks it against the gold timelines. `--sizes` runs each size in its
own process (clean memory peaks, cold start each time) and reports how the
time per event grows.

Nothing in `pipelines/` is edited: the runner's task call and the silver
executor's quality steps are wrapped with timers for the duration of a run
(see `Instrumentation`). The output is an aligned text report and, last, one
JSON line with every figure.

    python -m benchmarks.run --events 250000
    python -m benchmarks.run --sizes 250000,1000000,4000000 --workdir /tmp/bench
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

DEFAULT_EVENTS = 250_000
MB = 1024 * 1024
COMPARABLE_TABLES = (  # the part of the pipeline the DuckDB reference also does
    "bronze.datahub_entity_change_events",
    "silver.datahub_entity_changes",
    "gold.tag_timeline",
    "gold.ownership_timeline",
)
GOLD_TIMELINES = ("gold.tag_timeline", "gold.ownership_timeline")


# -- per-task timings -------------------------------------------------------------------------


@dataclass
class TaskTiming:
    """One task of one run: the runner's counts plus where its seconds went."""

    phase: str
    key: str
    table: str
    layer: str
    status: str = ""
    seconds: float = 0.0
    source_rows: int = 0
    rows_in: int = 0
    rows_out: int = 0
    quarantined: int = 0
    duplicates: int = 0
    jobs: int = 0
    stages: int = 0
    typing_s: float = 0.0  # silver: reading bronze, typing and flagging rows (the cached frame)
    dedup_s: float = 0.0  # silver: dedup within the batch and against the table
    dq_rules_s: float = 0.0  # silver: the row-level expectations' aggregation
    dq_unique_s: float = 0.0  # silver: uniqueness expectations on the rows written
    dq_record_s: float = 0.0  # silver: ops.dq_results rows + the GX result document
    bookkeeping_s: float = 0.0  # the ops.runs row every task writes
    scan_s: float = 0.0  # bronze: hashing and UTF-8 checking the new landing files, in Python
    write_s: float = 0.0  # table store appends/overwrites/merges of the task's own tables

    @property
    def dq_s(self) -> float:
        return self.dq_rules_s + self.dq_unique_s + self.dq_record_s

    @property
    def input_rows(self) -> int:
        return self.source_rows or self.rows_in


class Instrumentation:
    """Wraps the runner's `_run_task` and the silver executor's DQ steps with timers while active.

    The DQ split works because the silver executor persists the flagged rows and
    the accepted rows before measuring them: the wrappers materialise each cached
    frame first (typing, dedup) and time the expectation aggregation separately.
    That adds one job over cached data per step, a few tens of milliseconds.
    """

    def __init__(self, spark, dq_split: bool = True) -> None:
        self.spark = spark
        self.dq_split = dq_split
        self.phase = ""
        self.tasks: list[TaskTiming] = []
        self.current: TaskTiming | None = None
        self.missing: list[str] = []  # wrapped names the pipeline no longer has (figures then stay 0)
        self._bookkeeping = 0  # > 0 while a bookkeeping call runs: its writes are not the task's

    @contextlib.contextmanager
    def active(self) -> Iterator[Instrumentation]:
        from pipelines import runner
        from pipelines.executors import bronze, silver
        from pipelines.store import TableStore

        patches = [
            (runner, "_run_task", self._wrap_task),
            (runner, "record_run", self._wrap_timer("bookkeeping_s", bookkeeping=True)),
            (bronze, "scan", self._wrap_timer("scan_s")),
            (silver, "measure", self._wrap_materialised("typing_s", "dq_rules_s")),
            (silver, "measure_uniqueness", self._wrap_materialised("dedup_s", "dq_unique_s")),
            (silver, "record_dq", self._wrap_timer("dq_record_s", bookkeeping=True)),
        ]
        patches += [(TableStore, n, self._wrap_timer("write_s")) for n in ("append", "overwrite", "merge")]
        self.missing = [f"{m.__name__}.{n}" for m, n, _ in patches if not hasattr(m, n)]
        patches = [(m, n, wrap) for m, n, wrap in patches if hasattr(m, n)]
        originals = [(module, name, getattr(module, name)) for module, name, _ in patches]
        try:
            for module, name, wrap in patches:
                setattr(module, name, wrap(getattr(module, name)))
            yield self
        finally:
            for module, name, original in originals:
                setattr(module, name, original)
            self.spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)

    def for_phase(self, phase: str) -> list[TaskTiming]:
        return [t for t in self.tasks if t.phase == phase]

    def _wrap_task(self, real: Callable) -> Callable:
        def run_task(ctx, key, job):
            timing = TaskTiming(self.phase, key, job.table, job.table.split(".")[0])
            group = f"bench:{self.phase}:{key}"
            self.spark.sparkContext.setJobGroup(group, key)
            self.current = timing
            started = time.monotonic()
            try:
                result = real(ctx, key, job)
            finally:
                timing.seconds = time.monotonic() - started
                self.current = None
            self._count_jobs(timing, group)
            timing.status = result.status
            timing.source_rows, timing.rows_in, timing.rows_out = (
                result.source_rows,
                result.rows_in,
                result.rows_out,
            )
            timing.quarantined, timing.duplicates = result.rows_quarantined, result.rows_duplicate
            self.tasks.append(timing)
            return result

        return run_task

    def _count_jobs(self, timing: TaskTiming, group: str) -> None:
        tracker = self.spark.sparkContext.statusTracker()
        ids = tracker.getJobIdsForGroup(group)
        timing.jobs = len(ids)
        infos = [tracker.getJobInfo(i) for i in ids]
        timing.stages = sum(len(info.stageIds) for info in infos if info is not None)

    def _wrap_timer(self, attribute: str, bookkeeping: bool = False) -> Callable:
        """Add the call's seconds to the current task's `attribute` (writes inside bookkeeping excepted)."""

        def wrap(real: Callable) -> Callable:
            def timed(*args, **kwargs):
                counted = self.current is not None and not self._bookkeeping
                self._bookkeeping += bookkeeping
                started = time.monotonic()
                try:
                    return real(*args, **kwargs)
                finally:
                    self._bookkeeping -= bookkeeping
                    if counted:
                        spent = time.monotonic() - started
                        setattr(self.current, attribute, getattr(self.current, attribute) + spent)

            return timed

        return wrap

    def _wrap_materialised(self, before: str, dq: str) -> Callable:
        def wrap(real: Callable) -> Callable:
            def timed(frame, *args, **kwargs):
                started = time.monotonic()
                if self.dq_split:
                    frame.count()
                materialised = time.monotonic()
                try:
                    return real(frame, *args, **kwargs)
                finally:
                    if self.current is not None:
                        done = time.monotonic()
                        setattr(self.current, before, getattr(self.current, before) + materialised - started)
                        setattr(self.current, dq, getattr(self.current, dq) + done - materialised)

            return timed

        return wrap


# -- memory -------------------------------------------------------------------------------------


def _proc_status_mb(pid: int | str, field_name: str) -> float | None:
    """A `VmRSS`/`VmHWM` line of /proc/<pid>/status in MB (None off Linux or for a remote JVM)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class MemorySampler:
    """Samples the driver's memory in a background thread, keeping peaks per phase.

    JVM heap used comes from the MemoryMXBean through py4j; resident sizes of
    the Python process and the local JVM from /proc. Sampling can miss spikes
    shorter than the interval; the heap pools' own peak counters (reset at start)
    give an upper bound that cannot.
    """

    def __init__(self, spark, interval: float = 0.25) -> None:
        self.interval = interval
        jvm = spark.sparkContext._jvm
        management = jvm.java.lang.management.ManagementFactory
        self.memory_bean = management.getMemoryMXBean()
        self.heap_pools = [p for p in management.getMemoryPoolMXBeans() if str(p.getType()) == "Heap memory"]
        self.heap_max_mb = self.memory_bean.getHeapMemoryUsage().getMax() / MB
        try:
            self.jvm_pid: int | None = int(jvm.java.lang.ProcessHandle.current().pid())
        except Exception:  # a JVM without ProcessHandle: no RSS figures
            self.jvm_pid = None
        self.phase = "start"
        self.peaks: dict[str, dict[str, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="bench-memory", daemon=True)

    def start(self) -> None:
        for pool in self.heap_pools:
            pool.resetPeakUsage()
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def sample(self) -> None:
        figures = {
            "jvm_heap_used_mb": self.memory_bean.getHeapMemoryUsage().getUsed() / MB,
            "jvm_heap_after_gc_mb": self._after_gc_mb(),
            "python_rss_mb": _proc_status_mb("self", "VmRSS") or 0.0,
            "jvm_rss_mb": (_proc_status_mb(self.jvm_pid, "VmRSS") or 0.0) if self.jvm_pid else 0.0,
        }
        peaks = self.peaks.setdefault(self.phase, {})
        for name, value in figures.items():
            peaks[name] = max(peaks.get(name, 0.0), value)

    def _after_gc_mb(self) -> float:
        """Heap left by the latest collection of each pool: the live data, which `used` overstates
        because G1 lets garbage fill the heap before collecting."""
        usages = [pool.getCollectionUsage() for pool in self.heap_pools]
        return sum(u.getUsed() for u in usages if u is not None) / MB

    def stop(self) -> dict:
        """Stop sampling; the peaks per phase and the process-lifetime peaks, in MB."""
        if self._thread.is_alive():
            self._stop.set()
            self._thread.join(timeout=5)
            self.sample()
        return {
            "heap_max_mb": round(self.heap_max_mb),
            "jvm_heap_pool_peaks_mb": round(sum(p.getPeakUsage().getUsed() for p in self.heap_pools) / MB),
            "jvm_rss_hwm_mb": round(_proc_status_mb(self.jvm_pid, "VmHWM") or 0) if self.jvm_pid else None,
            "python_maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "per_phase": {
                phase: {k: round(v) for k, v in peaks.items()} for phase, peaks in self.peaks.items()
            },
        }


# -- landing data -------------------------------------------------------------------------------


def generate_landing(landing: Path, events: int, seed: int) -> dict[str, int]:
    """The base landing folder, written from scratch."""
    from pipelines.generate import generate

    if landing.exists():
        shutil.rmtree(landing)
    return generate(landing, events, seed)


def add_increment(landing: Path, events: int, seed: int) -> tuple[dict[str, int], str]:
    """Generate `events` more records and move them under `<source>/incr-<n>/` (new names, same folders)."""
    from pipelines.generate import generate

    number = 1
    while any((landing / source / f"incr-{number}").exists() for source in _sources(landing)):
        number += 1
    folder = f"incr-{number}"
    with tempfile.TemporaryDirectory(prefix="bench-incr-", dir=landing.parent) as scratch:
        counts = generate(scratch, events, seed)
        for path in sorted(Path(scratch).rglob("*")):
            if path.is_file():
                relative = path.relative_to(scratch)
                target = landing / relative.parts[0] / folder / Path(*relative.parts[1:])
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(path), str(target))
    return counts, folder


def _sources(landing: Path) -> list[str]:
    return sorted(p.name for p in landing.iterdir() if p.is_dir()) if landing.is_dir() else []


def landing_stats(landing: Path) -> dict[str, float]:
    files = [p for p in landing.rglob("*") if p.is_file()]
    return {"files": len(files), "mb": round(sum(p.stat().st_size for p in files) / MB, 1)}


# -- one size -----------------------------------------------------------------------------------


@dataclass
class Phase:
    """One pipeline run (full or incremental)."""

    name: str
    events: int
    wall_s: float = 0.0  # what a user waits for (the full run includes Spark start-up)
    pipeline_s: float = 0.0  # run_pipeline's own clock (graph, lock, every task)
    tasks: list[TaskTiming] = field(default_factory=list)
    error: str | None = None  # the runner's one-line reason when a task failed: figures are partial

    def total(self, attribute: str, layer: str | None = None) -> float:
        return sum(getattr(t, attribute) for t in self.tasks if layer is None or t.layer == layer)

    def seconds_of(self, tables: tuple[str, ...]) -> float:
        return sum(t.seconds for t in self.tasks if t.table in tables)


def _run_phase(instrumentation: Instrumentation, config, spark, name: str, events: int) -> Phase:
    from pipelines.runner import RunFailed, run_pipeline

    instrumentation.phase = name
    phase = Phase(name, events)
    started = time.monotonic()
    try:
        phase.pipeline_s = run_pipeline(config, spark=spark).seconds
    except RunFailed as exc:  # keep what was measured; the report and the exit code say it failed
        phase.error = str(exc)
        phase.pipeline_s = time.monotonic() - started
    phase.wall_s = time.monotonic() - started
    phase.tasks = instrumentation.for_phase(name)
    return phase


def _timelines_ran(phase: Phase | None) -> bool:
    if phase is None or phase.error is None:
        return True
    done = {t.table for t in phase.tasks if t.status in ("SUCCESS", "SKIPPED")}
    return all(t in done for t in GOLD_TIMELINES)


def _gold_present(store) -> list[str]:
    return [t for t in GOLD_TIMELINES if store.exists(t)]


def cross_check(ref, store) -> dict:
    """The reference's current rows and intervals vs the Spark gold tables (DataHub rows only)."""
    from pyspark.sql import functions as F

    present = _gold_present(store)
    if len(present) < len(GOLD_TIMELINES):
        missing = sorted(set(GOLD_TIMELINES) - set(present))
        return {"skipped": f"gold tables absent: {', '.join(missing)} (not in the job graph yet?)"}
    checks = {}
    for table, keys in (("tag_timeline", ["tag_urn"]), ("ownership_timeline", ["owner_urn", "owner_type"])):
        gold = store.read(f"gold.{table}").where(F.col("source") == "datahub")
        current = gold.where("is_current").select("entity_urn", *keys).toArrow()
        checks[f"{table}.current"] = ref.compare(table, current, ["entity_urn", *keys], where="is_current")
        intervals = gold.select(
            "entity_urn",
            *keys,
            F.unix_micros("valid_from").alias("valid_from_us"),
            F.unix_micros("valid_to").alias("valid_to_us"),
            "end_reason",
        ).toArrow()
        columns = ["entity_urn", *keys, "valid_from_us", "valid_to_us", "end_reason"]
        checks[f"{table}.intervals"] = ref.compare(table, intervals, columns)
    return checks


def _reference(
    landing: Path, out_dir: Path, store, sampler: MemorySampler, phase: Phase | None = None
) -> dict:
    """Time the DuckDB reference on `landing` and cross-check it; its memory peaks go to phase `duckdb`.

    The cross-check is skipped when `phase` (the run that should have updated gold) failed before
    both timeline tasks ran: gold then still shows the previous run.
    """
    from benchmarks.duckdb_reference import run_reference

    sampler.phase = "duckdb"
    ref = run_reference(landing, out_dir=out_dir)
    try:
        result = {
            "seconds": ref.seconds,
            "stage_seconds": ref.stage_seconds,
            "records": ref.records,
            "events": ref.events,
            "tag_intervals": ref.count("tag_timeline"),
            "ownership_intervals": ref.count("ownership_timeline"),
            "current_tags": ref.count("tag_timeline", "is_current"),
            "current_owners": ref.count("ownership_timeline", "is_current"),
            "skipped_documents": ref.skipped_documents,
        }
        result["cross_check"] = (
            cross_check(ref, store)
            if _timelines_ran(phase)
            else {"skipped": f"the {phase.name} run failed before the gold timelines ran ({phase.error})"}
        )
    finally:
        ref.con.close()
    return result


def run_size(
    events: int,
    workdir: Path,
    fraction: float = 0.01,
    seed: int = 0,
    spark=None,
    dq_split: bool = True,
    reference: bool = True,
) -> dict:
    """Everything for one size; returns the figures (see `report` for their meaning).

    Pass `spark` to reuse a session (tests): start-up then counts as zero and the
    session is left running.
    """
    from pipelines.config import load_config
    from pipelines.spark import get_spark
    from pipelines.store import open_store

    landing, warehouse = workdir / "landing", workdir / "warehouse"
    if warehouse.exists():
        shutil.rmtree(warehouse)
    started = time.monotonic()
    generated = generate_landing(landing, events, seed)
    figures: dict = {"events": events, "incremental_fraction": fraction, "seed": seed, "generated": generated}
    figures |= {"landing": landing_stats(landing), "generate_s": round(time.monotonic() - started, 2)}
    config = load_config().with_overrides(landing=str(landing), warehouse=str(warehouse))
    load_before = os.getloadavg()[0]

    wall_started = time.monotonic()
    own_session = spark is None
    spark = spark or get_spark(config)
    figures["spark_startup_s"] = round(time.monotonic() - wall_started, 2) if own_session else 0.0
    sampler = MemorySampler(spark)
    instrumentation = Instrumentation(spark, dq_split)
    references: dict[str, dict | None] = {"full": None, "after_increment": None}
    sampler.start()
    try:
        with instrumentation.active():
            sampler.phase = "full"
            full = _run_phase(instrumentation, config, spark, "full", sum(generated.values()))
            full.wall_s = time.monotonic() - wall_started
            python_peak_full = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            store = open_store(spark, warehouse, config.engine)
            if reference:
                references["full"] = _reference(landing, workdir / "duckdb-full", store, sampler)
            incremental, folder = Phase("incremental", 0, error="not run: the full run failed"), None
            if full.error is None:
                increment, folder = add_increment(landing, max(1, round(events * fraction)), seed + 1)
                sampler.phase = "incremental"
                incremental = _run_phase(
                    instrumentation, config, spark, "incremental", sum(increment.values())
                )
            if reference and full.error is None:
                references["after_increment"] = _reference(
                    landing, workdir / "duckdb-incr", store, sampler, incremental
                )
    finally:
        memory = sampler.stop()
        if own_session:
            spark.stop()
    memory["python_maxrss_spark_full_mb"] = round(python_peak_full)
    full_figures = _phase_figures(full)
    figures |= {
        "full": full_figures,
        "incremental": _phase_figures(incremental) | {"folder": folder},
        "incremental_share_of_full": round(incremental.wall_s / full.wall_s, 4) if full.wall_s else None,
        "dq_share_of_pipeline": round(full_figures["dq_s"] / full.pipeline_s, 4),
        "dq_split": dq_split and not instrumentation.missing,
        "instrumentation_missing": instrumentation.missing,
        "memory": memory,
        "driver_memory_mb": _driver_memory(memory),
        "duckdb": _duckdb_figures(full, references) if reference else None,
        "machine": machine_info(load_before),
    }
    return figures


def _phase_figures(phase: Phase) -> dict:
    silver = [t for t in phase.tasks if t.layer == "silver"]
    return {
        "events": phase.events,
        "error": phase.error,
        "wall_s": round(phase.wall_s, 2),
        "pipeline_s": round(phase.pipeline_s, 2),
        "events_per_s": round(phase.events / phase.wall_s) if phase.wall_s else None,
        "tasks_s": round(phase.total("seconds"), 2),
        "layer_s": {layer: round(phase.total("seconds", layer), 2) for layer in ("bronze", "silver", "gold")},
        "dq_s": round(sum(t.dq_s for t in silver), 2),
        "dq_rules_s": round(phase.total("dq_rules_s"), 2),
        "dq_unique_s": round(phase.total("dq_unique_s"), 2),
        "dq_record_s": round(phase.total("dq_record_s"), 2),
        "silver_typing_s": round(phase.total("typing_s"), 2),
        "silver_dedup_s": round(phase.total("dedup_s"), 2),
        "bookkeeping_s": round(phase.total("bookkeeping_s"), 2),
        "landing_scan_s": round(phase.total("scan_s"), 2),
        "write_s": round(phase.total("write_s"), 2),
        "spark_jobs": int(phase.total("jobs")),
        "spark_stages": int(phase.total("stages")),
        "comparable_s": round(phase.seconds_of(COMPARABLE_TABLES), 2),
        "tasks": [
            {k: (round(v, 3) if isinstance(v, float) else v) for k, v in asdict(t).items() if k != "phase"}
            | {"dq_s": round(t.dq_s, 3)}
            for t in phase.tasks
        ],
    }


def _driver_memory(memory: dict) -> int:
    """Peak live JVM heap (after GC) plus peak Python RSS during the Spark runs: what the driver holds.

    The heap's `used` peak is printed too, but it mostly shows the -Xmx: G1 lets garbage fill
    the heap before it collects.
    """
    spark_phases = [memory["per_phase"].get(p, {}) for p in ("full", "incremental")]
    heap = max(p.get("jvm_heap_after_gc_mb", 0) for p in spark_phases)
    python = max(p.get("python_rss_mb", 0) for p in spark_phases)
    return round(heap + python)


def _duckdb_figures(full: Phase, references: dict[str, dict | None]) -> dict:
    """Spark's comparable tasks vs the reference; without gold timelines, the ingest/typing part only."""
    ref = references["full"]
    with_gold = all(t in {task.table for task in full.tasks} for t in GOLD_TIMELINES)
    stages = ref["stage_seconds"]
    duck_s = ref["seconds"] if with_gold else stages["ingest"] + stages["dedup_flatten"]
    spark_s = full.seconds_of(COMPARABLE_TABLES)
    comparable = "ECE bronze + silver entity changes + gold tag/ownership timelines"
    if not with_gold:
        comparable = (
            "ECE bronze + silver entity changes vs DuckDB ingest + dedup (no gold timelines in the graph)"
        )
    return references | {
        "comparable": comparable,
        "spark_comparable_s": round(spark_s, 2),
        "duckdb_comparable_s": round(duck_s, 2),
        "ratio_spark_over_duckdb": round(spark_s / duck_s, 1) if duck_s else None,
        "ratio_whole_pipeline_over_duckdb": round(full.wall_s / ref["seconds"], 1)
        if ref["seconds"]
        else None,
    }


def machine_info(load_before: float) -> dict:
    """What the numbers were measured on; a high load means the machine was shared."""
    import duckdb
    import pyspark

    total_mb = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            total_mb = round(int(meminfo.readline().split()[1]) / 1024)
    return {
        "cpus": os.cpu_count(),
        "memory_mb": total_mb,
        "load_1min_before": round(load_before, 2),
        "load_1min_after": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "duckdb": duckdb.__version__,
        "at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


# -- targets ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    name: str
    goal: str
    value: float | None
    passed: bool | None  # None: the run did not measure what the target needs
    note: str = ""

    @property
    def verdict(self) -> str:
        return "N/A" if self.passed is None else ("PASS" if self.passed else "MISS")


def _at(results: list[dict], events: int) -> dict | None:
    return next((r for r in results if r["events"] == events), None)


def _check(name: str, goal: str, value: float | None, ok: Callable[[float], bool], note: str = "") -> Target:
    return Target(name, goal, value, None if value is None else ok(value), note)


def evaluate_targets(results: list[dict]) -> list[Target]:
    """The issue's targets against the sizes that were run; N/A (with the largest size's figure) otherwise."""
    largest = max(results, key=lambda r: r["events"])
    one_m, four_m = _at(results, 1_000_000), _at(results, 4_000_000)
    at_largest = f"not run; at {largest['events']:,}:"
    incr_share = (one_m or largest)["incremental_share_of_full"]
    growth = _growth(results, 1_000_000, 4_000_000)
    dq_note = f"at {largest['events']:,} events" + ("" if largest["dq_split"] else " (silver total)")
    completed = {r["events"]: not r["full"]["error"] and not r["incremental"]["error"] for r in results}
    return [
        _check(
            "full pipeline, 1M events",
            "<= 60 s wall",
            one_m and one_m["full"]["wall_s"],
            lambda v: v <= 60 and completed[1_000_000],
            "" if one_m else f"{at_largest} {largest['full']['wall_s']:.1f} s",
        ),
        _check(
            "incremental 1% on top of 1M",
            "<= 10 s and < 10% of full",
            one_m and one_m["incremental"]["wall_s"],
            lambda v: v <= 10 and incr_share < 0.10 and completed[1_000_000],
            ("" if one_m else f"{at_largest} {largest['incremental']['wall_s']:.1f} s;")
            + f" {incr_share:.1%} of full",
        ),
        _check(
            "growth per event 1M -> 4M",
            "< 15%",
            growth,
            lambda v: v < 0.15,
            "" if growth is not None else "needs --sizes with 1000000,4000000",
        ),
        _check(
            "DQ share of pipeline time", "< 25%", largest["dq_share_of_pipeline"], lambda v: v < 0.25, dq_note
        ),
        _check(
            "driver memory at 4M",
            "< 4096 MB",
            four_m and four_m["driver_memory_mb"],
            lambda v: v < 4096,
            "JVM heap after GC + Python RSS" if four_m else f"{at_largest} {largest['driver_memory_mb']} MB",
        ),
    ]


def _per_event(result: dict) -> float:
    """Seconds per event of the full run, Spark start-up excluded (a constant, not a per-event cost)."""
    return result["full"]["pipeline_s"] / result["events"]


def _growth(results: list[dict], small: int, large: int) -> float | None:
    a, b = _at(results, small), _at(results, large)
    return _per_event(b) / _per_event(a) - 1 if a and b else None


# -- report -------------------------------------------------------------------------------------


def _table(header: list[str], rows: list[list], align: str) -> str:
    """An aligned text table; `align` has one `<` or `>` per column."""
    padded = [list(row) + [""] * (len(header) - len(row)) for row in rows]
    cells = [[str(c) for c in header]] + [["" if c is None else str(c) for c in row] for row in padded]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = []
    for number, row in enumerate(cells):
        lines.append("  ".join(f"{c:{a}{w}}" for c, a, w in zip(row, align, widths, strict=True)).rstrip())
        if number == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _rate(rows: int, seconds: float) -> str:
    return f"{rows / seconds:,.0f}" if seconds > 0 and rows else ""


def _stage_row(label: str, seconds: float, total: float, *rest) -> list:
    return [label, f"{seconds:.2f}", f"{seconds / total:.1%}", *rest]


def stage_table(phase: dict) -> str:
    """Per task: seconds, share of the run, rows in/out, input rows/s, DQ seconds, Spark jobs/stages."""
    total = phase["pipeline_s"] or 1.0
    rows = []
    for t in phase["tasks"]:
        rows_in = t["source_rows"] or t["rows_in"]
        dq = f"{t['dq_s']:.2f}" if t["layer"] == "silver" else ""
        rows.append(
            _stage_row(
                t["key"],
                t["seconds"],
                total,
                t["status"],
                f"{rows_in:,}",
                f"{t['rows_out']:,}",
                _rate(rows_in, t["seconds"]),
                dq,
                f"{t['write_s']:.2f}",
                t["jobs"],
                t["stages"],
            )
        )
    for layer in ("bronze", "silver", "gold"):
        rows.append(_stage_row(f"= {layer}", phase["layer_s"][layer], total))
    rows.append(_stage_row("= runner outside tasks", phase["pipeline_s"] - phase["tasks_s"], total))
    rows.append(
        _stage_row(
            "= pipeline",
            phase["pipeline_s"],
            total,
            "",
            f"{phase['events']:,}",
            "",
            _rate(phase["events"], phase["pipeline_s"]),
            f"{phase['dq_s']:.2f}",
            f"{phase['write_s']:.2f}",
            phase["spark_jobs"],
            phase["spark_stages"],
        )
    )
    header = "stage|s|share|status|rows in|rows out|in rows/s|DQ s|write s|jobs|stages".split("|")
    return _table(header, rows, "<>><>>>>>>>")


def summary_lines(r: dict) -> list[str]:
    full, incr, mem = r["full"], r["incremental"], r["memory"]
    lines = [
        f"events {r['events']:,} ({r['landing']['files']} files, {r['landing']['mb']} MB; generated in {r['generate_s']:.1f} s)",
        f"spark start-up            {r['spark_startup_s']:8.2f} s",
        f"full run wall             {full['wall_s']:8.2f} s  ({full['events_per_s']:,} events/s, start-up included)",
        f"incremental run wall      {incr['wall_s']:8.2f} s  ({incr['events']:,} events in {incr['folder']}/; "
        f"{r['incremental_share_of_full']:.1%} of full)",
        f"DQ validation (full)      {full['dq_s']:8.2f} s  = {r['dq_share_of_pipeline']:.1%} of pipeline "
        f"(rules {full['dq_rules_s']:.2f}, uniqueness {full['dq_unique_s']:.2f}, results+GX {full['dq_record_s']:.2f})",
        f"silver typing / dedup     {full['silver_typing_s']:8.2f} s / {full['silver_dedup_s']:.2f} s",
        f"ops.runs bookkeeping      {full['bookkeeping_s']:8.2f} s  (one row per task)",
        f"table writes / scan       {full['write_s']:8.2f} s  (append/overwrite/merge) / "
        f"{full['landing_scan_s']:.2f} s (bronze: hashing + UTF-8 check of landing files in Python)",
        f"spark jobs / stages       {full['spark_jobs']:>8} / {full['spark_stages']} (full), "
        f"{incr['spark_jobs']} / {incr['spark_stages']} (incremental)",
        f"driver memory             {r['driver_memory_mb']:8} MB = JVM heap after GC peak + Python RSS peak",
    ]
    for phase in ("full", "incremental", "duckdb"):
        peaks = mem["per_phase"].get(phase)
        if peaks:
            lines.append(
                f"  {phase:<12} JVM heap used {peaks['jvm_heap_used_mb']:>5} MB (max {mem['heap_max_mb']}), "
                f"after GC {peaks.get('jvm_heap_after_gc_mb', 0):>5} MB, "
                f"JVM RSS {peaks['jvm_rss_mb']:>6} MB, Python RSS {peaks['python_rss_mb']:>6} MB"
            )
    lines.append(
        f"  process peaks: JVM heap pools {mem['jvm_heap_pool_peaks_mb']} MB, JVM RSS {mem['jvm_rss_hwm_mb']} MB, "
        f"Python ru_maxrss {mem['python_maxrss_spark_full_mb']} MB after full run, {mem['python_maxrss_mb']} MB at end"
    )
    lines += _duckdb_lines(r["duckdb"])
    m = r["machine"]
    lines.append(
        f"machine: {m['cpus']} CPUs, {m['memory_mb']} MB, load {m['load_1min_before']} -> {m['load_1min_after']}; "
        f"Python {m['python']}, PySpark {m['pyspark']}, DuckDB {m['duckdb']}"
    )
    return lines


def _duckdb_lines(d: dict | None) -> list[str]:
    if d is None:
        return ["duckdb reference: skipped (--no-duckdb)"]
    full = d["full"]
    stages = ", ".join(f"{k} {v:.2f}" for k, v in full["stage_seconds"].items())
    lines = [
        f"duckdb reference          {full['seconds']:8.2f} s  ({stages}); {full['events']:,} unique ECE events, "
        f"{full['current_tags']:,} current tags, {full['current_owners']:,} current owners",
        f"spark / duckdb            {d['ratio_spark_over_duckdb']:>8}x  ({d['spark_comparable_s']:.2f} s vs "
        f"{d['duckdb_comparable_s']:.2f} s: {d['comparable']}); whole pipeline {d['ratio_whole_pipeline_over_duckdb']}x",
    ]
    for label, ref in (("full", full), ("after increment", d["after_increment"])):
        if ref is None:
            continue
        check = ref["cross_check"]
        if "skipped" in check:
            lines.append(f"cross-check ({label}): skipped, {check['skipped']}")
            continue
        for name, c in check.items():
            verdict = "equal" if c["equal"] else _difference(c)
            lines.append(f"cross-check ({label}) {name}: {c['reference_rows']:,} rows, {verdict}")
    return lines


def _measured(target: Target) -> str:
    if target.value is None:
        return ""
    return f"{target.value:.1%}" if target.goal.endswith("%") else f"{target.value:,.2f}"


def _difference(check: dict) -> str:
    return (
        f"DIFFER: {check['only_in_reference']} only in DuckDB {check['examples_only_in_reference']}, "
        f"{check['only_in_other']} only in gold {check['examples_only_in_other']}"
    )


def target_table(targets: list[Target]) -> str:
    rows = [[t.name, t.goal, _measured(t), t.verdict, t.note] for t in targets]
    return _table(["target", "goal", "measured", "", "note"], rows, "<<><<")


def report(result: dict, out=None) -> None:
    """The text report of one size (tables first, then the key figures)."""
    out = out or sys.stdout
    for name in ("full", "incremental"):
        print(f"\n== {name} run: {result[name]['events']:,} events ==", file=out)
        print(stage_table(result[name]), file=out)
        if result[name]["error"]:
            print(f"RUN FAILED: {result[name]['error']}", file=out)
    print("\n== summary ==", file=out)
    for line in summary_lines(result):
        print(line, file=out)


def scaling_table(results: list[dict]) -> str:
    """Per size: start-up, full wall, pipeline seconds, microseconds per event and growth vs the previous size."""
    rows, previous = [], None
    for r in sorted(results, key=lambda r: r["events"]):
        per_event = _per_event(r)
        growth = f"{per_event / _per_event(previous) - 1:+.1%}" if previous else ""
        full, duck = r["full"], r["duckdb"] or {}
        rows.append(
            [
                f"{r['events']:,}",
                f"{r['spark_startup_s']:.1f}",
                f"{full['wall_s']:.1f}",
                f"{full['pipeline_s']:.1f}",
                f"{per_event * 1e6:.1f}",
                growth,
                f"{r['incremental']['wall_s']:.1f}",
                f"{r['dq_share_of_pipeline']:.1%}",
                r["driver_memory_mb"],
                duck.get("ratio_spark_over_duckdb", ""),
            ]
        )
        previous = r
    header = "events|start s|full wall s|pipeline s|us/event|growth|incr s|DQ share|driver MB|spark/duckdb"
    return _table(header.split("|"), rows, ">" * 10)


# -- entry points -------------------------------------------------------------------------------


def _single(args: argparse.Namespace, spark=None) -> dict:
    workdir, temporary = _workdir(args.workdir, args.events)
    try:
        result = run_size(
            args.events,
            workdir,
            args.incremental_fraction,
            args.seed,
            spark=spark,
            dq_split=args.dq_split,
            reference=args.duckdb,
        )
    finally:
        if temporary:
            shutil.rmtree(workdir, ignore_errors=True)
    report(result)
    targets = evaluate_targets([result])
    print("\n== targets ==\n" + target_table(targets))
    return result | {"targets": [asdict(t) | {"verdict": t.verdict} for t in targets]}


def _workdir(given: str | None, events: int) -> tuple[Path, bool]:
    if given:
        path = Path(given).expanduser().resolve() / f"events-{events}"
        path.mkdir(parents=True, exist_ok=True)
        return path, False
    return Path(tempfile.mkdtemp(prefix=f"lakehouse-bench-{events}-")), True


def _child_command(args: argparse.Namespace, events: int) -> list[str]:
    command = [sys.executable, "-m", "benchmarks.run", "--events", str(events), "--seed", str(args.seed)]
    command += ["--incremental-fraction", str(args.incremental_fraction)]
    if args.workdir:
        command += ["--workdir", args.workdir]
    if not args.dq_split:
        command.append("--no-dq-split")
    if not args.duckdb:
        command.append("--no-duckdb")
    return command


def _run_child(command: list[str]) -> dict:
    """Run one size in its own process, echoing its report; its last JSON line is the result."""
    last = None
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, bufsize=1) as child:
        assert child.stdout is not None
        for line in child.stdout:
            sys.stdout.write(line)
            if line.startswith("{"):
                last = line
    if last is None:
        raise RuntimeError(f"benchmark size failed (exit {child.returncode}): {' '.join(command)}")
    return json.loads(last)


def _sizes(args: argparse.Namespace) -> dict:
    results = []
    for events in sorted(args.sizes):
        print(f"\n######## size {events:,} ########", flush=True)
        results.append(_run_child(_child_command(args, events)))
    print("\n== scaling (us/event: full pipeline without Spark start-up; growth vs previous size) ==")
    print(scaling_table(results))
    targets = evaluate_targets(results)
    print("\n== targets ==\n" + target_table(targets))
    return {
        "sizes": results,
        "growth_per_event": {
            f"{a['events']}->{b['events']}": round(_per_event(b) / _per_event(a) - 1, 4)
            for a, b in zip(results, results[1:], strict=False)
        },
        "targets": [asdict(t) | {"verdict": t.verdict} for t in targets],
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=DEFAULT_EVENTS, help="events of the full run")
    parser.add_argument(
        "--incremental-fraction", type=float, default=0.01, help="new events, as share of --events"
    )
    parser.add_argument("--seed", type=int, default=0, help="generator seed (the increment uses seed + 1)")
    parser.add_argument(
        "--workdir", help="keep landing, warehouse and outputs under DIR/events-<N> (default: temp)"
    )
    parser.add_argument(
        "--sizes", type=lambda s: [int(x) for x in s.split(",") if x], help="e.g. 250000,1000000"
    )
    parser.add_argument("--no-dq-split", dest="dq_split", action="store_false", help="no DQ timing wrappers")
    parser.add_argument("--no-duckdb", dest="duckdb", action="store_false", help="skip the DuckDB reference")
    return parser.parse_args(argv)


def failures(figures: dict) -> list[str]:
    """The runs that failed, as `<events> <phase>: <reason>`."""
    return [
        f"{r['events']} {phase}: {r[phase]['error']}"
        for r in figures.get("sizes", [figures])
        for phase in ("full", "incremental")
        if r[phase]["error"]
    ]


def main(argv: list[str] | None = None, spark=None) -> int:
    """The CLI; `spark` reuses a running session for a single size (tests), else each run starts its own.

    Exit 1 when a pipeline run failed (the figures measured until then are still printed).
    """
    args = parse_args(argv)
    figures = _sizes(args) if args.sizes else _single(args, spark)
    print(json.dumps(figures, default=str), flush=True)
    return 1 if failures(figures) else 0


if __name__ == "__main__":
    raise SystemExit(main())
