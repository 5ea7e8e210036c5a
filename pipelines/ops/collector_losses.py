"""`ops.collector_losses`: what the collectors refused or could not land, from their loss log.

The receiver and the pulls have no Spark session: they count what they refuse or fail to collect
in immutable files under `<landing>/_collector_log/` (`pipelines.collectors.loss_log`). A run that
reads landing loads the files it has not loaded yet into this table, one row per (collector,
source, status, reason) and file, so a steward sees a sender's failures in the warehouse and the
data-quality report rather than in a server log.

Each load merges the entries of the files waiting, keyed by file and line (`log_file`,
`entry`), then moves the files into `_collector_log/loaded/`. Tasks that read landing may run
side by side (the Databricks job's lanes) and a run may stop between the merge and the move: a
file loaded twice matches its own rows and adds none, so no entry is counted twice and none is
skipped, and a load costs what is waiting, never what is stored.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

from pipelines.collectors.loss_log import LOG_FOLDER
from pipelines.core.context import RunContext

TABLE = "ops.collector_losses"
LOADED_FOLDER = "loaded"
KEYS = ["log_file", "entry"]

SCHEMA = StructType(
    [
        StructField("collector", StringType(), False),
        StructField("source", StringType()),
        StructField("status", StringType(), False),
        StructField("reason", StringType()),
        StructField("count", LongType(), False),
        StructField("first_at", TimestampType()),
        StructField("last_at", TimestampType()),
        StructField("host", StringType()),
        StructField("log_file", StringType(), False),
        StructField("entry", LongType(), False),
        StructField("run_id", StringType(), False),
        StructField("loaded_at", TimestampType(), False),
    ]
)


def _moment(text: object) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(str(text))
    except ValueError:
        return None


def _rows(path: Path, run_id: str, now: dt.datetime) -> list[tuple]:
    """The file's entries as rows; a line that is no entry is a row saying so, not a silent skip."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            count = int(entry["count"])
            status = str(entry["status"])
            collector = str(entry["collector"])
        except (ValueError, KeyError, TypeError):
            rows.append(
                (
                    "unknown",
                    None,
                    "unreadable",
                    f"line {number} is no loss entry",
                    1,
                    None,
                    None,
                    None,
                    path.name,
                    number,
                    run_id,
                    now,
                )
            )
            continue
        rows.append(
            (
                collector,
                entry.get("source"),
                status,
                entry.get("reason"),
                count,
                _moment(entry.get("first_at")),
                _moment(entry.get("last_at")),
                entry.get("host"),
                path.name,
                number,
                run_id,
                now,
            )
        )
    return rows


def _archive(folder: Path, names: list[str]) -> None:
    target = folder / LOADED_FOLDER
    target.mkdir(exist_ok=True)
    for name in names:
        try:
            (folder / name).replace(target / name)
        except FileNotFoundError:  # moved by a load beside this one
            pass


def load_collector_losses(ctx: RunContext) -> int:
    """Load the loss log files not loaded yet; returns the entries loaded. A load that fails is
    said in the run's log and leaves the files for the next run: the run's own data is committed."""
    try:
        return _load(ctx)
    except Exception as exc:  # bookkeeping of the collectors must not fail a run that succeeded
        first_line = (str(exc).splitlines() or [""])[0][:300]
        ctx.log("collector_losses", error=f"{type(exc).__name__}: {first_line}")
        return 0


def _waiting(landing: Path) -> list[str]:
    """The names of the loss log files in `landing` not loaded yet, in order."""
    folder = landing / LOG_FOLDER
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.glob("*.jsonl") if not p.name.startswith(("_", ".")))


def losses_waiting(config) -> bool:
    """Whether loss log files wait to be loaded (a run that reads landing loads them)."""
    return bool(_waiting(config.landing))


def _load(ctx: RunContext) -> int:
    folder = ctx.config.landing / LOG_FOLDER
    waiting = _waiting(ctx.config.landing)
    if not waiting:
        return 0
    now = dt.datetime.now(dt.timezone.utc)
    rows = [row for name in waiting for row in _rows(folder / name, ctx.run_id, now)]
    if rows:
        frame = ctx.spark.createDataFrame(rows, SCHEMA)
        if not ctx.store.exists(TABLE):
            ctx.store.commit_no_rows(frame, TABLE)
        ctx.store.merge(frame, TABLE, keys=KEYS, rows=len(rows))
    _archive(folder, waiting)
    ctx.log(
        "collector_losses", files=len(waiting), entries=len(rows), refused=sum(r[4] for r in rows) or None
    )
    return len(rows)
