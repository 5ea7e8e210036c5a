"""`python -m benchmarks.settings_ab`: Spark settings with and without, alternating in one JVM.

Why: on a shared machine whole benchmark runs spread by ±10% or more, too much to see a
setting worth a few percent. Here one session runs the same workload on fresh copies of one
landing folder, with the candidate settings and without them, in the order A B B A (per
round) after a warm-up pass that is not counted, so both see the same machine and the same
JIT; each pass is a full build and an incremental run. The rows each pass leaves in every table are compared, so a setting that
changes results shows.

    python -m benchmarks.settings_ab --engine delta-spark --events 20000 \\
        --set spark.databricks.delta.snapshotPartitions=1 --rounds 2

Settings are SQL settings the running session takes (`spark.conf.set`); each task's own
session copies them (`pipelines.runtime.spark.task_session`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
from pathlib import Path

from benchmarks.workload import (
    ENGINES,
    add_increment,
    comma_list,
    generate_landing,
    with_engine,
)


def _setting(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got '{text}'")
    return key.strip(), value.strip()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.settings_ab", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--engine", choices=ENGINES, default="delta-spark")
    parser.add_argument("--events", type=int, default=20_000, help="events of each full build")
    parser.add_argument("--incremental-fraction", type=float, default=0.01)
    parser.add_argument("--rounds", type=int, default=1, help="rounds of A B B A")
    parser.add_argument(
        "--warmup", type=int, default=1, help="passes without the settings first, not counted"
    )
    parser.add_argument("--set", dest="settings", type=_setting, action="append", required=True)
    parser.add_argument("--tasks", type=comma_list, help="only these task keys and their upstream")
    parser.add_argument("--conf", help="configuration file merged over conf/lakehouse.yaml")
    parser.add_argument("--workdir", help="keep the folders here (default: a temporary folder)")
    return parser.parse_args(argv)


def table_rows(store) -> dict[str, int]:
    """Rows of every table of the warehouse (from the Delta log's file statistics)."""
    return {name: store.count_added_since(name, None) for name in store.tables()}


def one_pass(spark, config, graph, base: Path, folder: Path, settings: dict, sizes: tuple[int, int]) -> dict:
    """A full build and an incremental run on a fresh copy of `base` (`sizes`: its events, the
    increment's), with `settings` set."""
    from pipelines.orchestration.runner import run_pipeline
    from pipelines.runtime.spark import session_conf
    from pipelines.store import open_configured_store

    landing, warehouse = folder / "landing", folder / "warehouse"
    shutil.copytree(base, landing)
    config = config.with_overrides(landing=str(landing), warehouse=str(warehouse))
    figures = {"load_before": round(os.getloadavg()[0], 2)}
    with session_conf(spark, settings):
        figures["full_s"] = round(run_pipeline(config, graph=graph, spark=spark).seconds, 2)
        add_increment(landing, sizes[1], seed=1, after_base_of=sizes[0])
        figures["incremental_s"] = round(run_pipeline(config, graph=graph, spark=spark).seconds, 2)
        figures["rows"] = table_rows(open_configured_store(spark, config))
    figures["load_after"] = round(os.getloadavg()[0], 2)
    return figures


def main(argv: list[str] | None = None) -> int:
    from benchmarks.report import _table
    from pipelines.core.config import load_config
    from pipelines.core.graph import load_graph
    from pipelines.runtime.spark import get_spark

    args = parse_args(argv)
    settings = dict(args.settings)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="lakehouse-settings-ab-")).resolve()
    base = workdir / "landing"
    base_events = sum(generate_landing(base, args.events, seed=0).values())
    config = with_engine(load_config(args.conf), args.engine)
    graph = load_graph().up_to(args.tasks) if args.tasks else load_graph()
    spark = get_spark(config.with_overrides(landing=str(base), warehouse=str(workdir / "start")))
    sizes = (base_events, max(1, round(args.events * args.incremental_fraction)))
    order = ["W"] * args.warmup + ["A", "B", "B", "A"] * args.rounds  # W: warm-up, not counted
    passes = []
    try:
        for number, variant in enumerate(order):
            label = f"{number}{variant}"
            chosen = settings if variant == "B" else {}
            figures = one_pass(spark, config, graph, base, workdir / label, chosen, sizes)
            passes.append({"variant": variant, "label": label} | figures)
            print(
                f"{label}: full {figures['full_s']} s, incremental {figures['incremental_s']} s", flush=True
            )
    finally:
        spark.stop()
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    rows = [
        [
            p["label"],
            {"B": "with", "A": "without"}.get(p["variant"], "warm-up"),
            p["full_s"],
            p["incremental_s"],
        ]
        + [f"{p['load_before']} -> {p['load_after']}"]
        for p in passes
    ]
    print("\nB = " + ", ".join(f"{k}={v}" for k, v in settings.items()))
    print(_table(["pass", "settings", "full s", "incremental s", "load"], rows, "<<>><"))
    summary = {}
    for variant, name in (("A", "without"), ("B", "with")):
        chosen = [p for p in passes if p["variant"] == variant]
        summary[name] = {
            "full_s_median": statistics.median(p["full_s"] for p in chosen),
            "incremental_s_median": statistics.median(p["incremental_s"] for p in chosen),
        }
        print(
            f"{name:<8} median full {summary[name]['full_s_median']:.2f} s, "
            f"incremental {summary[name]['incremental_s_median']:.2f} s"
        )
    same = all(p["rows"] == passes[0]["rows"] for p in passes)
    print("table rows: " + ("the same in every pass" if same else "DIFFER between passes"))
    print(json.dumps({"settings": settings, "passes": passes, "summary": summary, "same_rows": same}))
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
