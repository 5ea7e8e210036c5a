"""Type the new rows of a silver table's source, gate them, quarantine the bad, append the rest.

Incremental and idempotent: the source version processed is stored in the
silver commit itself (`source_version` in the commit metadata), so the data
and the watermark move together; re-running with nothing new does nothing.
The quarantine only takes appends (tasks running side by side, in other processes
too, append to it without conflicting), of rows whose key it does not hold yet:
a run that dies after quarantining and before the silver commit does not
quarantine twice when it is re-run.

A table typed under another `revision` than its spec's (or whose silver source was typed
again since, `replacement`) is typed again from its whole source and replaced in one commit
instead: the next ordinary run corrects what an older release typed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType

from pipelines.core.context import RunContext, TaskResult, WarehouseView
from pipelines.core.table_layout import dates_bounds, with_layout_columns
from pipelines.core.table_specs import ERRORS_COLUMN, SilverTableSpec
from pipelines.executors.replacement import REPLACED, REVISION, replaced_since
from pipelines.ops.bookkeeping import record_dq
from pipelines.quality import (
    FAILED_DROP,
    FAILED_FAIL,
    FAILED_WARN,
    BatchMeasure,
    Outcome,
    QualityGateError,
    Suite,
    breaches,
    checked_rows,
    flag_rows,
    gate_message,
    load_suite,
    measure_batch,
    measure_uniqueness,
    no_rows_outcomes,
    no_rows_uniqueness,
    rule_outcomes,
    rule_result_names,
    rule_results,
    suites_dir,
    uniqueness_outcomes,
)
from pipelines.runtime import faults
from pipelines.runtime.caching import LOCAL_ROWS, keep_cached, release_cached
from pipelines.runtime.spark import filters_stay_put, small_input_mode
from pipelines.store.collected import CollectedRows
from pipelines.store.pruning import AtLeast, In

QUARANTINE = "silver.quarantine"
WATERMARK = "source_version"
HELPER_COLUMNS = (ERRORS_COLUMN, FAILED_DROP, FAILED_WARN, FAILED_FAIL, "_bad", "_fallback_time")


def quarantine_columns(rows: DataFrame, table: str, ctx: RunContext) -> dict[str, Column]:
    """The columns of silver.quarantine for `rows` (typed rows with their lineage and failed
    rules), by name: what failed, with the raw record to replay or inspect."""
    event_id = F.col("event_id") if "event_id" in rows.columns else F.lit(None).cast("string")
    identity = F.concat_ws(
        "|",
        F.lit(table),
        "source_file",
        F.col("record_index").cast("string"),
        F.coalesce(event_id, F.lit("")),
    )
    return {
        "quarantine_id": F.sha2(identity, 256),
        "source_table": F.lit(table),
        "event_id": event_id,
        "raw": F.col("raw"),
        "failed_checks": F.array_distinct(F.concat(F.col(ERRORS_COLUMN), F.col(FAILED_DROP))),
        "run_id": F.lit(ctx.run_id),
        "quarantined_at": F.lit(ctx.started_at).cast("timestamp"),
        "source_file": F.col("source_file"),
        "record_index": F.col("record_index"),
    }


def quarantine_rows(bad: DataFrame, table: str, ctx: RunContext) -> DataFrame:
    """Rows for silver.quarantine: what failed, with the raw record to replay or inspect."""
    return bad.select(*[value.alias(name) for name, value in quarantine_columns(bad, table, ctx).items()])


INLINE_HELD = 5_000  # quarantine keys already held, up to this many, filter as an IN list


QUARANTINE_LOOKBACK = dt.timedelta(hours=1)  # clocks of the run and of the commit may differ


def _quarantine(rows: DataFrame, table: str, store, count: int, replace: bool = False) -> None:
    """Append the quarantine rows the table does not hold yet (by `quarantine_id`), idempotent
    when a run that died after it is repeated. Such rows were quarantined by a run that started
    after `table`'s last commit, so only the quarantine rows of `table` since then (less a
    margin for clocks) are looked up, in a job of their own: the append itself reads nothing
    of the table, a blind append, which the appends of tasks running beside it (other
    processes too) never conflict with. A table typed again (`replace`) quarantines its source's
    bad rows again: those of every earlier run are looked up."""
    if store.exists(QUARANTINE):
        key = "quarantine_id"
        held_rows = rows.select(key).join(
            store.read(QUARANTINE, where=_quarantined_since(table, store, replace)).select(key),
            key,
            "left_semi",
        )
        held = [row[0] for row in held_rows.collect()]
        if held and len(held) <= INLINE_HELD:
            rows = rows.where(~F.col(key).isin(held))
        elif held:
            known = store.spark.createDataFrame([(h,) for h in held], f"{key} string")
            rows = rows.join(F.broadcast(known), key, "left_anti")
        count -= len(held)
    if count > 0:
        store.append(rows, QUARANTINE, rows=count)


def _quarantined_since(table: str, store, replace: bool = False) -> list:
    """The quarantine rows an attempt since `table`'s last commit may have written (when the
    table is typed again, `replace`: every quarantine row of `table`)."""
    bounds = [In("source_table", [table])]
    last = store.history(table, limit=1) if store.exists(table) and not replace else []
    if last:
        committed = dt.datetime.fromtimestamp(last[0]["timestamp"] / 1000, dt.timezone.utc)
        bounds.append(AtLeast("quarantined_at", committed - QUARANTINE_LOOKBACK))
    return bounds


EVENT_DATE = "event_date"
FALLBACK_TIME = "_fallback_time"  # the row's event time is not the record's own (a landing time)
PROBE_COLUMNS = (EVENT_DATE, FALLBACK_TIME)  # what bounds the probe of the table's keys
ORDER = ("ingested_at", "source_file", "record_index")  # the earliest landed row of a key wins
ROW = ("source_file", "record_index")  # a bronze record; derived tables have several rows per record
BROADCAST_ROWS = 200_000  # drop lists up to this size are shipped to every task instead of shuffled


@dataclass
class Dedup:
    """Which accepted rows to write, decided on light columns only (no shuffle of whole rows).

    `kept`: one row per key (key, lineage, uniqueness columns), none already in the table.
    `losers`: later rows of a key in this batch; `present`: keys the table already holds;
    `ties`: extra rows sharing key *and* bronze record with the winner (only derived tables
    can have them; they need a per-key pass over the written rows).
    """

    ranked: DataFrame
    kept: DataFrame
    losers: DataFrame
    present: DataFrame | None
    winners: int
    loser_count: int
    ties: int

    def apply(self, accepted: DataFrame, key: str, rows_out: int) -> DataFrame:
        """The rows to write: `accepted` without the losers and the keys already present."""
        output = accepted
        if self.loser_count:
            output = output.join(_maybe_broadcast(self.losers, self.loser_count), [key, *ROW], "left_anti")
        present = self.winners - rows_out
        if present and self.present is not None:
            output = output.join(_maybe_broadcast(self.present, present), key, "left_anti")
        return output.dropDuplicates([key]) if self.ties else output

    def unpersist(self) -> None:
        for frame in (self.ranked, self.kept):
            release_cached(frame)


def _maybe_broadcast(frame: DataFrame, rows: int) -> DataFrame:
    """Ship a small drop list to every task (the usual case: a few per cent of a batch)."""
    return F.broadcast(frame) if rows <= BROADCAST_ROWS else frame


def _dedup(
    accepted: DataFrame, key: str, extra: list[str], existing: Callable[[list, bool], DataFrame | None]
) -> Dedup:
    """`existing(the batch's event dates, whether a row's time is a fallback)`: the table's keys
    the batch may repeat (None when the table has none)."""
    order = Window.partitionBy(key).orderBy(*ORDER)
    columns = list(dict.fromkeys([key, *ORDER, *extra, *PROBE_COLUMNS]))
    ranked = keep_cached(
        accepted.select(*columns)
        .withColumn("_n", F.row_number().over(order))
        .withColumn("_winner", F.first(F.struct(*ROW)).over(order))
    )
    same_row = (F.col("_winner.source_file") == F.col("source_file")) & (
        F.col("_winner.record_index") == F.col("record_index")
    )
    first = F.col("_n") == 1
    counts = ranked.agg(
        F.count_if(first).alias("winners"),
        F.count_if(~first & ~same_row).alias("losers"),
        F.count_if(~first & same_row).alias("ties"),
        F.collect_set(F.coalesce(F.col(EVENT_DATE).cast("string"), F.lit(""))).alias("dates"),
        F.max(FALLBACK_TIME).alias("fallback"),
    ).first()
    losers = ranked.where(~first & ~same_row).select(key, *ROW)
    winners = ranked.where(first).drop("_n", "_winner", *PROBE_COLUMNS)
    dates = [dt.date.fromisoformat(d) if d else None for d in counts["dates"]]
    existing = existing(dates, bool(counts["fallback"]))
    present = None
    if existing is not None:
        # Few winners (an incremental batch): probe the table's keys with a broadcast set of them,
        # one pass over a single column, instead of shuffling and sorting every key the table holds.
        if counts["winners"] <= BROADCAST_ROWS:
            present = F.broadcast(existing.join(F.broadcast(winners.select(key)), key, "left_semi"))
        else:
            present = winners.select(key).join(existing, key, "left_semi")
    kept = keep_cached(winners.join(present, key, "left_anti") if present is not None else winners)
    return Dedup(ranked, kept, losers, present, counts["winners"], counts["losers"], counts["ties"])


def _existing_keys(
    spec: SilverTableSpec, store, dates: list, fallback: bool, replace: bool = False
) -> DataFrame | None:
    """The table's keys a batch of the given event dates may repeat: a duplicate is the same
    record again, with the same event time, so only the rows of those dates (their months'
    files, where the table is partitioned by month) are probed. A batch with a row whose time is
    a fallback (not the record's own), or without a date, probes every key. A table being
    replaced (`replace`) holds no key the batch must skip."""
    if replace or not store.exists(spec.table):
        return None
    columns = store.columns(spec.table)
    if fallback or None in dates or EVENT_DATE not in columns:
        return store.read(spec.table).select(spec.dedup_key)
    return store.read(spec.table, where=dates_bounds(columns, dates)).select(spec.dedup_key)


def _checked(flagged: DataFrame, suite: Suite | None) -> DataFrame:
    """The typed rows with their `_bad` flag and per-rule results, cached: typed once.

    The checks, the quarantine, the deduplication and the write all read this cache. Typing
    (JSON parsing) is most of a silver task, so it must not run twice (once for the checks,
    again for the write). The cache is kept uncompressed
    (`spark.sql.inMemoryColumnarStorage.compressed`, conf): compressing it cost more than it
    saved. What does not fit in memory spills to disk. Where the compute caches nothing
    (serverless) it is typed by each action; a small batch takes `_process_collected` instead.
    """
    bad = (F.size(ERRORS_COLUMN) > 0) | (F.size(FAILED_DROP) > 0)
    return keep_cached(flagged.withColumn("_bad", bad).select("*", *rule_results(suite)))


def _narrow(
    checked: DataFrame, spec: SilverTableSpec, suite: Suite | None, unique_columns: list[str]
) -> DataFrame:
    """What the checks, the quarantine and the deduplication read: light columns of the cache
    and `raw` of bad rows only (the columnar cache reads just these), with each row's event date
    and whether its time is a fallback (`SilverTableSpec.fallback_time`), which bound the key
    probe."""
    columns = [spec.dedup_key, *ORDER, *unique_columns, ERRORS_COLUMN, FAILED_DROP, "_bad"]
    if "event_id" in checked.columns:
        columns.append("event_id")
    probe = []
    if EVENT_DATE not in columns:
        date = F.col(EVENT_DATE) if EVENT_DATE in checked.columns else F.lit(None).cast("date")
        probe.append(date.alias(EVENT_DATE))
    fallback = spec.fallback_time() if spec.fallback_time is not None else F.lit(False)
    return checked.select(
        *[F.col(c) for c in dict.fromkeys(columns)],
        F.when(F.col("_bad"), F.col("raw")).alias("raw"),
        *rule_result_names(suite),
        *probe,
        F.coalesce(fallback, F.lit(False)).alias(FALLBACK_TIME),
    )


def _typed(checked: DataFrame, suite: Suite | None) -> DataFrame:
    """The table's columns of the cached rows (helper columns dropped)."""
    return checked.drop(*HELPER_COLUMNS, *rule_result_names(suite))


def _deduplicate_and_append(
    spec: SilverTableSpec,
    ctx: RunContext,
    checked: DataFrame,
    narrow: DataFrame,
    unique_columns: list[str],
    suite: Suite | None,
    commit: dict,
    replace: bool,
) -> tuple[int, list[Outcome]]:
    """Append the accepted rows whose key is new (first landed wins), or replace the table by
    them (`replace`); returns (rows written, uniqueness)."""
    store = ctx.store
    dedup = _dedup(
        narrow.where(~F.col("_bad")),
        spec.dedup_key,
        unique_columns,
        lambda dates, fallback: _existing_keys(spec, store, dates, fallback, replace),
    )
    try:
        rows_out, uniqueness = measure_uniqueness(dedup.kept, suite)
        accepted = checked.where(~F.col("_bad"))
        _write(
            spec,
            store,
            _typed(dedup.apply(accepted, spec.dedup_key, rows_out), suite),
            commit,
            rows_out,
            replace,
        )
        return rows_out, uniqueness
    finally:
        dedup.unpersist()


def _write(spec: SilverTableSpec, store, rows, commit: dict, count: int, replace: bool) -> None:
    """Append `rows` (a frame or collected rows), or replace the table by them (`replace`)."""
    if replace:
        store.overwrite(rows, spec.table, partition_by=list(spec.partition_by), metadata=commit, rows=count)
    else:
        store.append(rows, spec.table, partition_by=list(spec.partition_by), metadata=commit, rows=count)


def _keys_are_new(spec: SilverTableSpec, ctx: RunContext, watermark: int | None, replace: bool) -> bool:
    """A `source_unique` table's batch repeats no key it holds while its source only gained rows;
    a table being replaced (`replace`) holds none to repeat."""
    if replace:
        return True
    if not spec.source_unique:
        return False
    if watermark is None:
        return not ctx.store.exists(spec.table)
    return ctx.store.only_appended_since(spec.source, watermark)


def _append_as_is(
    spec: SilverTableSpec,
    ctx: RunContext,
    checked: DataFrame,
    suite: Suite | None,
    batch: BatchMeasure,
    commit: dict,
    replace: bool,
) -> tuple[int, list[Outcome]]:
    """Append the accepted rows as they are (or replace the table by them, `replace`): their keys
    are new to the table and distinct (`WritePath.APPEND_AS_IS`). Returns (rows written, uniqueness)."""
    _write(spec, ctx.store, _typed(checked.where(~F.col("_bad")), suite), commit, batch.accepted, replace)
    return batch.accepted, batch.accepted_uniqueness or []


class WritePath(Enum):
    """How a measured batch reaches its table."""

    NO_ROWS = "no rows"  # every row quarantined: the watermark commit alone, no Spark write
    APPEND_AS_IS = "append as is"  # keys new to the table and distinct: no deduplication
    DEDUPLICATE = "deduplicate"  # first landed wins, within the batch and against the table


def write_path(batch: BatchMeasure) -> WritePath:
    """The write path for `batch`. Its distinct keys are measured only where they cannot be in
    the table yet (`_keys_are_new`); then all distinct means nothing to deduplicate."""
    if batch.accepted == 0:
        return WritePath.NO_ROWS
    if batch.accepted_distinct is not None and batch.accepted_distinct == batch.accepted:
        return WritePath.APPEND_AS_IS
    return WritePath.DEDUPLICATE


def _measure(
    spec: SilverTableSpec,
    ctx: RunContext,
    narrow: DataFrame,
    suite: Suite | None,
    watermark: int | None,
    replace: bool,
) -> BatchMeasure:
    """The batch's counts and rule outcomes, with its accepted keys' uniqueness when they
    cannot be in the table yet (one Spark job either way)."""
    distinct_of = spec.dedup_key if _keys_are_new(spec, ctx, watermark, replace) else None
    return measure_batch(narrow, suite, "_bad", distinct_of)


def _versions(spec: SilverTableSpec, warehouse: WarehouseView) -> tuple[int | None, int | None, bool]:
    """(the source version the table reflects, the source's version now, whether the table is to
    be typed again from its whole source); None when unknown. Typed again: the table was typed
    under another revision than its spec's, or its source was typed again since (`replacement`)."""
    store = warehouse.store
    source_version = store.version(spec.source)
    if not store.exists(spec.table):
        return None, source_version, False
    recorded = store.last_commit_metadata(spec.table, WATERMARK)
    watermark = recorded.get(WATERMARK)
    if source_version is None or watermark is None:
        return watermark, source_version, False
    revised = bool(spec.revision) and recorded.get(REVISION) != spec.revision
    return watermark, source_version, revised or replaced_since(store, spec.source, watermark)


def _up_to_date(spec: SilverTableSpec, store, watermark: int | None, source_version: int) -> bool:
    """Typed up to the source's version, or the source's commits since change no row (a
    compaction of the envelope table the DataWorks families read, say)."""
    if watermark is None:
        return False
    return watermark >= source_version or not store.rows_changed_since(spec.source, watermark)


def pending_rows(spec: SilverTableSpec, warehouse: WarehouseView) -> int:
    """Source rows this task has yet to type (Delta statistics, no Spark job): what the runner
    weighs a task by (`pipelines.orchestration.runner`)."""
    watermark, source_version, replace = _versions(spec, warehouse)
    if replace:
        return warehouse.store.count_added_since(spec.source, None)
    if source_version is None or _up_to_date(spec, warehouse.store, watermark, source_version):
        return 0
    return warehouse.store.count_added_since(spec.source, watermark)


def run(spec: SilverTableSpec, ctx: RunContext) -> TaskResult:
    store = ctx.store
    watermark, source_version, replace = _versions(spec, ctx.warehouse)
    if source_version is None:
        return TaskResult(status="SKIPPED", message=f"{spec.source} does not exist yet")
    if replace:
        watermark = None  # the whole source, typed again
    elif _up_to_date(spec, store, watermark, source_version):
        return TaskResult(status="SKIPPED", message="up to date")
    source_rows = store.count_added_since(spec.source, watermark)
    limit = ctx.config.profile.get("small_input_rows")
    if spec.selects is not None:
        with small_input_mode(ctx.spark, source_rows, limit):
            values = _new_values(spec, ctx, watermark, source_version, source_rows)
        if not any(spec.selects.accepts(v) for v in values):
            return _record_empty_batch(spec, ctx, watermark, source_version, source_rows, replace)
    # filters_stay_put: else the write's `_bad` filter would re-type every row (see its docstring).
    with small_input_mode(ctx.spark, source_rows, limit):
        if source_rows <= COLLECTED_ROWS:
            result = _process_collected(spec, ctx, watermark, source_version, source_rows, replace)
        else:
            with filters_stay_put(ctx.spark):
                result = _process(spec, ctx, watermark, source_version, source_rows, replace)
    if replace:
        result.message = "typed again from the whole source"
    return result


def _new_values(
    spec: SilverTableSpec, ctx: RunContext, watermark: int | None, source_version: int, source_rows: int
) -> frozenset:
    """Distinct values of the selector's column in the source rows after `watermark`: looked up
    once per run and source, for the tasks reading the same rows (the DataWorks families); no
    job when the rows are few (read into the driver, `COLLECTED_ROWS`)."""
    key = (spec.source, watermark, source_version, spec.selects.column)
    if key not in ctx.source_values:
        collected = watermark is not None and source_rows <= COLLECTED_ROWS
        rows = ctx.store.read_added_since(spec.source, watermark, source_version, collected=collected)
        selected = rows.select(spec.selects.column)
        if not collected:  # else the column is computed as the plan is made: no job to make it distinct
            selected = selected.distinct()
        ctx.source_values[key] = frozenset(row[0] for row in selected.collect())
    return ctx.source_values[key]


def _typed_rows(spec: SilverTableSpec, store, source_rows: DataFrame) -> DataFrame:
    """The transform's rows with the columns the table's layout derives (its partition month); a
    table created before it had a layout keeps its columns."""
    typed = spec.transform(source_rows)
    if store.exists(spec.table):
        held = set(store.columns(spec.table))
        return with_layout_columns(typed, tuple(c for c in spec.partition_by if c in held))
    return with_layout_columns(typed, spec.partition_by)


def _suite(spec: SilverTableSpec, ctx: RunContext) -> Suite | None:
    return load_suite(spec.table, suites_dir(ctx.config.section("quality")["suites_dir"]))


def _watermark_commit(spec: SilverTableSpec, ctx: RunContext, source_version: int, replace: bool) -> dict:
    """What a commit records: the source version typed, the spec's revision, whether it replaced
    the table by the whole source typed again (which the table's readers follow, `replacement`)."""
    commit = {WATERMARK: source_version, "source": spec.source, "run_id": ctx.run_id}
    if spec.revision:
        commit[REVISION] = spec.revision
    if replace:
        commit[REPLACED] = True
    return commit


def _record_empty_batch(
    spec: SilverTableSpec,
    ctx: RunContext,
    watermark: int | None,
    source_version: int,
    source_rows: int,
    replace: bool,
) -> TaskResult:
    """What typing a batch without a row of this table records (the watermark commit, DQ rows of
    zero elements), without typing it: for a family with no new events this is most of its run.
    The columns come from the table, or from the transform's plan (never run) when it is new."""
    store = ctx.store
    if store.exists(spec.table):
        columns = store.read(spec.table)
    else:
        columns = _typed_rows(
            spec, store, store.read_added_since(spec.source, watermark, source_version)
        ).drop(*HELPER_COLUMNS)
    suite = _suite(spec, ctx)
    commit = _watermark_commit(spec, ctx, source_version, replace)
    if replace:  # the whole source holds no row of this table
        _write(spec, store, columns.limit(0), commit, 0, replace)
    else:
        store.commit_no_rows(columns, spec.table, partition_by=list(spec.partition_by), metadata=commit)
    record_dq(ctx, spec.table, no_rows_outcomes(suite))
    return TaskResult(source_rows=source_rows, message="no rows for this table")


def _process(
    spec: SilverTableSpec,
    ctx: RunContext,
    watermark: int | None,
    source_version: int,
    source_rows: int,
    replace: bool,
) -> TaskResult:
    """Type, check, quarantine, deduplicate and append the source rows added after `watermark`
    (every source row, replacing the table, when `replace`)."""
    store = ctx.store
    new_rows = store.read_added_since(spec.source, watermark, source_version)
    suite = _suite(spec, ctx)
    checked = _checked(flag_rows(_typed_rows(spec, store, new_rows), suite), suite)
    try:
        unique_columns = [e.column for e in suite.expectations if not e.row_level] if suite else []
        narrow = _narrow(checked, spec, suite, unique_columns)
        batch = _measure(spec, ctx, narrow, suite, watermark, replace)
        rows_in, outcomes, quarantined = batch.rows, batch.outcomes, batch.rejected
        fatal = breaches(outcomes)
        if fatal and ctx.config.section("quality")["fail_on_breach"]:
            record_dq(ctx, spec.table, outcomes)
            raise QualityGateError(gate_message(spec.table, fatal[0]))
        rejected = narrow.where(F.col("_bad"))
        if quarantined:
            _quarantine(quarantine_rows(rejected, spec.table, ctx), spec.table, store, quarantined, replace)
        faults.checkpoint("silver_after_quarantine", spec.table)

        commit = _watermark_commit(spec, ctx, source_version, replace)
        path = write_path(batch)
        if path is WritePath.NO_ROWS:
            rows_out, uniqueness = 0, no_rows_uniqueness(suite)
            if replace:
                _write(spec, store, _typed(checked, suite).limit(0), commit, 0, replace)
            else:
                store.commit_no_rows(
                    _typed(checked, suite), spec.table, partition_by=list(spec.partition_by), metadata=commit
                )
        elif path is WritePath.APPEND_AS_IS:
            rows_out, uniqueness = _append_as_is(spec, ctx, checked, suite, batch, commit, replace)
        else:
            rows_out, uniqueness = _deduplicate_and_append(
                spec, ctx, checked, narrow, unique_columns, suite, commit, replace
            )
        record_dq(ctx, spec.table, outcomes + uniqueness + [o for check in spec.checks for o in check(store)])
    finally:
        release_cached(checked)
    return TaskResult(
        source_rows=source_rows,
        rows_in=rows_in,
        rows_out=rows_out,
        rows_quarantined=quarantined,
        rows_duplicate=rows_in - quarantined - rows_out,
    )


# A batch of up to this many source rows is typed, checked, split and deduplicated in one Spark
# job, the rest on the collected rows (`_process_collected`); larger batches stay in Spark.
COLLECTED_ROWS = LOCAL_ROWS
RANK = "_rank"  # a good row's place among the good rows of its key, earliest landed first
QUARANTINED = "_quarantine_"  # prefix of a bad row's silver.quarantine columns


def _process_collected(
    spec: SilverTableSpec,
    ctx: RunContext,
    watermark: int | None,
    source_version: int,
    source_rows: int,
    replace: bool,
) -> TaskResult:
    """`_process` for a small batch. One Spark job computes its typed rows with every rule's
    result, each bad row's quarantine row and each good row's rank among the good rows of its key
    (first landed first); the counts, the gate, the quarantine's append, the deduplication against
    the table (its keys looked up by the table store, without a job on delta-rs) and the append
    happen on the collected table, which the writes take as it is."""
    store = ctx.store
    suite = _suite(spec, ctx)
    new_rows = store.read_added_since(spec.source, watermark, source_version, collected=watermark is not None)
    typed = _typed_rows(spec, store, new_rows)
    flagged = flag_rows(typed, suite)
    flagged = flagged.withColumn("_bad", (F.size(ERRORS_COLUMN) > 0) | (F.size(FAILED_DROP) > 0))
    checked, checks = checked_rows(flagged, suite)
    fallback = spec.fallback_time() if spec.fallback_time is not None else F.lit(False)
    quarantine = {
        f"{QUARANTINED}{name}": F.when(F.col("_bad"), value)
        for name, value in quarantine_columns(flagged, spec.table, ctx).items()
    }
    planned = checked.withColumns(
        {
            RANK: F.row_number().over(Window.partitionBy("_bad", spec.dedup_key).orderBy(*ORDER)),
            FALLBACK_TIME: F.coalesce(fallback, F.lit(False)),
            **quarantine,
        }
    )
    collected = planned.toArrow()
    outcomes = rule_outcomes(collected, checks)
    bad = pc.fill_null(collected.column("_bad"), False)
    quarantined = pc.sum(pc.cast(bad, pa.int64())).as_py() or 0
    fatal = breaches(outcomes)
    if fatal and ctx.config.section("quality")["fail_on_breach"]:
        record_dq(ctx, spec.table, outcomes)
        raise QualityGateError(gate_message(spec.table, fatal[0]))
    if quarantined:
        _quarantine_collected(_quarantine_part(collected.filter(bad), planned), spec.table, store, replace)
    faults.checkpoint("silver_after_quarantine", spec.table)

    good = collected.filter(pc.invert(bad))
    written = _new_to_table(spec, ctx, watermark, good.filter(pc.equal(good.column(RANK), 1)), replace)
    columns = [c for c in typed.columns if c not in HELPER_COLUMNS]
    rows = CollectedRows(written.select(columns), StructType([typed.schema[c] for c in columns]))
    commit = _watermark_commit(spec, ctx, source_version, replace)
    if rows.num_rows or replace:
        _write(spec, store, rows, commit, rows.num_rows, replace)
    else:
        store.commit_no_rows(rows, spec.table, partition_by=list(spec.partition_by), metadata=commit)
    checked_after = [o for check in spec.checks for o in check(store)]
    record_dq(ctx, spec.table, outcomes + uniqueness_outcomes(written, checks) + checked_after)
    return TaskResult(
        source_rows=source_rows,
        rows_in=collected.num_rows,
        rows_out=rows.num_rows,
        rows_quarantined=quarantined,
        rows_duplicate=collected.num_rows - quarantined - rows.num_rows,
    )


def _quarantine_part(bad: pa.Table, planned: DataFrame) -> CollectedRows:
    """The quarantine rows of the collected bad rows (their `QUARANTINED` columns, renamed)."""
    names = [c for c in planned.columns if c.startswith(QUARANTINED)]
    fields = [planned.schema[c] for c in names]
    schema = StructType([StructField(f.name[len(QUARANTINED) :], f.dataType, f.nullable) for f in fields])
    return CollectedRows(bad.select(names).rename_columns(schema.names), schema)


def _quarantine_collected(rows: CollectedRows, table: str, store, replace: bool) -> None:
    """Append the collected quarantine rows the quarantine does not hold yet (by
    `quarantine_id`), as `_quarantine` does for a frame: an attempt that died after its
    quarantine's commit left them there."""
    key = "quarantine_id"
    if store.exists(QUARANTINE):
        ids = rows.table.column(key).to_pylist()
        held = store.read_rows(
            QUARANTINE, [key], selections=[[*_quarantined_since(table, store, replace), In(key, ids)]]
        )
        if held:
            kept = pc.invert(pc.is_in(rows.table.column(key), pa.array([r[key] for r in held], pa.string())))
            rows = CollectedRows(rows.table.filter(kept), rows.schema)
    if rows.num_rows:
        store.append(rows, QUARANTINE, rows=rows.num_rows)


def _new_to_table(
    spec: SilverTableSpec, ctx: RunContext, watermark: int | None, winners: pa.Table, replace: bool
) -> pa.Table:
    """The batch's first landed row of each key (`winners`) without the keys the table holds
    already: looked up among the rows of the batch's event dates (`_existing_keys`' bounds), by
    the table store. A `source_unique` table whose source only gained rows holds none of them."""
    store, key = ctx.store, spec.dedup_key
    if _keys_are_new(spec, ctx, watermark, replace) or not store.exists(spec.table) or winners.num_rows == 0:
        return winners
    keys = [k for k in pc.unique(winners.column(key)).to_pylist() if k is not None]
    if not keys:
        return winners
    bounds = [In(key, keys)]
    columns = store.columns(spec.table)
    dates = (
        pc.unique(winners.column(EVENT_DATE)).to_pylist() if EVENT_DATE in winners.column_names else [None]
    )
    fallback = pc.any(pc.fill_null(winners.column(FALLBACK_TIME), False)).as_py()
    if not fallback and None not in dates and EVENT_DATE in columns:
        bounds += dates_bounds(columns, dates)
    held = [row[key] for row in store.read_rows(spec.table, [key], selections=[bounds])]
    if not held:
        return winners
    present = pa.array(held, winners.schema.field(key).type)
    return winners.filter(pc.invert(pc.fill_null(pc.is_in(winners.column(key), present), False)))
