"""What every task run gets: Spark, the table store, configuration, run identity, logging."""

from __future__ import annotations

import datetime as dt
import json
import sys
import threading
from dataclasses import dataclass, field

from pyspark.sql import SparkSession
from pyspark.sql.types import StructType

from pipelines.core.config import Config
from pipelines.store import TableStore


@dataclass
class TaskResult:
    """Counts a task reports; they land in `ops.runs` and reconcile layer to layer."""

    status: str = "SUCCESS"  # SUCCESS | SKIPPED | FAILED
    source_rows: int = 0  # rows read from the input table(s) / records found in landing files
    rows_in: int = 0  # rows the transform produced
    rows_out: int = 0  # rows written to the table
    rows_quarantined: int = 0
    rows_duplicate: int = 0
    files: int = 0
    message: str = ""


class TaskObserver:
    """Watches the tasks of a run (a benchmark's timings, say): the runner calls these, on the
    thread that runs the task, around its executor and its bookkeeping. Does nothing by itself."""

    def task_started(self, key: str, spec) -> None:
        """The task of `spec` is about to run its executor."""

    def task_executed(self, key: str, spec, result: TaskResult) -> None:
        """The executor returned (or failed, as `result` says); the bookkeeping comes next."""

    def task_recorded(self, key: str, spec, result: TaskResult) -> None:
        """The task's row is in `ops.runs` and its progress line printed: it is done."""


class PendingRows:
    """Rows for shared bookkeeping tables (`ops.runs`, `ops.dq_results`), gathered from a run's
    tasks and written once, when the run ends: on Delta's JVM engine every append is a Spark
    job and a commit, which forty tasks a run paid once each per table. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[str, tuple[StructType, list[tuple]]] = {}

    def add(self, table: str, schema: StructType, rows: list[tuple]) -> None:
        with self._lock:
            self._rows.setdefault(table, (schema, []))[1].extend(rows)

    def take(self) -> list[tuple[str, StructType, list[tuple]]]:
        """Every table's gathered rows (table, schema, rows), which are then no longer pending."""
        with self._lock:
            taken, self._rows = self._rows, {}
        return [(table, schema, rows) for table, (schema, rows) in taken.items() if rows]


@dataclass(frozen=True)
class WarehouseView:
    """The warehouse as its tables' metadata shows it, without a Spark session: enough to weigh
    what a task has to do before it runs, or before a session starts at all."""

    store: TableStore
    config: Config


@dataclass
class RunContext:
    spark: SparkSession
    store: TableStore
    config: Config
    run_id: str
    started_at: dt.datetime
    log_format: str = "text"
    out: object = field(default_factory=lambda: sys.stdout)
    pending: list = field(default_factory=list)  # background work (futures) the run waits for at its end
    bookkeeping: PendingRows = field(default_factory=PendingRows)  # ops rows written at the run's end
    # (table, after version, up to version, column) -> its distinct values: tasks reading the same
    # new rows look once (see `RowSelector`); task contexts share this dict
    source_values: dict = field(default_factory=dict)
    # gold: (sources, their versions, relevant, expand_groups) -> the touched groups collected,
    # so gold tables sharing sources and grouping (proposals, proposal events) find them once
    touched_groups: dict = field(default_factory=dict)
    observer: TaskObserver = field(default_factory=TaskObserver)

    @property
    def warehouse(self) -> WarehouseView:
        return WarehouseView(self.store, self.config)

    def log(self, event: str, **fields) -> None:
        """One progress line: human-readable, or a JSON object per line with --log-format json."""
        if self.log_format == "json":
            record = {
                "ts": dt.datetime.now(dt.timezone.utc).isoformat(),
                "run_id": self.run_id,
                "event": event,
            }
            record.update(fields)
            print(json.dumps(record, default=str), file=self.out, flush=True)
            return
        details = "  ".join(f"{k}={v}" for k, v in fields.items() if v not in (None, ""))
        print(f"{event:<10} {details}", file=self.out, flush=True)
