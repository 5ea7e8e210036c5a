"""The Databricks job's last task: compact the warehouse's tables once the task groups are done.

A task group runs with `compact=False`: groups run side by side, and a compaction of a table
another group is appending to would only contend with it. So the job ends with one maintenance
task (`lakehouse-task --maintenance`) that applies the policy a local run applies after itself
(`maintenance.compact_min_files`, `maintenance.compact_target_file_mb`) to every table of the
warehouse, while nothing else writes.
"""

from __future__ import annotations

import datetime as dt
import time

from pipelines.core.config import Config
from pipelines.core.context import RunContext
from pipelines.ops.compaction import CompactionPolicy, TableCompaction, compact_tables
from pipelines.orchestration.runner import new_run_id
from pipelines.runtime.spark import get_spark
from pipelines.store import open_configured_store


def run_maintenance(config: Config, spark=None, log_format: str = "text") -> list[TableCompaction]:
    """Compact each table holding `compact_min_files` small files (none when that is 0 or the
    engine cannot compact); logs a first line naming the engine, one line per compaction and a
    summary. Returns the compactions."""
    spark = spark or get_spark(config)
    store = open_configured_store(spark, config)
    ctx = RunContext(spark, store, config, new_run_id(), dt.datetime.now(dt.timezone.utc), log_format)
    started = time.monotonic()
    ctx.log("maintenance", run_id=ctx.run_id, warehouse=str(config.warehouse), engine=store.engine.name)
    policy = CompactionPolicy.from_config(config)
    tables = store.tables()
    done = []
    if policy.min_files > 0 and store.compacts:
        done = compact_tables(store, tables, policy.target_bytes, policy.min_files, ctx.log)
    ctx.log(
        "done",
        tables=len(tables),
        compacted=len(done),
        min_small_files=policy.min_files,
        seconds=f"{time.monotonic() - started:.1f}",
    )
    return done
