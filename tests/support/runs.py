"""Reliability tests (crashes, concurrency, bad input, drift, config, determinism) and their helpers.

The helpers compare warehouses the way the contract states equality: the same rows in every
bronze/silver/gold table, ignoring only what a run stamps (ids and times of the run itself).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pyspark.sql import DataFrame

from pipelines.core.config import PROJECT_ROOT
from pipelines.runtime.faults import ENV as FAULT_ENV
from pipelines.store import TableStore
from tests.support.tables import comparable

SAMPLES = PROJECT_ROOT / "samples" / "landing"
SOURCES = ("datahub_ece", "datahub_audit", "openmetadata", "dataworks")


def data_tables(store: TableStore) -> list[str]:
    """The bronze, silver and gold tables of a warehouse (ops tables record runs, not data)."""
    return [t for t in store.tables() if not t.startswith("ops.")]


def snapshot(store: TableStore) -> dict[str, list[str]]:
    """table -> its comparable rows (run-specific columns left out), sorted, for every data table."""
    return {
        table: sorted(r.row for r in comparable(store.read(table)).collect()) for table in data_tables(store)
    }


def duplicate_keys(df: DataFrame, *keys: str) -> int:
    """Rows beyond the first for each key (0 when the key is unique)."""
    return df.count() - df.select(*keys).distinct().count()


def parquet_files(folder: str | Path) -> set[str]:
    """Every data .parquet file below `folder` (staging and temporary folders included, logs not)."""
    return {str(p.resolve()) for p in Path(folder).rglob("*.parquet") if "_delta_log" not in p.parts}


# How long a `lakehouse` process may take: a full run through Spark Connect took over 20 minutes
# on a 2-core machine three times slower than usual, another test worker beside it. A hung process
# is still stopped; the suite's own limit is CI's.
PROCESS_TIMEOUT_SECONDS = 3600


def lakehouse(
    *args: str, fault: str | None = None, timeout: float = PROCESS_TIMEOUT_SECONDS
) -> subprocess.CompletedProcess[str]:
    """`lakehouse ARGS` in a fresh process (its own Spark), optionally with a fault armed."""
    env = {k: v for k, v in os.environ.items() if k != FAULT_ENV}
    if fault:
        env[FAULT_ENV] = fault
    return subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
