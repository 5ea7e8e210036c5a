"""`python -m benchmarks.schedule`: many small scheduled runs on one warehouse, timed one by one.

Why: the benchmark's full and incremental runs never show what a schedule does to a
warehouse over time. Every run adds files to the tables it writes, and unmerged small
files make each run slower than the one before (compaction keeps that in check). This runs `--runs` increments of `--events` events
on an existing warehouse in one warm session (a `lakehouse run --every` process), and
prints per run its seconds, the data files the warehouse holds after it and the tables
it compacted, so a cost that grows with the number of runs shows as a trend.

    python -m benchmarks.run --events 1000000 --workdir /tmp/b --no-duckdb --no-new-process
    python -m benchmarks.schedule --warehouse /tmp/b/events-1000000/warehouse \\
        --landing /tmp/b/events-1000000/landing --runs 48 --events 200

Prints a line per run, then one JSON line with every run's figures.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import time
from pathlib import Path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.schedule", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--warehouse", required=True, help="an existing warehouse (runs are added to it)")
    parser.add_argument("--landing", required=True, help="its landing folder (increments are added to it)")
    parser.add_argument("--runs", type=int, default=20, help="scheduled runs (default 20)")
    parser.add_argument("--events", type=int, default=200, help="new events a run (default 200)")
    parser.add_argument("--seed", type=int, default=1000, help="generator seed of the first increment")
    parser.add_argument("--conf", help="configuration file merged over conf/lakehouse.yaml")
    return parser.parse_args(argv)


def data_files(store) -> int:
    """Data files of every table's current version: what a run's reads may have to open."""
    return sum(len(store.read(table).inputFiles()) for table in store.tables())


def run_schedule(args: argparse.Namespace, spark=None) -> list[dict]:
    """The runs, each: its number, seconds, files after it and the tables it compacted."""
    from benchmarks.workload import add_increment
    from pipelines.core.config import load_config
    from pipelines.orchestration.runner import run_pipeline
    from pipelines.runtime.spark import get_spark
    from pipelines.store import open_configured_store

    config = load_config(args.conf).with_overrides(landing=args.landing, warehouse=args.warehouse)
    spark = spark or get_spark(config)
    store = open_configured_store(spark, config)
    runs = []
    for number in range(1, args.runs + 1):
        add_increment(Path(args.landing), args.events, seed=args.seed + number)
        with contextlib.redirect_stdout(io.StringIO()):  # the task log: one line a task, 34 a run
            started = time.monotonic()
            summary = run_pipeline(config, spark=spark)
            seconds = time.monotonic() - started
        run = {
            "run": number,
            "events": args.events,
            "seconds": round(seconds, 2),
            "data_files": data_files(store),
            "compacted": [c.table for c in summary.compactions],
        }
        print(
            f"run {number:>3}  {args.events} events  {seconds:6.2f} s  "
            f"data files {run['data_files']:>6}  compacted {len(run['compacted'])} tables",
            flush=True,
        )
        runs.append(run)
    return runs


def main(argv: list[str] | None = None, spark=None) -> int:
    args = parse_args(argv)
    runs = run_schedule(args, spark)
    print(json.dumps({"runs": runs}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
