"""Upkeep of the warehouse: the `ops` tables every run writes, and compaction of small files."""

from pipelines.ops.bookkeeping import DQ_RESULTS, RUNS, record_dq, record_run
from pipelines.ops.compaction import CompactionPolicy, compact_after_run, compact_tables

__all__ = [
    "DQ_RESULTS",
    "RUNS",
    "CompactionPolicy",
    "compact_after_run",
    "compact_tables",
    "record_dq",
    "record_run",
]
