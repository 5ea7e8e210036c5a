"""Where a table lives: `<warehouse>/<layer>/<table>`, named `<layer>.<table>`.

Kept apart from the table store so that readers without Spark (the DuckDB query engine) list a
warehouse the same way without importing it.
"""

from __future__ import annotations

import os
from pathlib import Path

LAYERS = ("bronze", "silver", "gold", "ops")


def holds_delta_table(folder: str | os.PathLike) -> bool:
    """Whether `folder` is a Delta table: its `_delta_log` holds a commit or a checkpoint (a write
    killed before its first commit leaves the folder, maybe an empty log, and no table)."""
    log = Path(folder) / "_delta_log"
    if not log.is_dir():
        return False
    return any(p.suffix == ".json" and p.stem.isdigit() or ".checkpoint" in p.name for p in log.iterdir())


def folder_tables(warehouse: str | os.PathLike) -> list[str]:
    """Every Delta table folder `<warehouse>/<layer>/<table>`, as `<layer>.<table>` (no engine
    needed: readers other than Spark list the warehouse the same way)."""
    found = []
    for layer in LAYERS:
        folder = Path(warehouse) / layer
        if folder.is_dir():
            for child in sorted(folder.iterdir()):
                if holds_delta_table(child):
                    found.append(f"{layer}.{child.name}")
    return found
