"""`python -m benchmarks.new_process`: one pipeline run in a fresh interpreter and JVM, timed from inside.

Why: a scheduled `lakehouse run` (cron, a Databricks job on a new cluster) starts a new
process every time and pays Python's imports, Spark's start-up and the JIT compiler's
warm-up again. The benchmark's own incremental run reuses the warm session of its full
run, so it cannot show that cost; `benchmarks.run` starts this module for a second
increment and reports both.

Prints the task log, then one JSON line: start-up and pipeline seconds, whether the JVM
mapped a class archive and which compilers it ran (`pipelines.runtime.tuning.jit`), and per task its
status, rows written and table rows afterwards (so the rows reconcile with the warehouse).
A JVM that records the archive writes it after that line, as it exits: the parent stops
its clock at the line.
"""

from __future__ import annotations

import argparse
import json
import time

STARTED = time.monotonic()  # the interpreter and this module are up; imports of Spark follow


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from benchmarks.workload import ENGINES, comma_list

    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.new_process", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--warehouse", required=True)
    parser.add_argument("--landing", required=True)
    parser.add_argument("--conf", help="configuration file merged over conf/lakehouse.yaml")
    parser.add_argument("--tasks", type=comma_list, help="only these task keys and their upstream")
    parser.add_argument("--engine", choices=ENGINES, help="storage.engine for this run (default: the conf's)")
    return parser.parse_args(argv)


def class_archive_use(spark) -> str:
    """`mapped`, `recording` or `off`: whether this JVM started from a class archive
    (`pipelines.runtime.tuning.class_archive`), read from its own command line."""
    from pipelines.runtime.tuning.class_archive import MAP_OPTION, RECORD_OPTION
    from pipelines.runtime.tuning.local_driver import jvm_options

    arguments = " ".join(jvm_options(spark))
    if MAP_OPTION in arguments:
        return "mapped"
    return "recording" if RECORD_OPTION in arguments else "off"


def main(argv: list[str] | None = None) -> int:
    """Run the graph once; exit 1 (with the reason in the JSON line) when a task failed."""
    from benchmarks.workload import with_engine
    from pipelines.core.config import load_config
    from pipelines.core.graph import load_graph
    from pipelines.orchestration.runner import LAYERS, RunFailed, run_pipeline
    from pipelines.orchestration.weighing import rows_in_sight
    from pipelines.runtime.spark import engine_in_use, get_spark
    from pipelines.runtime.tuning import for_local_run
    from pipelines.runtime.tuning.jit import compiles_with_c1_only
    from pipelines.store import open_configured_store

    args = parse_args(argv)
    config = load_config(args.conf).with_overrides(landing=args.landing, warehouse=args.warehouse)
    config = with_engine(config, args.engine)
    graph = load_graph().up_to(args.tasks) if args.tasks else load_graph()
    local = for_local_run(config, lambda: rows_in_sight(config, LAYERS, graph))
    spark = get_spark(config, local.java_options)  # as `lakehouse run` starts it
    ready = time.monotonic()
    figures: dict = {"startup_s": round(ready - STARTED, 2), "error": None, "tasks": []}
    figures["engine"] = engine_in_use(config, spark)
    figures["class_archive"] = class_archive_use(spark)
    figures["jit"] = "C1 only" if compiles_with_c1_only(spark) else "tiered"
    try:
        summary = run_pipeline(config, graph=graph, spark=spark)
        figures["pipeline_s"] = round(summary.seconds, 2)
        store = open_configured_store(spark, config)
        for task in graph.ordered():
            result, table = summary.results.get(task.key), task.spec(config).table
            figures["tasks"].append(
                {
                    "key": task.key,
                    "layer": task.layer,
                    "status": result.status if result else "NOT RUN",
                    "rows_out": result.rows_out if result else 0,
                    "table_rows": store.count_added_since(table, None) if store.exists(table) else 0,
                }
            )
    except RunFailed as exc:
        figures["error"] = str(exc)
        figures["pipeline_s"] = round(time.monotonic() - ready, 2)
    finally:
        spark.stop()
    print(json.dumps(figures), flush=True)
    return 1 if figures["error"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
