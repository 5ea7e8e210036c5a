"""Timers and memory samples around the pipeline's own functions, for the duration of a benchmark run.

Why: the benchmark must say where the seconds and megabytes go per task
without editing `pipelines/`. `Instrumentation` watches each task through the
run's task observer (`run_pipeline(..., observer=...)`) and wraps the executors'
scan, quality and write steps; `MemorySampler` samples the driver
(JVM heap through py4j, JVM and Python resident sizes from /proc) in a
background thread and keeps the peaks per task.

    sampler = MemorySampler(spark)
    with Instrumentation(spark, sampler).active() as timings:
        run_pipeline(config, spark=spark, observer=timings)
    timings.tasks  # [TaskTiming(...), ...]
"""

from __future__ import annotations

import contextlib
import os
import resource
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.core.context import TaskObserver

MB = 1024 * 1024


def covered_seconds(spans: list[tuple[float, float]]) -> float:
    """Seconds covered by at least one (start, end) span: overlapping spans count once."""
    covered, reached = 0.0, float("-inf")
    for start, end in sorted(spans):
        covered += max(0.0, end - max(start, reached))
        reached = max(reached, end)
    return covered


@dataclass
class TaskTiming:
    """One task of one run: the runner's counts plus where its seconds and memory went."""

    phase: str
    key: str
    table: str
    layer: str
    status: str = ""
    seconds: float = 0.0
    started: float = 0.0  # time.monotonic() at the start: parallel tasks overlap
    source_rows: int = 0
    rows_in: int = 0
    rows_out: int = 0
    quarantined: int = 0
    duplicates: int = 0
    table_rows: int = 0  # rows in the task's table once the run is over (from Delta file statistics)
    jobs: int = 0
    stages: int = 0
    spark_s: float = 0.0  # seconds while one of the task's Spark jobs ran; the rest is the driver's own work
    job_ids: list[int] = field(default_factory=list, repr=False)  # to time the jobs once the run is over
    driver_mb: float = 0.0  # peak JVM RSS + Python RSS while the task ran
    heap_mb: float = 0.0  # peak JVM heap used while the task ran
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


def proc_status_mb(pid: int | str, field_name: str) -> float | None:
    """A `VmRSS`/`VmHWM` line of /proc/<pid>/status in MB (None off Linux or for a remote JVM)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


JIT_THREADS = ("C1 CompilerThre", "C2 CompilerThre")  # HotSpot's compiler threads, as /proc cuts their names


@dataclass(frozen=True)
class CpuSeconds:
    """CPU seconds the JVM has used so far: all of it, and its JIT compiler threads' share."""

    jvm: float
    jit: float

    def __sub__(self, earlier: CpuSeconds) -> CpuSeconds:
        return CpuSeconds(self.jvm - earlier.jvm, self.jit - earlier.jit)


def _stat_cpu_seconds(path: str) -> float:
    """utime + stime of a /proc `stat` file (the name before them may hold spaces and parentheses)."""
    with open(path, encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def jvm_cpu_seconds(pid: int | None) -> CpuSeconds | None:
    """The JVM's CPU seconds from /proc (None off Linux or for a remote JVM).

    Why: on a small machine HotSpot's JIT compiler threads take a core's worth of CPU through
    a whole run (Spark's own code plus the classes it generates per plan), CPU the tasks do
    not get; the benchmark prints that share. A compiler thread that has exited takes its
    seconds with it, so the JIT figure is a lower bound.
    """
    if pid is None:
        return None
    try:
        total = _stat_cpu_seconds(f"/proc/{pid}/stat")
        jit = 0.0
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):  # a thread may end between the listing and the read
                if (task / "comm").read_text(encoding="utf-8").strip().startswith(JIT_THREADS):
                    jit += _stat_cpu_seconds(str(task / "stat"))
    except OSError:
        return None
    return CpuSeconds(total, jit)


class MemorySampler:
    """Samples the driver's memory every `interval` seconds, keeping peaks per label.

    Each sample counts for the phase (`full`, `incremental`, `duckdb`) and for every
    task running then (`<phase>:<task>`; parallel tasks share their samples: the
    driver's memory is one figure). Sampling can miss spikes shorter than the
    interval; the heap pools' own peak counters (reset at start) and the JVM's
    `VmHWM` cannot.
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
        self.label = "start"
        self.tasks: set[str] = set()  # labels of the tasks running now
        self.peaks: dict[str, dict[str, float]] = {}
        self._lock = threading.Lock()
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
        jvm_rss = (proc_status_mb(self.jvm_pid, "VmRSS") or 0.0) if self.jvm_pid else 0.0
        python_rss = proc_status_mb("self", "VmRSS") or 0.0
        figures = {
            "jvm_heap_used_mb": self.memory_bean.getHeapMemoryUsage().getUsed() / MB,
            "jvm_heap_after_gc_mb": self._after_gc_mb(),
            "python_rss_mb": python_rss,
            "jvm_rss_mb": jvm_rss,
            "driver_rss_mb": jvm_rss + python_rss,
        }
        with self._lock:
            for label in (self.label, *self.tasks):
                peaks = self.peaks.setdefault(label, {})
                for name, value in figures.items():
                    peaks[name] = max(peaks.get(name, 0.0), value)

    def switch(self, label: str) -> dict[str, float]:
        """Take one sample under the old phase label, start `label`; returns the old label's peaks."""
        self.sample()
        with self._lock:
            old, self.label = self.label, label
            return dict(self.peaks.get(old, {}))

    def task_started(self, label: str) -> None:
        with self._lock:
            self.tasks.add(label)
        self.sample()

    def task_ended(self, label: str) -> dict[str, float]:
        """One last sample for the task `label`; returns its peaks."""
        self.sample()
        with self._lock:
            self.tasks.discard(label)
            return dict(self.peaks.get(label, {}))

    def peaks_of(self, prefix: str) -> dict[str, float]:
        """Peaks over every label equal to `prefix` or starting with `prefix:`."""
        merged: dict[str, float] = {}
        with self._lock:
            for label, peaks in self.peaks.items():
                if label == prefix or label.startswith(prefix + ":"):
                    for name, value in peaks.items():
                        merged[name] = max(merged.get(name, 0.0), value)
        return merged

    def _after_gc_mb(self) -> float:
        """Heap occupied right after each pool's latest collection (G1's old generation keeps
        dead objects until a mixed collection, so this is an upper bound of the live data)."""
        usages = [pool.getCollectionUsage() for pool in self.heap_pools]
        return sum(u.getUsed() for u in usages if u is not None) / MB

    def stop(self, phases: tuple[str, ...]) -> dict:
        """Stop sampling; the peaks per phase and the process-lifetime peaks, in MB."""
        if self._thread.is_alive():
            self._stop.set()
            self._thread.join(timeout=5)
            self.sample()
        return {
            "heap_max_mb": round(self.heap_max_mb),
            "jvm_heap_pool_peaks_mb": round(sum(p.getPeakUsage().getUsed() for p in self.heap_pools) / MB),
            "jvm_rss_hwm_mb": round(proc_status_mb(self.jvm_pid, "VmHWM") or 0) if self.jvm_pid else None,
            "python_maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "per_phase": {p: {k: round(v) for k, v in self.peaks_of(p).items()} for p in phases},
        }


def _job_span(status, job_id: int, spans: dict[int, tuple[float, float]]) -> bool:
    """Put job `job_id`'s (submitted, completed) seconds into `spans`; False while it has no end yet
    (or the store no longer holds it: `spark.ui.retainedJobs` keeps the latest 1,000)."""
    try:
        job = status.job(job_id)
    except Exception:  # py4j: NoSuchElementException for a job the store dropped or has not seen
        return False
    submitted, completed = job.submissionTime(), job.completionTime()
    if not (submitted.isDefined() and completed.isDefined()):
        return False
    spans[job_id] = (submitted.get().getTime() / 1000, completed.get().getTime() / 1000)
    return True


class Instrumentation(TaskObserver):
    """Wraps the runner's `_run_task` and the silver executor's DQ steps with timers while active.

    The DQ split works because the silver executor persists the flagged rows and
    the accepted rows before measuring them: the wrappers materialise each cached
    frame first (typing, dedup) and time the expectation aggregation separately.
    That adds one job over cached data per step, a few tens of milliseconds.
    """

    def __init__(self, spark, sampler: MemorySampler, dq_split: bool = True) -> None:
        self.spark = spark
        self.sampler = sampler
        self.dq_split = dq_split
        self.phase = ""
        self.tasks: list[TaskTiming] = []
        self.missing: list[str] = []  # wrapped names the pipeline no longer has (figures then stay 0)
        self._thread = threading.local()  # the task this thread runs; parallel tasks run on their own threads

    @property
    def current(self) -> TaskTiming | None:
        return getattr(self._thread, "task", None)

    @current.setter
    def current(self, timing: TaskTiming | None) -> None:
        self._thread.task = timing

    @property
    def _bookkeeping(self) -> int:
        """> 0 while a bookkeeping call runs on this thread: its writes are not the task's."""
        return getattr(self._thread, "bookkeeping", 0)

    @_bookkeeping.setter
    def _bookkeeping(self, depth: int) -> None:
        self._thread.bookkeeping = depth

    @contextlib.contextmanager
    def active(self) -> Iterator[Instrumentation]:
        from pipelines.executors import bronze, silver
        from pipelines.store import TableStore

        patches = [
            (bronze, "scan", self._wrap_timer("scan_s")),
            (silver, "measure", self._wrap_materialised("typing_s", "dq_rules_s")),
            (silver, "measure_batch", self._wrap_materialised("typing_s", "dq_rules_s")),
            (silver, "measure_uniqueness", self._wrap_materialised("dedup_s", "dq_unique_s")),
            # a small batch's suite, counted on its collected rows (their Spark job is the typing's)
            (silver, "rule_outcomes", self._wrap_timer("dq_rules_s")),
            (silver, "uniqueness_outcomes", self._wrap_timer("dq_unique_s")),
            (silver, "record_dq", self._wrap_timer("dq_record_s", bookkeeping=True)),
        ]
        patches += [
            (TableStore, n, self._wrap_timer("write_s"))
            for n in ("append", "overwrite", "merge", "replace_groups")
        ]
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

    def task_started(self, key: str, spec) -> None:
        timing = TaskTiming(self.phase, key, spec.table, spec.table.split(".")[0])
        self.spark.sparkContext.setJobGroup(self._group(key), key)  # per thread: parallel tasks keep theirs
        self.sampler.task_started(f"{self.phase}:{key}")
        self.current = timing
        timing.started = time.monotonic()

    def task_executed(self, key: str, spec, result) -> None:
        if self.current is not None:
            self._bookkeeping += 1  # the task's ops.runs row: its writes are not the task's
            self._thread.recording_since = time.monotonic()

    def task_recorded(self, key: str, spec, result) -> None:
        timing = self.current
        if timing is None:
            return
        self._bookkeeping -= 1
        timing.bookkeeping_s += time.monotonic() - self._thread.recording_since
        timing.seconds = time.monotonic() - timing.started
        self.current = None
        peaks = self.sampler.task_ended(f"{self.phase}:{key}")
        timing.driver_mb = peaks.get("driver_rss_mb", 0.0)
        timing.heap_mb = peaks.get("jvm_heap_used_mb", 0.0)
        self._count_jobs(timing, self._group(key))
        timing.status = result.status
        timing.source_rows, timing.rows_in, timing.rows_out = (
            result.source_rows,
            result.rows_in,
            result.rows_out,
        )
        timing.quarantined, timing.duplicates = result.rows_quarantined, result.rows_duplicate
        self.tasks.append(timing)

    def _group(self, key: str) -> str:
        return f"bench:{self.phase}:{key}"

    def _count_jobs(self, timing: TaskTiming, group: str) -> None:
        tracker = self.spark.sparkContext.statusTracker()
        ids = tracker.getJobIdsForGroup(group)
        timing.jobs = len(ids)
        timing.job_ids = list(ids)
        infos = [tracker.getJobInfo(i) for i in ids]
        timing.stages = sum(len(info.stageIds) for info in infos if info is not None)

    def time_spark_jobs(self, tasks: list[TaskTiming], wait_s: float = 5.0) -> list[int]:
        """Set each task's `spark_s` from its jobs' submission and completion times, kept by
        Spark's status store (it runs without the UI). Called once the run is over, outside
        any task's clock: the store is filled by Spark's listener bus, which may lag a job's
        end by a few milliseconds, so jobs without a completion time are asked again for up
        to `wait_s`. Returns the ids of jobs that had no times even then (their task's
        `spark_s` leaves them out)."""
        status = self.spark.sparkContext._jsc.sc().statusStore()  # type: ignore[attr-defined]
        spans: dict[int, tuple[float, float]] = {}
        waiting = sorted({i for task in tasks for i in task.job_ids})
        deadline = time.monotonic() + wait_s
        while waiting:
            waiting = [i for i in waiting if not _job_span(status, i, spans)]
            if not waiting or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        for task in tasks:
            task.spark_s = covered_seconds([spans[i] for i in task.job_ids if i in spans])
        return waiting

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
