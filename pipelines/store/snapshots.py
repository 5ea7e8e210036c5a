"""Latest-version delta-rs handles, kept per table and brought forward instead of reloaded.

Why: opening a `DeltaTable` replays its log from the last checkpoint, so a table
committed to once per task (`ops.runs`, `ops.dq_results`) costs 20-50 ms to open
and more every run until the next checkpoint; a run opens tables several times a
task. `update_incremental()` reads only the commits made since, ~1-3 ms.

A kept handle is trusted only while the commit file of the version it holds is
the same file (inode, size, modification time): a table deleted and created again
at that path, or a log rewritten under it, is opened afresh instead. Handles are
kept per thread, because a handle moves forward in place and parallel tasks
(`run.parallel_tasks`) must not move each other's snapshot mid-task.
"""

from __future__ import annotations

import os
import threading

from deltalake import DeltaTable
from deltalake.exceptions import TableNotFoundError


def _commit_identity(path: str, version: int) -> tuple[int, int, int] | None:
    """What identifies the commit file of `version` on disk; None when it cannot be read."""
    try:
        stat = os.stat(os.path.join(path, "_delta_log", f"{version:020d}.json"))
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


class LatestSnapshots:
    """`latest(path)`: the table's current version as a DeltaTable, or None when there is none."""

    def __init__(self) -> None:
        self._local = threading.local()

    def _kept(self) -> dict[str, tuple[DeltaTable, int, tuple[int, int, int]]]:
        if not hasattr(self._local, "handles"):
            self._local.handles = {}
        return self._local.handles

    def latest(self, path: str) -> DeltaTable | None:
        kept = self._kept()
        entry = kept.pop(path, None)
        if not DeltaTable.is_deltatable(path):
            return None
        if entry is not None and _commit_identity(path, entry[1]) == entry[2]:
            table = entry[0]  # commits made through the handle itself may have moved it on already
            table.update_incremental()
        else:
            try:
                table = DeltaTable(path)
            except TableNotFoundError:
                return None
        version = table.version()
        identity = _commit_identity(path, version)
        if identity is not None:  # a log it cannot stat (not a local path) is never kept
            kept[path] = (table, version, identity)
        return table
