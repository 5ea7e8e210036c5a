"""The Databricks job's last task: compact, vacuum, expire old validation documents and write the
data-quality report, once the task groups are done.

A task group runs with `compact=False`: groups run side by side, and a compaction of a table
another group is appending to would only contend with it. So the job ends with one maintenance
task (`lakehouse-task --maintenance`) that, while nothing else writes:
- compacts every table holding `maintenance.compact_min_files` small files (the policy a local
  run applies after itself);
- vacuums the tables due (`maintenance.vacuum_retention_hours`, 168 by default: Delta's own
  guard, which serverless compute keeps), so the files compactions replaced do not pile up in
  storage: a table older than the retention whose last vacuum is `vacuum_every_hours` old
  (`pipelines.ops.vacuum_schedule`: VACUUM lists every file of a table, so vacuuming each table
  after each run would cost in proportion to all that is stored);
- deletes the GX validation documents older than `maintenance.validation_document_days`, each
  table's newest kept (`lakehouse vacuum` does the same locally);
- writes the data-quality report to `<warehouse>/reports/dq_report.html` and the governance
  report beside it (`governance_report.html`; on Databricks, the warehouse volume), where they
  can be downloaded or opened from the volume browser.
"""

from __future__ import annotations

import datetime as dt
import time

from pipelines.core.config import Config
from pipelines.core.context import RunContext
from pipelines.ops import vacuum_schedule
from pipelines.ops.compaction import CompactionPolicy, TableCompaction, compact_tables
from pipelines.ops.vacuum_schedule import VacuumRecord, not_due
from pipelines.orchestration.runner import new_run_id
from pipelines.quality import validation_documents
from pipelines.quality.governance_report import write_governance_report
from pipelines.quality.report import write_report
from pipelines.runtime.spark import get_spark
from pipelines.store import open_configured_store


def run_maintenance(config: Config, spark=None, log_format: str = "text") -> list[TableCompaction]:
    """Compact each table holding `compact_min_files` small files (none when that is 0 or the
    engine cannot compact), vacuum every table, expire old validation documents and write the
    DQ report and the governance report; logs a first line naming the engine, a line per step and
    a summary. Returns the compactions."""
    spark = spark or get_spark(config)
    store = open_configured_store(spark, config).for_run()  # keeps each table's history for the steps
    ctx = RunContext(spark, store, config, new_run_id(), dt.datetime.now(dt.timezone.utc), log_format)
    started = time.monotonic()
    ctx.log("maintenance", run_id=ctx.run_id, warehouse=str(config.warehouse), engine=store.engine.name)
    settings = config.section("maintenance")
    policy = CompactionPolicy.from_config(config)
    tables = store.tables()
    store.prefetch(tables)  # every table's recent history, several at once: the steps below read it
    done = []
    if policy.min_files > 0 and store.compacts:
        done = compact_tables(store, tables, policy.target_bytes, policy.min_files, ctx.log)
    retention = float(settings["vacuum_retention_hours"])
    every = float(settings["vacuum_every_hours"])
    record = VacuumRecord.load(store.warehouse)
    vacuumed, not_yet = 0, 0
    for table in tables:
        if not_due(store, table, record, retention, every, vacuum_schedule.now_ms()) is not None:
            not_yet += 1
            continue
        removed = store.vacuum(table, retention)
        record.vacuumed(table, vacuum_schedule.now_ms())
        vacuumed += len(removed)
        if removed:
            ctx.log("vacuumed", table=table, files=len(removed), retention_hours=f"{retention:g}")
    record.save()
    expired = validation_documents.remove_expired(store.warehouse, settings["validation_document_days"])
    bronze_tables = {name: source["bronze_table"] for name, source in config.sources.items()}
    report = write_report(store, None, bronze_tables)
    governance = write_governance_report(store)
    ctx.log(
        "done",
        tables=len(tables),
        compacted=len(done),
        min_small_files=policy.min_files,
        files_vacuumed=vacuumed,
        tables_not_due_for_vacuum=not_yet,
        validation_documents_expired=len(expired),
        report=str(report),
        governance_report=str(governance),
        seconds=f"{time.monotonic() - started:.1f}",
    )
    return done
