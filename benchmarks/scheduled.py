"""`python -m benchmarks.scheduled` (`make bench`): what a scheduled job pays, per table engine.

Why: a Databricks job (or cron) runs the pipeline every few minutes, each run a new process
that starts Python and Spark again. What users pay all day is the small increment and the
idle run (nothing new), not the full build; and their cost is per task, not per row. So on
the same generated landing, for each engine, three `lakehouse run`s, each a new process
started as a user starts it, timed from outside:

- **full**: every event, from an empty warehouse;
- **increment**: `--fraction` more events (1% by default) in new files, their times right
  after the base's, as a live feed's next batch;
- **idle**: nothing new.

Each run's Spark jobs are counted from Spark's event log. The report shows seconds, jobs and
the busiest tasks per run, then the targets: each engine's increment at most 15% of its full
build, its idle run at most 5% (both with the process start), delta-spark's increment at most
twice delta-rs'. The last line is one JSON object with every figure.

    python -m benchmarks.scheduled --events 100000
    python -m benchmarks.scheduled --events 20000 --engines delta-rs --workdir /tmp/bench
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

from benchmarks.workload import ENGINES, add_increment, comma_list, generate_landing

PHASES = ("full", "increment", "idle")
INCREMENT_SHARE = 0.15  # of the engine's full build
IDLE_SHARE = 0.05
ENGINE_RATIO = 2.0  # delta-spark's increment against delta-rs'
TASK_LINE = re.compile(r"^(success|skipped|failed)\s+task=(\S+).*\bseconds=([\d.]+)")
DONE_LINE = re.compile(r"^done\s.*\bbronze_rows=(\d+)\s+silver_rows=(\d+)")
JOB_START = '"Event":"SparkListenerJobStart"'


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
    load_1m: float = 0.0  # the machine's load average as the run started
    error: str | None = None

    def busiest(self, count: int = 6) -> list[tuple[str, float]]:
        return sorted(self.tasks.items(), key=lambda kv: -kv[1])[:count]


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
    count = 0
    for log in event_log.rglob("*"):
        if log.is_file():
            with log.open(encoding="utf-8", errors="replace") as lines:
                count += sum(JOB_START in line for line in lines)
    return count


def run_once(engine: str, phase: str, landing: Path, warehouse: Path, work: Path, extra: dict) -> Run:
    """`lakehouse run` in a new process, timed from outside; its jobs and task times read back."""
    event_log = work / "events" / f"{engine}-{phase}"
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
    ]
    load = round(os.getloadavg()[0], 2)
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, cwd=work)
    run = Run(engine, phase, seconds=round(time.monotonic() - started, 2), load_1m=load)
    for line in done.stdout.splitlines():
        task = TASK_LINE.match(line)
        if task:
            run.tasks[task.group(2)] = float(task.group(3))
        finished = DONE_LINE.match(line)
        if finished:
            run.bronze_rows, run.silver_rows = int(finished.group(1)), int(finished.group(2))
    if done.returncode != 0:
        run.error = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
    run.spark_jobs = spark_jobs(event_log)
    return run


def targets(runs: list[Run]) -> list[dict]:
    """Each engine's increment and idle shares of its full build, and the engines' ratio."""
    by = {(r.engine, r.phase): r for r in runs}
    checks = []
    for engine in dict.fromkeys(r.engine for r in runs):
        full = by.get((engine, "full"))
        for phase, bound in (("increment", INCREMENT_SHARE), ("idle", IDLE_SHARE)):
            run = by.get((engine, phase))
            if full and run and full.seconds:
                share = run.seconds / full.seconds
                checks.append(
                    {
                        "target": f"{engine}: {phase} <= {bound:.0%} of the full build",
                        "value": f"{run.seconds:.1f} s = {share:.1%}",
                        "passed": share <= bound and not run.error,
                    }
                )
    rs, spark = by.get(("delta-rs", "increment")), by.get(("delta-spark", "increment"))
    if rs and spark and rs.seconds:
        ratio = spark.seconds / rs.seconds
        checks.append(
            {
                "target": f"delta-spark increment <= {ENGINE_RATIO:.0f}x delta-rs'",
                "value": f"{spark.seconds:.1f} s / {rs.seconds:.1f} s = {ratio:.2f}x",
                "passed": ratio <= ENGINE_RATIO and not spark.error,
            }
        )
    return checks


def report(runs: list[Run], checks: list[dict], events: int, increment: int) -> str:
    lines = [
        f"scheduled runs: {events:,} events, then {increment:,} more, then nothing new (each a new process)",
        "",
    ]
    lines.append(
        f"{'engine':<12} {'run':<10} {'seconds':>8} {'jobs':>6} {'bronze':>8} {'silver':>8} {'load':>5}  busiest tasks (s)"
    )
    for run in runs:
        busiest = ", ".join(f"{key} {seconds:.1f}" for key, seconds in run.busiest(4))
        lines.append(
            f"{run.engine:<12} {run.phase:<10} {run.seconds:>8.1f} {run.spark_jobs:>6} "
            f"{run.bronze_rows:>8} {run.silver_rows:>8} {run.load_1m:>5.1f}  {busiest}"
        )
        if run.error:
            lines.append(f"{'':<12} {'':<10} FAILED: {run.error}")
    lines += ["", "targets"]
    for check in checks:
        verdict = "PASS" if check["passed"] else "MISS"
        lines.append(f"  {verdict}  {check['target']:<46} {check['value']}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.scheduled", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--events", type=int, default=100_000, help="events of the full build")
    parser.add_argument("--fraction", type=float, default=0.01, help="the increment, a share of --events")
    parser.add_argument("--engines", type=comma_list, default=list(ENGINES), help="delta-rs,delta-spark")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", help="keep landing, warehouses and event logs here (default: temporary)")
    parser.add_argument("--conf", help="YAML merged over each run's configuration (e.g. profile settings)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    unknown = set(args.engines) - set(ENGINES)
    if unknown:
        raise SystemExit(f"unknown engines {sorted(unknown)}: choose from {ENGINES}")
    extra = yaml.safe_load(Path(args.conf).read_text(encoding="utf-8")) if args.conf else {}
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench-scheduled-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        landing = work / "landing"
        generate_landing(landing, args.events, args.seed)
        increment = max(1, int(args.events * args.fraction))
        runs: list[Run] = []
        for phase in PHASES:
            if phase == "increment":
                add_increment(landing, increment, args.seed + 1, after_base_of=args.events)
            for engine in args.engines:
                warehouse = work / f"warehouse-{engine}"
                if phase == "full" and warehouse.exists():
                    shutil.rmtree(warehouse)
                runs.append(run_once(engine, phase, landing, warehouse, work, extra))
                print(
                    f"{engine:<12} {phase:<10} {runs[-1].seconds:8.1f} s  {runs[-1].spark_jobs} Spark jobs",
                    flush=True,
                )
        checks = targets(runs)
        print()
        print(report(runs, checks, args.events, increment))
        figures = {
            "events": args.events,
            "increment_events": increment,
            "machine": {"cpus": os.cpu_count(), "load_1m": round(os.getloadavg()[0], 2)},
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
