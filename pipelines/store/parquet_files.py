"""Turn the Parquet files Spark wrote into Delta `add` actions (path, partition values, stats).

delta-rs commits files it did not write only if we describe them; the stats
JSON (numRecords, minValues, maxValues, nullCount) comes from the Parquet
footers so readers can skip files. Only top-level primitive columns get
min/max; strings longer than 32 characters are left out rather than truncated
(a truncated max would be wrong for data skipping), and so are decimals (a JSON
number would round them).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import shutil
import time
import uuid
from pathlib import Path
from urllib.parse import quote, unquote

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from deltalake.transaction import AddAction

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
MAX_STRING_STAT = 32


def _stat_value(value):
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        return value.astimezone(dt.timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (bytes, decimal.Decimal)):  # no JSON form that keeps a decimal's precision
        return None
    if isinstance(value, str) and len(value) > MAX_STRING_STAT:
        return None
    if isinstance(value, float) and value != value:  # NaN makes min/max meaningless
        return None
    return value


def parquet_stats(file_path: str, partition_columns: set[str]) -> tuple[int, str]:
    """(num_rows, Delta stats JSON) read from one Parquet footer."""
    meta = pq.read_metadata(file_path)
    num_rows = meta.num_rows
    mins: dict = {}
    maxs: dict = {}
    nulls: dict = {}
    schema = meta.schema.to_arrow_schema()
    top_level = {f.name for f in schema if not (f.type.num_fields or str(f.type).startswith(("list", "map")))}
    for rg in range(meta.num_row_groups):
        group = meta.row_group(rg)
        for ci in range(group.num_columns):
            col = group.column(ci)
            name = col.path_in_schema
            if name not in top_level or name in partition_columns:
                continue
            stats = col.statistics
            if stats is None:
                mins[name] = maxs[name] = None
                continue
            if stats.has_null_count:
                nulls[name] = nulls.get(name, 0) + stats.null_count
            if not stats.has_min_max:
                continue
            lo, hi = _stat_value(stats.min), _stat_value(stats.max)
            if lo is None or hi is None or isinstance(stats.min, bool):
                mins[name] = maxs[name] = None
                continue
            if name not in mins:
                mins[name], maxs[name] = lo, hi
            elif mins[name] is not None:
                mins[name], maxs[name] = min(mins[name], lo), max(maxs[name], hi)
    stats_json = {
        "numRecords": num_rows,
        "minValues": {k: v for k, v in mins.items() if v is not None},
        "maxValues": {k: v for k, v in maxs.items() if v is not None},
        "nullCount": nulls,
    }
    return num_rows, json.dumps(stats_json, separators=(",", ":"))


def partition_values(relative_path: str, partition_by: list[str]) -> dict[str, str | None]:
    """Partition values from Spark's `col=value/` directories (unescaped, HIVE null -> None)."""
    values: dict[str, str | None] = {}
    for part in Path(relative_path).parts[:-1]:
        if "=" in part:
            key, raw = part.split("=", 1)
            value = unquote(raw)
            values[key] = None if value == HIVE_NULL else value
    return {col: values.get(col) for col in partition_by}


STAGING = "_staging"  # <table>/_staging/<uuid>: Spark writes here before files are published
TEMPORARY = "_tmp"  # <warehouse>/_tmp/<uuid>: a merge's source, deleted when the merge ends


def staging_dir(table_path: str) -> str:
    """A fresh folder under the table for one write; never referenced by the Delta log."""
    return os.path.join(table_path, STAGING, uuid.uuid4().hex)


def write_arrow_file(rows: pa.Table, folder: str) -> None:
    """Write `rows` as one Parquet file in `folder` (created), as a Spark write would leave it for
    `publish_staged_files` or a merge: snappy, with statistics, no Arrow schema kept (Spark and
    delta-rs read the Delta schema)."""
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, f"part-00000-{uuid.uuid4()}.parquet")
    pq.write_table(rows, target, compression="snappy", store_schema=False)


def write_arrow_partitions(rows: pa.Table, folder: str, partition_by: list[str]) -> None:
    """Write `rows` as one Parquet file per partition in Hive-style folders of `folder`
    (`event_month=2024-05-01/...`), the partition columns in the folder names only, as Spark's
    partitioned write leaves them for `publish_staged_files`."""
    os.makedirs(folder, exist_ok=True)
    keys = rows.select(partition_by).group_by(partition_by).aggregate([]).to_pylist()
    for key in keys:
        mask = None
        for column, value in key.items():
            data = rows.column(column)
            term = pc.is_null(data) if value is None else pc.equal(data, pa.scalar(value, data.type))
            mask = term if mask is None else pc.and_(mask, term)
        part = rows.filter(mask).drop_columns(partition_by)
        parts = [f"{column}={_partition_folder_value(value)}" for column, value in key.items()]
        write_arrow_file(part, os.path.join(folder, *parts))


def _partition_folder_value(value) -> str:
    """A partition value in a Hive folder name, as Spark writes it (null as Hive's default)."""
    if value is None:
        return HIVE_NULL
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.date):
        return value.isoformat()
    return quote(str(value), safe="")


def temporary_dir(table_path: str) -> str:
    """A fresh folder beside the layers (`<warehouse>/_tmp/<uuid>`) for a write's intermediate files."""
    return os.path.join(os.path.dirname(os.path.dirname(table_path)), TEMPORARY, uuid.uuid4().hex)


def _last_written(path: str) -> float:
    """Newest modification time of `path` or anything below it (a live write keeps touching it)."""
    newest = os.path.getmtime(path)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            try:
                newest = max(newest, os.path.getmtime(os.path.join(root, name)))
            except FileNotFoundError:  # removed while we looked
                continue
    return newest


def remove_stale(folder: str, retention_hours: float, dry_run: bool) -> list[str]:
    """Delete the entries of `folder` nothing wrote to for `retention_hours`; returns their paths.

    For the per-write folders (`_staging/<uuid>`, `_tmp/<uuid>`) a killed process leaves behind.
    Callers hold the warehouse lock, so no live write is among them whatever the retention.
    """
    if not os.path.isdir(folder):
        return []
    cutoff = time.time() - retention_hours * 3600
    removed = []
    for name in sorted(os.listdir(folder)):
        entry = os.path.join(folder, name)
        if _last_written(entry) <= cutoff:
            removed.append(entry)
            if not dry_run:
                if os.path.isdir(entry):
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    os.remove(entry)
    return removed


def publish_staged_files(staging: str, table_path: str, partition_by: list[str]) -> list[AddAction]:
    """Move the Parquet files of a finished Spark write into the table and describe them.

    Empty files are dropped. The staging folder is removed afterwards; if the
    process dies before the Delta commit, the moved files stay unreferenced and
    `vacuum` removes them.
    """
    actions: list[AddAction] = []
    for root, _dirs, files in os.walk(staging):
        for name in sorted(files):
            if not name.endswith(".parquet"):
                continue
            source = os.path.join(root, name)
            relative = os.path.relpath(source, staging)
            num_rows, stats = parquet_stats(source, set(partition_by))
            if num_rows == 0:
                continue
            target = os.path.join(table_path, relative)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.replace(source, target)
            info = os.stat(target)
            actions.append(
                AddAction(
                    path=Path(relative).as_posix(),
                    size=info.st_size,
                    partition_values=partition_values(relative, partition_by),
                    modification_time=int(info.st_mtime * 1000),
                    data_change=True,
                    stats=stats,
                )
            )
    shutil.rmtree(staging, ignore_errors=True)
    return actions
