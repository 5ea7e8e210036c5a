"""`python -m benchmarks.scheduled` (`make bench`): what a scheduled job pays, per table engine.

Why: a Databricks job (or cron) runs the pipeline every few minutes, each run a new process
that starts Python and Spark again, and the warehouse only grows. What users pay all day is the
small increment and the idle run (nothing new), and how those grow with everything stored
before them. So, for each engine, `lakehouse run`s in new processes, timed from outside:

- on a warehouse of `--events` (100,000) and one of `--large-events` (1,000,000): the **full**
  build, then the **increment**: the same `--increment` (1,000) new events on each, in new files,
  their times right after the base's, as a live feed's next batch; then an **idle** run;
- bronze over a landing of `--small-files` (100,000) files of ten records (the first run lands
  them), then over the same landing with ten more: how long **finding the new files** takes
  (the bronze task logs it).

- the bundled samples from empty (`make demo`'s run).

Each run's Spark jobs are counted from Spark's event log, and each task's from the job tag the
runner gives its jobs (`lakehouse-task-<key>`). The report shows seconds, jobs and the busiest
tasks (seconds and jobs) per run, then the targets (`targets`): the increment and the idle run
at most 1.5 times as long on the larger warehouse as on the smaller, the increment on the larger
at most 10% of its full build, the ten new files found in under 2 s; on the smaller one, the
increment at most 15% of the full build and the idle run 5%, and delta-spark's increment at
most twice delta-rs'. Then the per-table floor's targets, in Spark jobs on any machine and in
seconds scaled to the reference machine's speed (a one-thread loop of 20 million steps, timed
at the start: `REFERENCE_LOOP_SECONDS` there): the increment on the smaller warehouse at most
`INCREMENT_JOBS` jobs and `INCREMENT_SECONDS`, the idle run no job and `IDLE_SECONDS`, the
samples from empty `SAMPLES_SECONDS` (delta-rs), the full build of the smaller warehouse
`FULL_SECONDS`. The last line is one JSON object with every figure.

    python -m benchmarks.scheduled                                   # make bench
    python -m benchmarks.scheduled --events 20000 --large-events 200000 --small-files 10000 \
        --engines delta-rs --workdir /tmp/bench
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from benchmarks.workload import (
    ENGINES,
    comma_list,
    generate_increment,
    generate_landing,
    place_increment,
    write_small_files,
)

SIZES = ("small", "large")
INCREMENT_SHARE = {"small": 0.15, "large": 0.10}  # of the engine's full build of that warehouse
IDLE_SHARE = 0.05
GROWTH = 1.5  # a run on the larger warehouse against the same run on the smaller
DISCOVERY_SECONDS = 2.0
NEW_FILES = 10
SMALL_FILES_TASK = "bronze_datahub_entity_change_events"
ENGINE_RATIO = 2.0  # delta-spark's increment against delta-rs'
TASK_LINE = re.compile(r"^(success|skipped|failed)\s+task=(\S+).*\bseconds=([\d.]+)")
DONE_LINE = re.compile(r"^done\s.*\bbronze_rows=(\d+)\s+silver_rows=(\d+)")
FOUND_LINE = re.compile(r"task=" + SMALL_FILES_TASK + r"\b.*\bfound in ([\d.]+) s")
JOB_START = '"Event":"SparkListenerJobStart"'
TASK_TAG = re.compile(
    r"lakehouse-task-([A-Za-z0-9_]+)"
)  # the runner's job tag (pipelines.orchestration.runner)
# The per-table floor's targets: Spark jobs, and seconds on the reference machine (the 20-million-
# step loop in REFERENCE_LOOP_SECONDS), by engine.
REFERENCE_LOOP_SECONDS = 1.3
LOOP_STEPS = 20_000_000
INCREMENT_JOBS = 60
INCREMENT_SECONDS = {"delta-rs": 20.0, "delta-spark": 40.0}
IDLE_SECONDS = {"delta-rs": 5.0, "delta-spark": 10.0}
SAMPLES_SECONDS = {"delta-rs": 40.0}
FULL_SECONDS = {"delta-rs": 60.0, "delta-spark": 120.0}
SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "landing"


@dataclass
class Run:
    """One `lakehouse run` process."""

    engine: str
    phase: str
    seconds: float = 0.0  # wall, process start to exit
    spark_jobs: int = 0
    bronze_rows: int = 0
    silver_rows: int = 0
    tasks: dict[str, float] = field(default_factory=dict)  # task -> its seconds
    task_jobs: dict[str, int] = field(default_factory=dict)  # task -> its Spark jobs (by job tag)
    load_1m: float = 0.0  # the machine's load average as the run started
    discovery_seconds: float | None = None  # how long the small-files bronze task took to find its files
    error: str | None = None

    def busiest(self, count: int = 6) -> list[tuple[str, float]]:
        return sorted(self.tasks.items(), key=lambda kv: -kv[1])[:count]

    def busiest_text(self, count: int = 4) -> str:
        """The busiest tasks as `key seconds/jobs`."""
        return ", ".join(
            f"{key} {seconds:.1f}/{self.task_jobs.get(key, 0)}" for key, seconds in self.busiest(count)
        )


def _conf_file(folder: Path, engine: str, event_log: Path, extra: dict) -> Path:
    """A `--conf` file: the engine, Spark's event log (uncompressed, to count jobs), `extra`."""
    event_log.mkdir(parents=True, exist_ok=True)
    settings = {
        "storage": {"engine": engine},
        "profiles": {
            "local": {
                "spark_conf": {
                    "spark.eventLog.enabled": "true",
                    "spark.eventLog.dir": event_log.as_uri(),
                    "spark.eventLog.compress": "false",
                }
            }
        },
    }
    path = folder / f"bench-{engine}-{event_log.name}.yaml"
    path.write_text(yaml.safe_dump(_merged(settings, extra)), encoding="utf-8")
    return path


def _merged(base: dict, extra: dict) -> dict:
    merged = dict(base)
    for key, value in extra.items():
        merged[key] = _merged(merged[key], value) if isinstance(value, dict) and key in merged else value
    return merged


def spark_jobs(event_log: Path) -> int:
    """Jobs Spark started, counted in the event logs under `event_log`."""
    return sum(jobs_by_task(event_log).values())


def jobs_by_task(event_log: Path) -> dict[str, int]:
    """Jobs Spark started, counted in the event logs under `event_log` by the task whose job tag
    they carry ("" for jobs of no task: the session's own, the run's bookkeeping)."""
    counts: dict[str, int] = {}
    for log in event_log.rglob("*"):
        if log.is_file():
            with log.open(encoding="utf-8", errors="replace") as lines:
                for line in lines:
                    if JOB_START in line:
                        tagged = TASK_TAG.search(line)
                        key = tagged.group(1) if tagged else ""
                        counts[key] = counts.get(key, 0) + 1
    return counts


def loop_seconds(runs: int = 3) -> float:
    """The fastest of `runs` times a new interpreter takes for a one-thread loop of `LOOP_STEPS`
    steps: this machine's speed against the reference machine's `REFERENCE_LOOP_SECONDS`."""
    code = f"import time; t = time.perf_counter(); i = 0\nfor _ in range({LOOP_STEPS}): i += 1\nprint(time.perf_counter() - t)"
    return min(
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)
        for _ in range(runs)
    )


def run_once(engine: str, phase: str, landing: Path, warehouse: Path, work: Path, extra: dict) -> Run:
    """`lakehouse run` in a new process, timed from outside; its jobs and task times read back.
    `extra`: configuration merged over the run's, and `layers` (a `--layers` value)."""
    extra = dict(extra)
    layers = extra.pop("layers", None)
    event_log = work / "events" / f"{engine}-{phase.replace(' ', '-')}"
    conf = _conf_file(work, engine, event_log, extra)
    command = [
        str(Path(sys.executable).with_name("lakehouse")),
        "run",
        "--landing",
        str(landing),
        "--warehouse",
        str(warehouse),
        "--conf",
        str(conf),
        *(["--layers", layers] if layers else []),
    ]
    load = round(os.getloadavg()[0], 2)
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, cwd=work)
    run = Run(engine, phase, seconds=round(time.monotonic() - started, 2), load_1m=load)
    for line in done.stdout.splitlines():
        task = TASK_LINE.match(line)
        if task:
            run.tasks[task.group(2)] = float(task.group(3))
        found = FOUND_LINE.search(line)
        if found:
            run.discovery_seconds = float(found.group(1))
        finished = DONE_LINE.match(line)
        if finished:
            run.bronze_rows, run.silver_rows = int(finished.group(1)), int(finished.group(2))
    if done.returncode != 0:
        run.error = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
    by_task = jobs_by_task(event_log)
    run.spark_jobs = sum(by_task.values())
    run.task_jobs = {key: n for key, n in by_task.items() if key}
    return run


def targets(runs: list[Run], loop: float | None = None) -> list[dict]:
    """The targets each engine's runs meet or miss: shares of its full builds, the growth from
    the smaller warehouse to the larger, the discovery among many files, and the engines' ratio;
    with `loop` (this machine's `loop_seconds`), the per-table floor's jobs and seconds
    (`floor_targets`)."""
    by = {(r.engine, r.phase): r for r in runs}
    checks = [] if loop is None else floor_targets(by, loop)

    def check(target: str, value: str, passed: bool) -> None:
        checks.append({"target": target, "value": value, "passed": passed})

    for engine in dict.fromkeys(r.engine for r in runs):
        for size in SIZES:
            full = by.get((engine, f"full {size}"))
            for phase, bound in (("increment", INCREMENT_SHARE[size]), ("idle", IDLE_SHARE)):
                run = by.get((engine, f"{phase} {size}"))
                if full and run and full.seconds and bound is not None:
                    share = run.seconds / full.seconds
                    check(
                        f"{engine}: {phase} on {size} <= {bound:.0%} of its full build",
                        f"{run.seconds:.1f} s = {share:.1%}",
                        share <= bound and not run.error,
                    )
        for phase in ("increment", "idle"):
            small, large = by.get((engine, f"{phase} small")), by.get((engine, f"{phase} large"))
            if small and large and small.seconds:
                growth = large.seconds / small.seconds
                check(
                    f"{engine}: {phase} on the larger warehouse <= {GROWTH:.1f}x on the smaller",
                    f"{large.seconds:.1f} s / {small.seconds:.1f} s = {growth:.2f}x",
                    growth <= GROWTH and not large.error,
                )
        found = by.get((engine, "new files"))
        if found and found.discovery_seconds is not None:
            check(
                f"{engine}: finding the new files among the small ones < {DISCOVERY_SECONDS:.0f} s",
                f"{found.discovery_seconds:.2f} s (bronze task {found.tasks.get(SMALL_FILES_TASK, 0):.1f} s)",
                found.discovery_seconds < DISCOVERY_SECONDS and not found.error,
            )
    rs, spark = by.get(("delta-rs", "increment small")), by.get(("delta-spark", "increment small"))
    if rs and spark and rs.seconds:
        ratio = spark.seconds / rs.seconds
        check(
            f"delta-spark increment <= {ENGINE_RATIO:.0f}x delta-rs'",
            f"{spark.seconds:.1f} s / {rs.seconds:.1f} s = {ratio:.2f}x",
            ratio <= ENGINE_RATIO and not spark.error,
        )
    return checks


def floor_targets(by: dict[tuple[str, str], Run], loop: float) -> list[dict]:
    """The per-table floor's targets: Spark jobs as counted, seconds scaled by this machine's
    loop time against the reference machine's (`REFERENCE_LOOP_SECONDS`)."""
    scale = loop / REFERENCE_LOOP_SECONDS
    checks = []
    bounds = (
        ("increment small", INCREMENT_SECONDS, INCREMENT_JOBS),
        ("idle small", IDLE_SECONDS, 0),
        ("samples", SAMPLES_SECONDS, None),
        ("full small", FULL_SECONDS, None),
    )
    for engine in dict.fromkeys(engine for engine, _ in by):
        for phase, seconds, jobs in bounds:
            run = by.get((engine, phase))
            if run is None:
                continue
            if jobs is not None:
                checks.append(
                    {
                        "target": f"{engine}: {phase} runs at most {jobs} Spark jobs",
                        "value": f"{run.spark_jobs} jobs",
                        "passed": run.spark_jobs <= jobs and not run.error,
                    }
                )
            if engine in seconds:
                scaled = run.seconds / scale
                checks.append(
                    {
                        "target": f"{engine}: {phase} <= {seconds[engine]:.0f} s on the reference machine",
                        "value": f"{run.seconds:.1f} s here = {scaled:.1f} s there (loop {loop:.2f} s)",
                        "passed": scaled <= seconds[engine] and not run.error,
                    }
                )
    return checks


def report(runs: list[Run], checks: list[dict], sizes: dict[str, int], increment: int, files: int) -> str:
    lines = [
        f"scheduled runs: {sizes['small']:,} and {sizes['large']:,} events, then the same {increment:,} more "
        f"on each, then nothing new; {files:,} small files, then {NEW_FILES} more (each run a new process)",
        "",
        f"{'engine':<12} {'run':<16} {'seconds':>8} {'jobs':>6} {'bronze':>8} {'silver':>8} {'load':>5}  "
        "busiest tasks (seconds/jobs)",
    ]
    for run in runs:
        busiest = run.busiest_text()
        lines.append(
            f"{run.engine:<12} {run.phase:<16} {run.seconds:>8.1f} {run.spark_jobs:>6} "
            f"{run.bronze_rows:>8} {run.silver_rows:>8} {run.load_1m:>5.1f}  {busiest}"
        )
        if run.error:
            lines.append(f"{'':<12} {'':<16} FAILED: {run.error}")
    lines += ["", "targets"]
    for check in checks:
        verdict = "PASS" if check["passed"] else "MISS"
        lines.append(f"  {verdict}  {check['target']:<62} {check['value']}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.scheduled", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--events", type=int, default=100_000, help="events of the smaller warehouse")
    parser.add_argument(
        "--large-events", type=int, default=1_000_000, help="events of the larger one (0: none)"
    )
    parser.add_argument("--increment", type=int, default=1_000, help="events landed on each warehouse")
    parser.add_argument(
        "--small-files", type=int, default=100_000, help="files of the small-files landing (0: none)"
    )
    parser.add_argument("--engines", type=comma_list, default=list(ENGINES), help="delta-rs,delta-spark")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--workdir", help="keep landings, warehouses and event logs here (default: temporary)"
    )
    parser.add_argument("--conf", help="YAML merged over each run's configuration (e.g. profile settings)")
    parser.add_argument(
        "--no-samples", dest="samples", action="store_false", help="skip the bundled samples from empty"
    )
    return parser.parse_args(argv)


def _warehouse_runs(
    args: argparse.Namespace, work: Path, size: str, events: int, extra: dict, runs: list[Run]
) -> None:
    """Full build, the shared increment, then an idle run, on a landing of `events` events."""
    landing = work / f"landing-{size}"
    generate_landing(landing, events, args.seed)
    for engine in args.engines:
        warehouse = work / f"warehouse-{size}-{engine}"
        shutil.rmtree(warehouse, ignore_errors=True)
        _record(runs, run_once(engine, f"full {size}", landing, warehouse, work, extra))
    place_increment(work / "increment", landing)
    for phase in ("increment", "idle"):
        for engine in args.engines:
            warehouse = work / f"warehouse-{size}-{engine}"
            _record(runs, run_once(engine, f"{phase} {size}", landing, warehouse, work, extra))


def _small_files_runs(args: argparse.Namespace, work: Path, extra: dict, runs: list[Run]) -> None:
    """Bronze over a landing of many small files (the first run ingests them, not timed as a
    target), then over the same landing with `NEW_FILES` more: how long finding them takes."""
    landing = work / "landing-files"
    write_small_files(landing, args.small_files)
    bronze = {**extra, "layers": "bronze"}
    for engine in args.engines:
        warehouse = work / f"warehouse-files-{engine}"
        shutil.rmtree(warehouse, ignore_errors=True)
        _record(runs, run_once(engine, "small files", landing, warehouse, work, bronze))
    write_small_files(landing, NEW_FILES, first=args.small_files)
    for engine in args.engines:
        warehouse = work / f"warehouse-files-{engine}"
        _record(runs, run_once(engine, "new files", landing, warehouse, work, bronze))


def _samples_runs(args: argparse.Namespace, work: Path, extra: dict, runs: list[Run]) -> None:
    """The bundled samples from empty on each engine (what `make demo` runs)."""
    for engine in args.engines:
        warehouse = work / f"warehouse-samples-{engine}"
        shutil.rmtree(warehouse, ignore_errors=True)
        _record(runs, run_once(engine, "samples", SAMPLES, warehouse, work, extra))


def _record(runs: list[Run], run: Run) -> None:
    runs.append(run)
    print(
        f"{run.engine:<12} {run.phase:<16} {run.seconds:8.1f} s  {run.spark_jobs} Spark jobs  {run.busiest_text()}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    unknown = set(args.engines) - set(ENGINES)
    if unknown:
        raise SystemExit(f"unknown engines {sorted(unknown)}: choose from {ENGINES}")
    extra = yaml.safe_load(Path(args.conf).read_text(encoding="utf-8")) if args.conf else {}
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench-scheduled-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    sizes = {"small": args.events, "large": args.large_events}
    try:
        generate_increment(work / "increment", args.increment, args.seed + 1, after_base_of=args.events)
        loop = loop_seconds()
        print(
            f"a one-thread loop of {LOOP_STEPS:,} steps: {loop:.2f} s here, {REFERENCE_LOOP_SECONDS} s on the reference machine",
            flush=True,
        )
        runs: list[Run] = []
        if args.samples:
            _samples_runs(args, work, extra, runs)
        for size, events in sizes.items():
            if events:
                _warehouse_runs(args, work, size, events, extra, runs)
        if args.small_files:
            _small_files_runs(args, work, extra, runs)
        checks = targets(runs, loop)
        print()
        print(report(runs, checks, sizes, args.increment, args.small_files))
        figures = {
            "events": sizes,
            "increment_events": args.increment,
            "small_files": args.small_files,
            "machine": {
                "cpus": os.cpu_count(),
                "load_1m": round(os.getloadavg()[0], 2),
                "loop_seconds": loop,
            },
            "runs": [asdict(r) for r in runs],
            "targets": checks,
        }
        print(json.dumps(figures), flush=True)
        return 0 if all(not r.error for r in runs) else 1
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
