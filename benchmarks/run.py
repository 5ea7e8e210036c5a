"""`python -m benchmarks.run`: wall time, throughput and memory of the pipeline, per stage, with targets.

Why: performance claims need numbers a reader can reproduce with one command.
One run generates N events, runs the task graph from an empty warehouse
(Spark start-up included), adds ~1% new events in new files and runs again
incrementally; after each run the DuckDB reference does the core DataHub work
on the same files, timed in the same process, and is cross-checked against
the gold timelines. Last, a second increment of the same size is run in a new
process, as a scheduled `lakehouse run` would (`benchmarks.new_process`).
All of this runs once per table engine (`--engines`, delta-rs and delta-spark by
default), each engine in its own process on the same generated data, and a
side-by-side table closes the report.
`--sizes` runs each size in its own process (clean memory peaks, cold start
each time) and reports how the time per event grows.

Nothing in `pipelines/` is edited: see `benchmarks.instrument`. The output is
an aligned text report (`benchmarks.report`) and, last, one JSON line with
every figure.

    python -m benchmarks.run --events 250000
    python -m benchmarks.run --events 250000 --engines delta-spark
    python -m benchmarks.run --sizes 250000,1000000,4000000 --workdir /tmp/bench
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from benchmarks.instrument import (
    CpuSeconds,
    Instrumentation,
    MemorySampler,
    TaskTiming,
    covered_seconds,
    jvm_cpu_seconds,
)
from benchmarks.report import engine_table, report, scaling_table, target_table
from benchmarks.targets import evaluate_targets, per_event
from benchmarks.workload import (
    ENGINES,
    add_increment,
    comma_list,
    generate_landing,
    landing_digest,
    landing_stats,
    with_engine,
)

DEFAULT_EVENTS = 250_000
COMPARABLE_TABLES = (  # the part of the pipeline the DuckDB reference also does
    "bronze.datahub_entity_change_events",
    "silver.datahub_entity_changes",
    "gold.tag_timeline",
    "gold.ownership_timeline",
)
GOLD_TIMELINES = ("gold.tag_timeline", "gold.ownership_timeline")
PHASES = ("full", "incremental", "duckdb")


# -- one pipeline run ---------------------------------------------------------------------------


@dataclass
class Phase:
    """One pipeline run (full or incremental)."""

    name: str
    events: int
    wall_s: float = 0.0  # what a user waits for (the full run includes Spark start-up)
    pipeline_s: float = 0.0  # run_pipeline's own clock (graph, lock, every task)
    tasks: list[TaskTiming] = field(default_factory=list)
    error: str | None = None  # the runner's one-line reason when a task failed: figures are partial
    cpu: CpuSeconds | None = None  # the JVM's CPU seconds during the run (None off Linux)
    untimed_jobs: int = 0  # jobs Spark's status store had no times for (their seconds are not in spark_s)

    def total(self, attribute: str, layer: str | None = None) -> float:
        return sum(getattr(t, attribute) for t in self.tasks if layer is None or t.layer == layer)

    def running_s(self, layer: str | None = None) -> float:
        """Seconds during which at least one task (of `layer`) ran: the wall time of parallel tasks."""
        return covered_seconds(
            [(t.started, t.started + t.seconds) for t in self.tasks if layer is None or t.layer == layer]
        )

    def seconds_of(self, tables: tuple[str, ...]) -> float:
        return sum(t.seconds for t in self.tasks if t.table in tables)


def run_phase(instrumentation: Instrumentation, config, graph, store, name: str, events: int) -> Phase:
    """One `run_pipeline` call, timed; then each task's table size from the Delta log."""
    from pipelines.orchestration.runner import RunFailed, run_pipeline

    instrumentation.phase = name
    instrumentation.sampler.switch(name)
    phase = Phase(name, events)
    cpu_before = jvm_cpu_seconds(instrumentation.sampler.jvm_pid)
    started = time.monotonic()
    try:
        phase.pipeline_s = run_pipeline(
            config, graph=graph, spark=instrumentation.spark, observer=instrumentation
        ).seconds
    except RunFailed as exc:  # keep what was measured; the report and the exit code say it failed
        phase.error = str(exc)
        phase.pipeline_s = time.monotonic() - started
    phase.wall_s = time.monotonic() - started
    cpu_after = jvm_cpu_seconds(instrumentation.sampler.jvm_pid)
    if cpu_before is not None and cpu_after is not None:
        phase.cpu = cpu_after - cpu_before
    order = {task.key: i for i, task in enumerate(graph.ordered())}  # parallel tasks end in any order
    phase.tasks = sorted(instrumentation.for_phase(name), key=lambda t: order.get(t.key, len(order)))
    phase.untimed_jobs = len(instrumentation.time_spark_jobs(phase.tasks))
    for task in phase.tasks:
        task.table_rows = store.count_added_since(task.table, None) if store.exists(task.table) else 0
    return phase


def phase_figures(phase: Phase, memory: dict[str, float]) -> dict:
    """The run's totals and per-task figures, rounded for the report and the JSON line."""
    return {
        "events": phase.events,
        "error": phase.error,
        "wall_s": round(phase.wall_s, 2),
        "pipeline_s": round(phase.pipeline_s, 2),
        "events_per_s": round(phase.events / phase.wall_s) if phase.wall_s else None,
        "tasks_s": round(phase.running_s(), 2),
        "task_seconds_sum": round(phase.total("seconds"), 2),
        "rows_out": int(phase.total("rows_out")),
        "layer_s": {layer: round(phase.running_s(layer), 2) for layer in ("bronze", "silver", "gold")},
        "dq_s": round(phase.total("dq_s", "silver"), 2),
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
        "spark_jobs_s": round(phase.total("spark_s"), 2),
        "untimed_jobs": phase.untimed_jobs,
        "jvm_cpu_s": round(phase.cpu.jvm, 2) if phase.cpu else None,
        "jit_cpu_s": round(phase.cpu.jit, 2) if phase.cpu else None,
        "driver_mb": round(memory.get("driver_rss_mb", 0)),
        "comparable_s": round(phase.seconds_of(COMPARABLE_TABLES), 2),
        "tasks": [
            {
                k: (round(v, 3) if isinstance(v, float) else v)
                for k, v in asdict(t).items()
                if k not in ("phase", "job_ids")
            }
            | {"dq_s": round(t.dq_s, 3)}
            for t in phase.tasks
        ],
    }


def run_new_process(bench: Bench, events: int, seed: int, conf: str | None, tasks: list[str] | None) -> dict:
    """A second increment, run by `benchmarks.new_process` in a fresh interpreter and JVM, as a
    scheduled `lakehouse run` does: its wall time includes Python, Spark's start-up and a cold JIT."""
    increment, folder = add_increment(bench.landing, events, seed, bench.increments_after)
    command = [sys.executable, "-m", "benchmarks.new_process"]
    command += ["--warehouse", str(bench.config.warehouse), "--landing", str(bench.landing)]
    command += ["--engine", bench.store.engine_name]
    if conf:
        command += ["--conf", str(Path(conf).resolve())]
    if tasks:
        command += ["--tasks", ",".join(tasks)]
    from pipelines.core.config import PROJECT_ROOT

    bench.sampler.switch("new_process")  # the benchmark's own JVM idles meanwhile; not a run's peak
    started, wall, result, output = time.monotonic(), None, None, []
    with subprocess.Popen(
        command, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as child:
        assert child.stdout is not None
        for line in child.stdout:
            output.append(line)
            if line.startswith("{"):  # the run is done; a JVM recording its class archive exits later
                wall, result = time.monotonic() - started, line
    if result is None:
        tail = " / ".join(line.strip() for line in output[-3:])
        figures = {"error": f"exit {child.returncode}: {tail}", "tasks": []}
    else:
        figures = json.loads(result)
    wall = time.monotonic() - started if wall is None else wall
    return figures | {"events": sum(increment.values()), "folder": folder, "wall_s": round(wall, 2)}


# -- the DuckDB reference -----------------------------------------------------------------------


def _timelines_ran(phase: Phase | None) -> bool:
    if phase is None or phase.error is None:
        return True
    done = {t.table for t in phase.tasks if t.status in ("SUCCESS", "SKIPPED")}
    return all(t in done for t in GOLD_TIMELINES)


def cross_check(ref, store) -> dict:
    """The reference's current rows and intervals vs the Spark gold tables (DataHub rows only)."""
    from pyspark.sql import functions as F

    missing = [t for t in GOLD_TIMELINES if not store.exists(t)]
    if missing:
        return {"skipped": f"gold tables absent: {', '.join(missing)} (not in the task graph?)"}
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


def run_reference_checked(landing: Path, out_dir: Path, store, phase: Phase) -> dict:
    """Time the DuckDB reference on `landing` and cross-check it against gold after `phase`.

    The cross-check is skipped when `phase` failed before both timeline tasks ran:
    gold then still shows the previous run.
    """
    from benchmarks.duckdb_reference import run_reference

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


def duckdb_figures(full: Phase, references: dict[str, dict | None]) -> dict:
    """Spark's comparable tasks vs the reference; without gold timelines, the ingest/typing part only."""
    ref = references["full"]
    with_gold = all(t in {task.table for task in full.tasks} for t in GOLD_TIMELINES)
    stages = ref["stage_seconds"]
    duck_s = ref["seconds"] if with_gold else stages["ingest"] + stages["dedup_flatten"]
    spark_s = full.seconds_of(COMPARABLE_TABLES)
    comparable = "ECE bronze + silver entity changes + gold tag/ownership timelines"
    if not with_gold:
        comparable = "ECE bronze + silver entity changes vs DuckDB ingest + dedup (no gold timelines ran)"
    return references | {
        "comparable": comparable,
        "spark_comparable_s": round(spark_s, 2),
        "duckdb_comparable_s": round(duck_s, 2),
        "ratio_spark_over_duckdb": round(spark_s / duck_s, 1) if duck_s else None,
        "ratio_whole_pipeline_over_duckdb": round(full.wall_s / ref["seconds"], 1)
        if ref["seconds"]
        else None,
    }


# -- one size -----------------------------------------------------------------------------------


@dataclass
class Bench:
    """What one size works with: folders, configuration, graph, session, store and the meters."""

    workdir: Path
    config: object
    graph: object
    spark: object
    store: object
    sampler: MemorySampler
    instrumentation: Instrumentation
    increments_after: int | None = None  # base events: increments follow the base in time

    @property
    def landing(self) -> Path:
        return self.workdir / "landing"


def _full_and_incremental(
    bench: Bench, events: int, fraction: float, seed: int, reference: bool, new_process: dict | None
) -> dict:
    """The full run, the reference on its data, the increment, the incremental run, the reference
    again; with `new_process` ({"conf", "tasks"}) a second increment run in a new process."""
    references: dict[str, dict | None] = {"full": None, "after_increment": None}
    cold = None
    full = run_phase(bench.instrumentation, bench.config, bench.graph, bench.store, "full", events)
    if reference:
        bench.sampler.switch("duckdb")
        references["full"] = run_reference_checked(
            bench.landing, bench.workdir / "duckdb-full", bench.store, full
        )
    incremental, folder = Phase("incremental", 0, error="not run: the full run failed"), None
    if full.error is None:
        size = max(1, round(events * fraction))
        increment, folder = add_increment(bench.landing, size, seed + 1, bench.increments_after)
        incremental = run_phase(
            bench.instrumentation,
            bench.config,
            bench.graph,
            bench.store,
            "incremental",
            sum(increment.values()),
        )
        if reference:
            bench.sampler.switch("duckdb")
            references["after_increment"] = run_reference_checked(
                bench.landing, bench.workdir / "duckdb-incr", bench.store, incremental
            )
        if new_process is not None and incremental.error is None:
            cold = run_new_process(bench, incremental.events, seed + 2, **new_process)
    return {
        "full": full,
        "incremental": incremental,
        "folder": folder,
        "references": references,
        "new_process": cold,
    }


def run_size(
    events: int,
    workdir: Path,
    fraction: float = 0.01,
    seed: int = 0,
    spark=None,
    dq_split: bool = True,
    reference: bool = True,
    tasks: list[str] | None = None,
    conf: str | None = None,
    new_process: bool = True,
    increment_times: str = "after",
    engine: str | None = None,
) -> dict:
    """Everything for one size; returns the figures (see `benchmarks.report` for their meaning).

    Pass `spark` to reuse a session (tests): start-up then counts as zero and the
    session is left running. `tasks` restricts the graph to those tasks and their upstream;
    `conf` is a configuration file merged over the defaults, as `lakehouse --conf` takes.
    `new_process`: after the incremental run, one more increment of the same size run in a
    new process (`benchmarks.new_process`). `increment_times`: "after" (the increments' events
    follow the base's, as a live feed's next batch) or "inside" (spread over the base's years:
    every group they touch is rebuilt from its history). `engine`: `storage.engine` for every run
    (None: the configuration's).
    """
    from pipelines.core.config import load_config
    from pipelines.core.graph import load_graph
    from pipelines.runtime.spark import get_spark
    from pipelines.store import open_configured_store

    landing, warehouse = workdir / "landing", workdir / "warehouse"
    if warehouse.exists():
        shutil.rmtree(warehouse)
    started = time.monotonic()
    generated = generate_landing(landing, events, seed)
    figures: dict = {"events": events, "incremental_fraction": fraction, "seed": seed, "tasks": tasks}
    figures["increment_times"] = increment_times
    figures["generate_s"] = round(time.monotonic() - started, 2)
    figures |= {
        "generated": generated,
        "landing": landing_stats(landing) | {"sha256": landing_digest(landing)},
    }
    config = load_config(conf).with_overrides(landing=str(landing), warehouse=str(warehouse))
    config = with_engine(config, engine)
    graph = load_graph().up_to(tasks) if tasks else load_graph()
    load_before = os.getloadavg()[0]

    wall_started = time.monotonic()
    own_session = spark is None
    spark = spark or get_spark(config)
    figures["spark_startup_s"] = round(time.monotonic() - wall_started, 2) if own_session else 0.0
    sampler = MemorySampler(spark)
    instrumentation = Instrumentation(spark, sampler, dq_split)
    bench = Bench(
        workdir,
        config,
        graph,
        spark,
        open_configured_store(spark, config),
        sampler,
        instrumentation,
        increments_after=sum(generated.values()) if increment_times == "after" else None,
    )
    sampler.start()
    try:
        with instrumentation.active():
            second = {"conf": conf, "tasks": tasks} if new_process else None
            runs = _full_and_incremental(bench, sum(generated.values()), fraction, seed, reference, second)
    finally:
        memory = sampler.stop(PHASES)
        if own_session:
            spark.stop()
    full, incremental = runs["full"], runs["incremental"]
    full.wall_s += figures["spark_startup_s"]
    full_figures = phase_figures(full, memory["per_phase"]["full"])
    figures |= {
        "engine": bench.store.engine_name,
        "full": full_figures,
        "incremental": phase_figures(incremental, memory["per_phase"]["incremental"])
        | {"folder": runs["folder"]},
        "incremental_share_of_full": round(incremental.wall_s / full.wall_s, 4) if full.wall_s else None,
        "new_process_incremental": runs["new_process"],
        "dq_share_of_pipeline": round(full_figures["dq_s"] / full.pipeline_s, 4) if full.pipeline_s else None,
        "parallel_tasks": config.section("run")["parallel_tasks"],
        "dq_split": dq_split and not instrumentation.missing,
        "instrumentation_missing": instrumentation.missing,
        "memory": memory,
        "driver_memory_mb": max(
            full_figures["driver_mb"], round(memory["per_phase"]["incremental"].get("driver_rss_mb", 0))
        ),
        "duckdb": duckdb_figures(full, runs["references"]) if reference else None,
        "machine": machine_info(load_before),
    }
    return figures


def _cpu_model() -> str | None:
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    return None


def machine_info(load_before: float) -> dict:
    """What the numbers were measured on; a high load means the machine was shared."""
    import importlib.metadata

    import deltalake
    import duckdb
    import pyspark

    total_mb = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            total_mb = round(int(meminfo.readline().split()[1]) / 1024)
    return {
        "cpus": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "memory_mb": total_mb,
        "load_1min_before": round(load_before, 2),
        "load_1min_after": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "deltalake": deltalake.__version__,
        "delta_spark": importlib.metadata.version("delta-spark"),
        "duckdb": duckdb.__version__,
        "at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


# -- entry points -------------------------------------------------------------------------------


def run_engine(args: argparse.Namespace, events: int, engine: str, spark=None) -> dict:
    """One size with one table engine, in this process: the runs, the report and the targets."""
    workdir, temporary = _workdir(args.workdir, events, engine)
    try:
        result = run_size(
            events,
            workdir,
            args.incremental_fraction,
            args.seed,
            spark=spark,
            dq_split=args.dq_split,
            reference=args.duckdb,
            tasks=args.tasks,
            conf=args.conf,
            new_process=args.new_process,
            increment_times=args.increment_times,
            engine=engine,
        )
    finally:
        if temporary:
            shutil.rmtree(workdir, ignore_errors=True)
    report(result)
    targets = evaluate_targets([result])
    print("\n== targets ==\n" + target_table(targets))
    return result | {"targets": [asdict(t) | {"verdict": t.verdict} for t in targets]}


def _each_engine(args: argparse.Namespace, events: int, spark=None) -> list[dict]:
    """`run_engine` for each of `--engines` on the same generated data (same events and seed). Alone,
    an engine runs in this process; side by side each runs in a process of its own, as `lakehouse run`
    would start it (a JVM with Delta's jars for delta-spark only, memory peaks and JIT warm-up its
    own), unless `spark` is given (tests): then all run on that session, which must carry Delta's jars."""
    if len(args.engines) == 1 or spark is not None:
        return [run_engine(args, events, engine, spark) for engine in args.engines]
    results = []
    for engine in args.engines:
        print(f"\n######## {engine}, {events:,} events ########", flush=True)
        results.append(_run_child(_child_command(args, events, engine)))
    return results


def _single(args: argparse.Namespace, spark=None) -> dict:
    results = _each_engine(args, args.events, spark)
    if len(results) == 1:
        return results[0]
    print("\n== engines side by side ==\n" + engine_table(results))
    return {"engines": results}


def _workdir(given: str | None, events: int, engine: str) -> tuple[Path, bool]:
    if given:
        path = Path(given).expanduser().resolve() / f"events-{events}" / engine
        path.mkdir(parents=True, exist_ok=True)
        return path, False
    return Path(tempfile.mkdtemp(prefix=f"lakehouse-bench-{events}-{engine}-")), True


def _child_command(args: argparse.Namespace, events: int, engine: str) -> list[str]:
    command = [sys.executable, "-m", "benchmarks.run", "--events", str(events), "--seed", str(args.seed)]
    command += ["--engines", engine, "--incremental-fraction", str(args.incremental_fraction)]
    command += ["--increment-times", args.increment_times]
    if args.workdir:
        command += ["--workdir", args.workdir]
    if args.tasks:
        command += ["--tasks", ",".join(args.tasks)]
    if args.conf:
        command += ["--conf", str(Path(args.conf).resolve())]
    if not args.dq_split:
        command.append("--no-dq-split")
    if not args.duckdb:
        command.append("--no-duckdb")
    if not args.new_process:
        command.append("--no-new-process")
    return command


def _run_child(command: list[str]) -> dict:
    """Run one size and engine in its own process, echoing its report; its last JSON line is the result."""
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
        for engine in args.engines:
            print(f"\n######## size {events:,}, {engine} ########", flush=True)
            results.append(_run_child(_child_command(args, events, engine)))
    growth, verdicts = {}, []
    for engine in args.engines:
        runs = [r for r in results if r["engine"] == engine]
        print(
            f"\n== scaling, {engine} (us/event: full pipeline without Spark start-up; growth vs previous size) =="
        )
        print(scaling_table(runs))
        targets = evaluate_targets(runs)
        print(f"\n== targets, {engine} ==\n" + target_table(targets))
        growth[engine] = {
            f"{a['events']}->{b['events']}": round(per_event(b) / per_event(a) - 1, 4)
            for a, b in zip(runs, runs[1:], strict=False)
        }
        verdicts += [asdict(t) | {"engine": engine, "verdict": t.verdict} for t in targets]
    if len(args.engines) > 1:
        print("\n== engines side by side ==\n" + engine_table(results))
    return {"sizes": results, "growth_per_event": growth, "targets": verdicts}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=DEFAULT_EVENTS, help="events of the full run")
    parser.add_argument(
        "--engines",
        type=_engine_list,
        default=list(ENGINES),
        help=f"table engines to run, each on the same data and in its own process (default {','.join(ENGINES)})",
    )
    parser.add_argument(
        "--incremental-fraction", type=float, default=0.01, help="new events, as share of --events"
    )
    parser.add_argument("--seed", type=int, default=0, help="generator seed (the increment uses seed + 1)")
    parser.add_argument(
        "--increment-times",
        choices=("after", "inside"),
        default="after",
        help="increments follow the base in time (a feed's next batch; default) or fall inside its years",
    )
    parser.add_argument(
        "--workdir", help="keep landing, warehouse and outputs under DIR/events-<N> (default: temp)"
    )
    parser.add_argument(
        "--sizes",
        type=lambda s: [int(x) for x in comma_list(s)],
        help="e.g. 250000,1000000 (one process each)",
    )
    parser.add_argument(
        "--tasks", type=comma_list, help="only these task keys and their upstream, e.g. gold_tag_timeline"
    )
    parser.add_argument(
        "--conf", help="configuration file merged over conf/lakehouse.yaml (as lakehouse --conf)"
    )
    parser.add_argument("--no-dq-split", dest="dq_split", action="store_false", help="no DQ timing wrappers")
    parser.add_argument("--no-duckdb", dest="duckdb", action="store_false", help="skip the DuckDB reference")
    parser.add_argument(
        "--no-new-process",
        dest="new_process",
        action="store_false",
        help="skip the second increment run in a new process (as a scheduled lakehouse run)",
    )
    return parser.parse_args(argv)


def _engine_list(text: str) -> list[str]:
    engines = list(dict.fromkeys(comma_list(text)))
    unknown = [e for e in engines if e not in ENGINES]
    if unknown or not engines:
        raise argparse.ArgumentTypeError(f"engines are a comma list of {', '.join(ENGINES)}, got '{text}'")
    return engines


def failures(figures: dict) -> list[str]:
    """The runs that failed, as `<events> [<engine>] <phase>: <reason>`."""
    return [
        " ".join(str(part) for part in (r["events"], r.get("engine"), phase) if part)
        + f": {r[phase]['error']}"
        for r in figures.get("sizes") or figures.get("engines") or [figures]
        for phase in ("full", "incremental", "new_process_incremental")
        if (r.get(phase) or {}).get("error")
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
