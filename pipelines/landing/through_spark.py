"""A landing folder the driver's Python cannot see, read through Spark.

Why: a run driven from a laptop over Databricks Connect (or any remote Spark Connect server)
has its Python on the laptop, while the landing is a Unity Catalog volume the server sees
(`/Volumes/...`). Spark's `binaryFile` source lists the folder on the server (skipping `.` and
`_` names as Spark does) and fetches the bytes of the files bronze has to inspect, so bronze
works the same from either side. The server lists every file each time: it keeps no folder
times, so a run from afar pays for the landing's files, which a run on the cluster does not
(`pipelines.landing.listing`).
"""

from __future__ import annotations

import os
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from bronze.records import literal_path, spark_path_key
from pipelines.landing.discovery import LandingFile
from pipelines.landing.listing import Listing


def _relative_key(path: str, folder: str) -> str:
    return os.path.relpath(path, folder).replace(os.sep, "/")


def _missing(exc: Exception) -> bool:
    return "PATH_NOT_FOUND" in str(exc) or "Path does not exist" in str(exc)


def exists_through_spark(spark: SparkSession, folder: Path) -> bool:
    """Whether the Spark server sees `folder` (Spark lists it lazily: the plan is analysed)."""
    try:
        analysed = spark.read.format("binaryFile").load(str(folder).rstrip("/")).select("path").schema
    except Exception as exc:
        if _missing(exc):
            return False
        raise
    return analysed is not None


def list_through_spark(spark: SparkSession, folder: Path) -> Listing:
    """Every file below `folder` as the Spark server sees it, sorted by key."""
    root = str(folder).rstrip("/")
    try:
        found = (
            spark.read.format("binaryFile")
            .option("recursiveFileLookup", "true")
            .load(root)
            .select(
                spark_path_key(F.col("path")).alias("path"),
                F.col("length"),
                F.unix_millis(F.col("modificationTime")).alias("mtime_ms"),
            )
            .collect()
        )
    except Exception as exc:  # a source folder nothing was landed in yet
        if _missing(exc):
            return Listing()
        raise
    files = [
        LandingFile(r["path"], r["length"], r["mtime_ms"], _relative_key(r["path"], root)) for r in found
    ]
    files = [f for f in files if not any(part.startswith((".", "_")) for part in f.key.split("/"))]
    return Listing(files=sorted(files, key=lambda f: f.key))


def fetch_through_spark(spark: SparkSession, files: list[LandingFile]) -> dict[str, bytes]:
    """The stored bytes of `files`, by path, read by the Spark server."""
    if not files:
        return {}
    rows = (
        spark.read.format("binaryFile")
        .load([literal_path(f.path) for f in files])
        .select(spark_path_key(F.col("path")).alias("path"), "content")
        .collect()
    )
    return {r["path"]: bytes(r["content"]) for r in rows}
