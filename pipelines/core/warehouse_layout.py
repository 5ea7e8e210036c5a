"""Where a table lives: `<warehouse>/<layer>/<table>`, named `<layer>.<table>`.

Kept apart from the table store so that readers without Spark (the DuckDB query engine) list a
warehouse the same way without importing it.
"""

from __future__ import annotations

import os
from pathlib import Path

LAYERS = ("bronze", "silver", "gold", "ops")


def folder_tables(warehouse: str | os.PathLike) -> list[str]:
    """Every Delta table folder `<warehouse>/<layer>/<table>`, as `<layer>.<table>` (no engine
    needed: readers other than Spark list the warehouse the same way)."""
    found = []
    for layer in LAYERS:
        folder = Path(warehouse) / layer
        if folder.is_dir():
            for child in sorted(folder.iterdir()):
                if (child / "_delta_log").is_dir():
                    found.append(f"{layer}.{child.name}")
    return found
