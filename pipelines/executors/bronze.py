"""Land new files of one source into its bronze table, exactly once per file.

Order of work: recover log rows of a commit an earlier run made but did not
log; decide per file (new, unchanged, changed, too large) from the ingestion
log with size/mtime first and a content hash only when needed; read the new
files in one Spark job; append the records in one Delta commit; log the files.
A file that cannot be read (damaged, unreadable, gone, still being written) is
logged with its reason and stops nothing (docs/landing.md).
A few new files (by size, below `small_input_rows` records) are read and written
in small-input mode, as silver and gold do (`pipelines.runtime.spark.small_input_mode`).
"""

from __future__ import annotations

import time

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

from bronze.records import extract_records, literal_path, spark_path_key
from pipelines.core.context import RunContext, TaskResult, WarehouseView
from pipelines.core.table_specs import BronzeTableSpec
from pipelines.landing import ingestion_log as log
from pipelines.landing.discovery import FileScan, LandingFile
from pipelines.landing.source_view import SourceView, look, reads_through_spark
from pipelines.landing.through_spark import exists_through_spark
from pipelines.runtime import faults
from pipelines.runtime.caching import LOCAL_ROWS
from pipelines.runtime.spark import small_input_mode
from pipelines.runtime.sql_expressions import literal
from pipelines.store.collected import CollectedRows

FILES_SCHEMA = StructType(
    [
        StructField("source_file", StringType()),
        StructField("file_hash", StringType()),
        StructField("source_modified_at", TimestampType()),
        StructField("mode", StringType()),
    ]
)
LANDING_BYTES_PER_RECORD = 256
GZIP_RATIO = 10  # JSON records compress about ten to one
INLINE_FILES = 500  # up to this many new files, their findings are a literal map (`_file_texts`)
INVALID_SCHEMA = StructType(
    [
        StructField("source_file", StringType()),
        StructField("line_number", LongType()),
        StructField("raw_base64", StringType()),
    ]
)


def _plan(
    ctx: RunContext, spec: BronzeTableSpec, view: SourceView
) -> tuple[list[FileScan], list[tuple], list[str], set[str]]:
    """Files to ingest, log rows for files set aside, warnings to print, and the keys of the files
    a later run must try again (they could not be read as they were found)."""
    settings = ctx.config.section("bronze")
    max_bytes = settings["max_file_mb"] * 1024 * 1024
    known = view.known
    to_ingest, set_aside, warnings, retried = [], [], [], set()
    view.fetch(
        [
            f
            for f in view.listing.files
            if f.size <= max_bytes and not _ingested_as_it_is(f, known.get(f.key, []))
        ]
    )
    for file in view.listing.files:
        history = known.get(file.key, [])
        ingested = [k for k in history if k.status == log.INGESTED]
        if _ingested_as_it_is(file, history):
            continue
        if file.size > max_bytes:
            if not any(k.status == log.TOO_LARGE and k.size == file.size for k in history):
                set_aside.append(
                    log.entry(
                        spec.source, file, None, log.TOO_LARGE, ctx.run_id, note="raise bronze.max_file_mb"
                    )
                )
                warnings.append(f"{file.path}: {file.size} bytes exceeds bronze.max_file_mb; not ingested")
            continue
        found, not_read = _read_as_found(spec, view, file)
        if not_read:
            retried.add(file.key)
            status, reason = not_read
            if not any(
                k.status == status and (k.size, k.mtime_ms) == (file.size, file.mtime_ms) for k in history
            ):
                set_aside.append(log.entry(spec.source, file, None, status, ctx.run_id, note=reason))
                warnings.append(f"{file.path}: {reason}; not ingested this run")
            continue
        if any(k.file_hash == found.sha256 for k in history if k.status in log.LANDED):
            # touched or copied without its time: logged, so the next run need not hash it again
            set_aside.append(
                log.entry(
                    spec.source, file, found.sha256, log.SAME_CONTENT, ctx.run_id, note="content unchanged"
                )
            )
            continue
        if ingested and settings["on_changed_file"] == "skip":
            if not any(k.status == log.CHANGED_SKIPPED and k.file_hash == found.sha256 for k in history):
                set_aside.append(
                    log.entry(
                        spec.source,
                        file,
                        found.sha256,
                        log.CHANGED_SKIPPED,
                        ctx.run_id,
                        note="content changed",
                    )
                )
                warnings.append(
                    f"{file.path}: content changed since it was ingested; skipped (bronze.on_changed_file)"
                )
            continue
        to_ingest.append(found)
    return to_ingest, set_aside, warnings, retried


def _read_as_found(
    spec: BronzeTableSpec, view: SourceView, file: LandingFile
) -> tuple[FileScan | None, tuple[str, str] | None]:
    """The file's scan, or (log status, reason) when it cannot be read as it was discovered:
    a file that went away, cannot be opened, or is still being written must not stop the run."""
    try:
        found = view.scan(file, spec.record_arrays + spec.record_objects)
        changing = view.changed_since_listing(file)
    except FileNotFoundError:
        return None, (log.VANISHED, "deleted before it could be read")
    except OSError as exc:
        return None, (log.UNREADABLE, f"cannot be read: {exc.strerror or exc}")
    if changing:
        return None, (log.STILL_WRITING, changing)
    return found, None


def _ingested_as_it_is(file: LandingFile, history: list[log.KnownFile]) -> bool:
    """The file was ingested (a damaged one as far as it could be read) and has been seen since
    with the same size and modification time."""
    seen = [k for k in history if k.status in (*log.LANDED, log.SAME_CONTENT)]
    return any(k.status in log.LANDED for k in history) and any(
        k.size == file.size and k.mtime_ms == file.mtime_ms for k in seen
    )


def pending_rows(spec: BronzeTableSpec, warehouse: WarehouseView) -> int:
    """An estimate of the records in the source's files not ingested yet, from their sizes alone
    (no file is opened): what the runner weighs a task by (`pipelines.orchestration.runner`). Records of every
    source are 0.3-0.7 KB of JSON, so `LANDING_BYTES_PER_RECORD` errs towards more records; a
    gzip file counts `GZIP_RATIO` times its size."""
    view = look(warehouse.store, warehouse.config, spec.source)
    return _estimated_records(
        [f for f in view.listing.files if not _ingested_as_it_is(f, view.known.get(f.key, []))]
    )


def _estimated_records(files: list[LandingFile]) -> int:
    """Records in `files` judged by their sizes: what `pending_rows` reports, and what decides
    whether an ingest runs in small-input mode (`pipelines.runtime.spark.small_input_mode`)."""
    size = sum(f.size * (GZIP_RATIO if f.path.endswith(".gz") else 1) for f in files)
    return size // LANDING_BYTES_PER_RECORD


def _file_texts(spark, scans: list[FileScan]) -> DataFrame:
    """One row per file: its whole (decompressed) text with the scan's findings.

    Up to `INLINE_FILES` files, the findings travel in the plan as a literal map from path;
    a join with them as a frame would first run a Spark job to broadcast it, on every ingest
    of a few new files."""
    texts = spark.read.text([literal_path(s.file.path) for s in scans], wholetext=True).select(
        spark_path_key(F.col("_metadata.file_path")).alias("source_file"), F.col("value").alias("content")
    )
    if len(scans) > INLINE_FILES:
        meta = spark.createDataFrame(
            [(s.file.path, s.sha256, s.file.modified_at, s.mode) for s in scans], FILES_SCHEMA
        )
        return texts.join(F.broadcast(meta), "source_file")
    findings = ", ".join(
        f"{literal(s.file.path)}, named_struct('file_hash', {literal(s.sha256)}, "
        f"'source_modified_at', timestamp_millis({s.file.mtime_ms}L), 'mode', {literal(s.mode)})"
        for s in scans
    )
    found = F.expr(f"map({findings})")[F.col("source_file")]
    # the inner join kept only rows of a known file: so does this filter (a read file is one)
    return (
        texts.select("source_file", "content", found.alias("_found"))
        .where(F.col("_found").isNotNull())
        .select("source_file", "content", *(F.col(f"_found.{c}").alias(c) for c in FILES_SCHEMA.names[1:]))
    )


def _salvaged_texts(spark, scans: list[FileScan]) -> DataFrame:
    """`_file_texts` of damaged files: the text they gave before the damage, from the scan
    (Spark's reader fails on the whole file)."""
    schema = StructType([*FILES_SCHEMA.fields, StructField("content", StringType())])
    rows = [
        (s.file.path, s.sha256, s.file.modified_at, s.mode, s.salvaged.decode("utf-8", errors="replace"))
        for s in scans
    ]
    return spark.createDataFrame(rows, schema).select("source_file", "content", *FILES_SCHEMA.names[1:])


DAMAGED_REASON = "damaged file"


def _marked_damaged(records: DataFrame, damaged: list[FileScan]) -> DataFrame:
    """Every record of a damaged file is corrupt: read before the damage, it is kept, but the
    file's check (the gzip trailer) never vouched for it, so it goes to the quarantine, not silver.
    The file's log row says what is wrong; the good file that replaces it lands in full."""
    if not damaged:
        return records
    from_damaged = F.col("source_file").isin([s.file.path for s in damaged])
    return records.withColumn("is_corrupt", F.col("is_corrupt") | from_damaged).withColumn(
        "corrupt_reason", F.when(from_damaged, F.lit(DAMAGED_REASON)).otherwise(F.col("corrupt_reason"))
    )


def _records_per_file(ctx: RunContext, table: str, before: int | None) -> dict[str, tuple[int, int]]:
    """(records, corrupt) per landing file, read back from the commit just made: two columns of
    fresh Parquet cost less than caching every record to count it before the write."""
    return ctx.store.tally_added_since(table, before, "source_file", "is_corrupt")


def run(spec: BronzeTableSpec, ctx: RunContext) -> TaskResult:
    folder_name = ctx.config.sources[spec.source]["folder"]
    folder = ctx.config.landing / folder_name
    if reads_through_spark(ctx.config, ctx.spark):
        if not exists_through_spark(ctx.spark, ctx.config.landing):
            raise FileNotFoundError(f"landing folder {ctx.config.landing} does not exist on the Spark server")
    elif not ctx.config.landing.is_dir():
        raise FileNotFoundError(f"landing folder {ctx.config.landing} does not exist")
    recovered = log.recover(ctx.spark, ctx.store, spec.source, spec.table, folder)
    started = time.monotonic()
    view = look(ctx.store, ctx.config, spec.source)
    scans, set_aside, warnings, retried = _plan(ctx, spec, view)
    found = _found(view, len(scans), time.monotonic() - started)
    for warning in warnings:
        ctx.log("warning", table=spec.table, message=warning)
    log.append(ctx.spark, ctx.store, set_aside)
    if not scans:
        view.record(ctx.store, retried, ctx.run_id)
        note = f"recovered {recovered} file log rows; " if recovered else ""
        return TaskResult(status="SKIPPED", message=note + found)

    limit = ctx.config.profile.get("small_input_rows")
    with small_input_mode(ctx.spark, _estimated_records([s.file for s in scans]), limit):
        landed, per_file, version = _land_what_is_still_there(spec, ctx, view, scans)
    retried |= {s.file.key for s in scans} - {s.file.key for s in landed}
    scans = landed
    rows = [
        log.entry(
            spec.source,
            s.file,
            s.sha256,
            log.DAMAGED if s.damage else log.INGESTED,
            ctx.run_id,
            *per_file.get(s.file.path, (0, 0)),
            version,
            note=s.damage and f"{s.damage}; the records before the damage are kept, marked corrupt",
        )
        for s in scans
    ]
    for s in scans:
        if s.damage:
            ctx.log(
                "warning",
                table=spec.table,
                message=f"{s.file.path}: {s.damage}; ingested as far as it could be read",
            )
    log.append(ctx.spark, ctx.store, rows)
    view.record(ctx.store, retried, ctx.run_id)
    total = sum(n for n, _ in per_file.values())
    corrupt = sum(c or 0 for _, c in per_file.values())
    return TaskResult(
        source_rows=total,
        rows_in=total,
        rows_out=total,
        files=len(scans),
        message=f"{corrupt} corrupt; {found}",
    )


def _found(view: SourceView, new: int, seconds: float) -> str:
    """What finding the new files took, for the task's line: how many folders were listed."""
    listing = view.listing
    return (
        f"{new} new files found in {seconds:.2f} s ({len(listing.listed)} folders listed, "
        f"{listing.unchanged} unchanged)"
    )


def _land_what_is_still_there(
    spec: BronzeTableSpec, ctx: RunContext, view: SourceView, scans: list[FileScan]
) -> tuple[list[FileScan], dict[str, tuple[int, int]], int | None]:
    """`_land`, and when it fails because files went away or changed after their scan (before
    Spark read them), those files logged and the others landed: a failed attempt commits
    nothing, so the second one lands each record once. Returns the scans landed as well."""
    before = ctx.store.version(spec.table)
    try:
        return scans, *_land(spec, ctx, scans)
    except Exception:
        moved = _not_as_scanned(view, scans)
        if not moved or ctx.store.version(spec.table) != before:
            raise
    set_aside = []
    for found in scans:
        if found.file.path in moved:
            status, reason = moved[found.file.path]
            set_aside.append(log.entry(spec.source, found.file, None, status, ctx.run_id, note=reason))
            ctx.log(
                "warning", table=spec.table, message=f"{found.file.path}: {reason}; not ingested this run"
            )
    log.append(ctx.spark, ctx.store, set_aside)
    rest = [s for s in scans if s.file.path not in moved]
    return (rest, *_land(spec, ctx, rest)) if rest else ([], {}, before)


def _not_as_scanned(view: SourceView, scans: list[FileScan]) -> dict[str, tuple[str, str]]:
    """(log status, reason) by path of the scanned files that are gone or changed since."""
    moved = {}
    for s in scans:
        try:
            changing = view.changed_since_listing(s.file)
        except FileNotFoundError:
            moved[s.file.path] = (log.VANISHED, "deleted before Spark could read it")
            continue
        except OSError as exc:
            moved[s.file.path] = (log.UNREADABLE, f"cannot be read: {exc.strerror or exc}")
            continue
        if changing:
            moved[s.file.path] = (log.STILL_WRITING, changing)
    return moved


def _land(
    spec: BronzeTableSpec, ctx: RunContext, scans: list[FileScan]
) -> tuple[dict[str, tuple[int, int]], int]:
    """Read `scans` in one Spark job and append their records in one commit (a few are collected
    and committed as Arrow, with no Spark write); returns (records, corrupt) per file and the
    table version written."""
    spark = ctx.spark
    invalid_lines = [(s.file.path, line, b64) for s in scans for line, b64 in s.invalid_utf8_lines.items()]
    invalid = spark.createDataFrame(invalid_lines, INVALID_SCHEMA) if invalid_lines else None
    damaged = [s for s in scans if s.damage]
    line_scans = [s for s in scans if s.one_record_per_line and not s.damage]
    other_scans = [s for s in scans if not s.one_record_per_line and not s.damage]
    files = [_file_texts(spark, other_scans)] if other_scans else []
    files += [_salvaged_texts(spark, damaged)] if damaged else []
    records = extract_records(
        spec,
        invalid,
        files=files[0].unionByName(files[1]) if len(files) == 2 else (files[0] if files else None),
        line_files=_file_texts(spark, line_scans) if line_scans else None,
    )
    records = _marked_damaged(records, damaged)
    records = records.withColumn("ingested_at", F.lit(ctx.started_at).cast("timestamp")).withColumn(
        "ingest_run_id", F.lit(ctx.run_id)
    )
    before = ctx.store.version(spec.table)
    if _estimated_records([s.file for s in scans]) <= LOCAL_ROWS:  # a few: read once, written from the driver
        records = CollectedRows(records.toArrow(), records.schema)
    ctx.store.append(records, spec.table, metadata={"run_id": ctx.run_id, "files": len(scans)})
    per_file = _records_per_file(ctx, spec.table, before)
    faults.checkpoint("bronze_after_commit", spec.table)
    return per_file, ctx.store.version(spec.table)
