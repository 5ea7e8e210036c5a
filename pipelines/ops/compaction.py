"""Keep tables from filling up with small files: compact the ones a run wrote, once enough gathered.

Why: every run appends at least one file to each table it writes (a 15-minute
schedule: ~100 a day a table, and `ops.runs` gets one per task), and every later read
opens each of them, so a scan of a table made of a thousand small files takes several
times as long as of ten. Incremental work would grow with the number of runs so far
instead of with the new data.

Policy (`maintenance` in conf/lakehouse.yaml): after a run, each table it wrote whose
small files (under `compact_target_file_mb`) reach `compact_min_files` is compacted
into files of about that size. Compaction changes no data (`dataChange: false`), so no
incremental reader sees new rows. Each run since the last compaction makes the next one a
little slower and compacting costs a few seconds, so compacting every ten to twenty runs
(20 small files: a table gains one or two a run) costs least overall (`python -m benchmarks.schedule` measures it). A 32 MB target bounds what a
compaction rewrites: files already that large are left alone, so the cost follows the new
small files, not the table's history. `lakehouse optimize` compacts on demand with the
same store call.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pipelines.core.config import Config
from pipelines.store import TableStore

MB = 1024 * 1024


@dataclass(frozen=True)
class CompactionPolicy:
    """`min_files`: small files a table may hold before it is compacted (0: never);
    `target_bytes`: the size of a compacted file, and below which a file counts as small."""

    min_files: int
    target_bytes: int

    @classmethod
    def from_config(cls, config: Config) -> CompactionPolicy:
        section = config.section("maintenance")
        return cls(int(section["compact_min_files"]), int(section["compact_target_file_mb"] * MB))


@dataclass(frozen=True)
class TableCompaction:
    """One table's compaction, as logged and returned."""

    table: str
    small_files: int
    files_removed: int
    files_added: int
    seconds: float


def fragmented_tables(
    store: TableStore, tables: Iterable[str], target_bytes: int, min_files: int = 2
) -> dict[str, int]:
    """{table: its small files} for each existing table of `tables` holding at least `min_files`
    of them (never fewer than two: one small file has nothing to merge with)."""
    if not store.compacts:
        return {}
    found = {}
    for table in dict.fromkeys(tables):
        if not store.exists(table):
            continue
        written = store.small_files_written(table, target_bytes)
        if written is not None and written < max(min_files, 2):
            continue  # the history shows too few new small files: no listing of the table's files
        small = store.compactable_files(table, target_bytes)
        if small >= max(min_files, 2):
            found[table] = small
    return found


def compact_tables(
    store: TableStore,
    tables: Iterable[str],
    target_bytes: int,
    min_files: int = 2,
    log: Callable[..., None] | None = None,
) -> list[TableCompaction]:
    """Compact each of `fragmented_tables(...)`; returns what was compacted."""
    done = []
    for table, small in fragmented_tables(store, tables, target_bytes, min_files).items():
        started = time.monotonic()
        result = store.compact(table, target_bytes)
        compaction = TableCompaction(
            table, small, result.files_removed, result.files_added, time.monotonic() - started
        )
        if log is not None:
            log(
                "compacted",
                table=table,
                files_removed=compaction.files_removed,
                files_added=compaction.files_added,
                seconds=f"{compaction.seconds:.1f}",
            )
        done.append(compaction)
    return done


def compact_after_run(
    store: TableStore, config: Config, tables: Iterable[str], log: Callable[..., None]
) -> list[TableCompaction]:
    """The run's automatic compaction of the tables it wrote (`maintenance.compact_min_files`)."""
    policy = CompactionPolicy.from_config(config)
    if policy.min_files <= 0:
        return []
    return compact_tables(store, tables, policy.target_bytes, policy.min_files, log)
