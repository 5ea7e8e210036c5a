"""Where the GX validation result documents live, and their retention.

Every run writes one document per validated table (`ops/_gx_validations/<table>/<run_id>.json`,
~12 KB). A schedule of one run every 15 minutes leaves ~2,000 of them a day, which nothing
reads once `ops.dq_results` holds the same counts; `lakehouse vacuum` deletes those older than
`maintenance.validation_document_days`, keeping each table's newest whatever its age (a table
with no new rows for months still shows how it last validated).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

FOLDER = Path("ops") / "_gx_validations"
LABEL = f"validation documents ({FOLDER.as_posix()})"
DAY_SECONDS = 86_400


def table_folder(warehouse: str | os.PathLike, table: str) -> Path:
    """The folder holding `table`'s validation documents."""
    return Path(warehouse) / FOLDER / table


def expired(warehouse: str | os.PathLike, days: int, now: float | None = None) -> list[Path]:
    """Documents last written more than `days` ago, except each table's newest; none when `days` is 0."""
    root = Path(warehouse) / FOLDER
    if not days or not root.is_dir():
        return []
    cutoff = (time.time() if now is None else now) - days * DAY_SECONDS
    old: list[Path] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        documents = sorted(
            (entry.stat().st_mtime, entry.name, Path(entry.path))
            for entry in os.scandir(folder)
            if entry.is_file() and entry.name.endswith(".json")
        )
        old += [path for written, _, path in documents[:-1] if written < cutoff]
    return old


def remove_expired(warehouse: str | os.PathLike, days: int, dry_run: bool = False) -> list[Path]:
    """Delete (unless `dry_run`) and return the documents `expired` names. Call under the warehouse lock."""
    old = expired(warehouse, days)
    if not dry_run:
        for path in old:
            path.unlink(missing_ok=True)
    return old
