"""Recompute the groups of a gold table that new silver rows touch, and replace them.

The versions of every source already reflected are kept in the gold commit's
metadata (`source_versions`). Each run takes one path (`GoldPath`, chosen by `plan` from
Delta metadata alone, each path one function in `PATHS`). First run (or a source never
seen, or a source replaced whole since: a silver table typed again by a new revision of its
spec, a gold table built again in full, `replacement`): full build and overwrite. Later runs:
the touched groups' complete history is read back from the sources, rebuilt, and the table's
rows of those groups are replaced by the rebuilt ones (`TableStore.replace_groups`), so the table always
equals a full rebuild (`RebuildGroups`; every table falls back to it when its own strategy
cannot apply, `HISTORY_FALLBACK`). An `Append` table's groups never recur, so its new
rows are built alone and appended. An `Accumulate` table (counts) adds the new
rows' counts to its touched rows, reading no history while its sources only
gained rows.

An `Extend` table (timelines) also records the sources' newest `event_time` with
every commit (`event_time_watermarks`, from file statistics). A touched group whose
new rows all come later is extended from its current rows and new rows alone; the
groups with an earlier (late) new row are rebuilt from their history, in the same
commit. Events of a live feed mostly arrive in order, so most groups read no history.

Whatever the path, the rows about to be written (the whole table, or the touched groups
whole, or the appended rows) are checked against the table's expectation suite first
(`_gated`): one aggregation over the rows computed once (cached; on serverless, a small task's
collected), outcomes recorded in `ops.dq_results`, and a breached `fail` rule stops the task
before anything is written.

A spec's `checks` run after every run of its task, up to date or not (a feed gone silent
adds no row): their outcomes go to `ops.dq_results` under the names they give (`_run_checks`).

The touched groups are computed once. When they are few (`LOCAL_GROUPS`, the
usual incremental case) they are collected and travel as a small literal table
with a broadcast hint, so reading a group's history is one filtering pass over
each source (no shuffle or sort of the history); more groups are cached. Up to
`INLINE_GROUPS` collected groups filter as an IN list instead (`_of_groups`): no
join, so no job to broadcast them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from functools import reduce
from typing import TypeVar

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from gold import GROUP
from pipelines.core.context import RunContext, TaskResult, WarehouseView
from pipelines.core.table_layout import since_bounds
from pipelines.core.table_specs import Accumulate, Append, Extend, GoldTableSpec, RebuildGroups
from pipelines.executors.replacement import REPLACED, REVISION, replaced_since
from pipelines.ops.bookkeeping import record_dq
from pipelines.quality import (
    QualityGateError,
    Suite,
    breaches,
    checked_rows,
    gate_message,
    load_suite,
    measure_collected,
    measure_output,
    no_rows_outcomes,
    suites_dir,
    table_rows,
)
from pipelines.runtime.caching import LOCAL_ROWS, keep_cached, release_cached
from pipelines.runtime.spark import is_small_input, small_input_mode
from pipelines.runtime.sql_expressions import one_of
from pipelines.store.collected import CollectedRows, Rows
from pipelines.store.pruning import AtLeast, In

WATERMARKS = "source_versions"
EVENT_TIME_WATERMARK = "event_time_watermarks"  # {source: epoch us of its newest event_time}
EVENT_TIME = "event_time"
# Delta statistics may hold timestamps to the millisecond only (delta-rs' own rewrites and
# delta-spark truncate them), so a new row within a millisecond after the watermark counts as
# late: rebuilt, never misordered.
STATISTICS_PRECISION_MICROS = 1_000
LOCAL_GROUPS = 50_000  # touched groups up to this many are collected to the driver
# Collected groups up to this many filter as an IN list. Each join with the literal table runs a
# job of its own to broadcast it, several per gold task; an IN list travels in the plan. Past a
# few thousand values Spark's parser takes longer than the broadcast.
INLINE_GROUPS = 5_000
# A full build of a table laid out by `cluster_by` writes files of about this many rows, each a
# range of those columns (tens of MB: at or near the compaction target, so compactions leave them).
CLUSTERED_FILE_ROWS = 250_000


T = TypeVar("T")


def _suite(spec: GoldTableSpec, ctx: RunContext) -> Suite | None:
    return load_suite(spec.table, suites_dir(ctx.config.section("quality")["suites_dir"]))


def _gated(job: GoldJob, rows: DataFrame, write: Callable[[Rows, int | None], T]) -> T:
    """`write(rows, their count)` once the table's suite passed on `rows`, the rows about to be
    written (whole groups: whole keys), and its outcomes recorded in `ops.dq_results`.

    A small task's rows are computed once, in one Spark job, with every rule's result as a
    column of the same plan (`checked_rows`); the suite is counted on the collected table and the
    write takes it as it is (`CollectedRows`): no second job computes the rows again. A large
    task's rows are cached (or, where the compute caches nothing, computed by each action),
    measured by one aggregation and written by Spark. A breached `fail` rule records the
    outcomes and raises `QualityGateError` before anything is written (unless
    `quality.fail_on_breach` is off)."""
    spec, ctx = job.spec, job.ctx
    suite = _suite(spec, ctx)
    if job.small:
        checked, checks = checked_rows(rows, suite)
        collected = checked.toArrow()
        count, outcomes = measure_collected(collected, checks)
        _stop_on_breach(job, outcomes)
        written = write(CollectedRows(table_rows(collected, checks), rows.schema), count)
        record_dq(ctx, spec.table, outcomes)
        return written
    if suite is None:
        return write(rows, None)
    cached = keep_cached(rows)
    try:
        count, outcomes = measure_output(cached, suite)
        _stop_on_breach(job, outcomes)
        written = write(cached, count)
    finally:
        release_cached(cached)
    record_dq(ctx, spec.table, outcomes)
    return written


def _stop_on_breach(job: GoldJob, outcomes: list) -> None:
    """Record `outcomes` and raise `QualityGateError` when a `fail` rule is breached (and
    `quality.fail_on_breach` is on); nothing is written then."""
    fatal = breaches(outcomes)
    if fatal and job.ctx.config.section("quality")["fail_on_breach"]:
        record_dq(job.ctx, job.spec.table, outcomes)
        raise QualityGateError(gate_message(job.spec.table, fatal[0]))


def _union(frames: list[DataFrame]) -> DataFrame:
    return reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames)


def _commit_metadata(spec: GoldTableSpec, ctx: RunContext, versions: dict[str, int], mode: str) -> dict:
    """What a commit records: the source versions it reflects and, for `extend` tables built from
    the sources' whole content (a full build, a rebuild), their newest event_time at those
    versions, from file statistics (None when no source holds one). The `extend` path moves the
    last commit's on by the new rows' instead (`_newest_after`)."""
    metadata = {WATERMARKS: versions, "run_id": ctx.run_id, "mode": mode}
    if spec.revision:
        metadata[REVISION] = spec.revision
    if isinstance(spec.incremental, Extend) and mode == "full":
        metadata[EVENT_TIME_WATERMARK] = _newest_in_sources(ctx, versions)
    return metadata


def _newest_in_sources(ctx: RunContext, versions: dict[str, int]) -> dict:
    return {s: ctx.store.max_micros(s, EVENT_TIME, v) for s, v in versions.items()}


def _groups_as(groups: DataFrame, column: str) -> DataFrame:
    """A frame of touched `_group` values as `column` (the table's group column, or `_group`)."""
    return groups.select(F.col(GROUP).alias(column))


def _inline(values: list | None) -> bool:
    """Whether collected `values` filter as an IN list (`INLINE_GROUPS` strings at most)."""
    return values is not None and len(values) <= INLINE_GROUPS and all(isinstance(v, str) for v in values)


def _of_groups(frame: DataFrame, column: str, groups: DataFrame, values: list | None) -> DataFrame:
    """The rows of `frame` whose `column` is one of `groups` (a frame of `_group`; `values`: the
    same as Python values when collected, else None): an IN list for up to `INLINE_GROUPS`
    strings, else a semi join."""
    known = None if values is None else [v for v in values if v is not None]
    if _inline(known):
        return frame.where(one_of(column, known))
    return frame.join(_groups_as(groups, column), column, "left_semi")


def _replace(job: GoldJob, rows: Rows, groups: DataFrame, values, count=None) -> int:
    """Replace the table's rows of `groups` (a frame of `_group`; `values`: the same as Python
    values when collected, else None) by `rows`, in one commit; returns the rows written."""
    spec = job.spec
    return job.ctx.store.replace_groups(
        rows,
        spec.table,
        group_key=spec.group_key,
        groups=_groups_as(groups, spec.group_key),
        keys=list(spec.row_key),
        metadata=job.metadata,
        group_values=values,
        rows=count,
    )


def _full_build(job: GoldJob) -> TaskResult:
    """Build the whole table in one pass, checked then written; rows counted from the commit's
    statistics. Overwriting a table that existed replaces it whole (`replacement`): the gold
    tables reading it then build again in full too."""
    spec, ctx = job.spec, job.ctx
    inputs = {s: spec.relevant(s, ctx.store.read(s, v)) for s, v in job.present.items()}
    metadata = _commit_metadata(spec, ctx, job.present, "full")
    if ctx.store.exists(spec.table):
        metadata[REPLACED] = True
    with job.small_input():
        _gated(
            job,
            spec.build(inputs),
            lambda rows, count: ctx.store.overwrite(
                _clustered(spec, rows, count),
                spec.table,
                partition_by=list(spec.partition_by),
                metadata=metadata,
                rows=count,
            ),
        )
    rows = ctx.store.count_added_since(spec.table, None)
    return TaskResult(rows_in=rows, rows_out=rows, message="full build")


def _clustered(spec: GoldTableSpec, rows: Rows, count: int | None) -> Rows:
    """`rows` in ranges of the spec's `cluster_by` columns, a file of about `CLUSTERED_FILE_ROWS`
    each: a run then finds the rows it replaces by the files' statistics, in few of them.
    Collected rows are few: one file, whose statistics bound them all."""
    if not spec.cluster_by or count is None or isinstance(rows, CollectedRows):
        return rows
    return rows.repartitionByRange(max(1, -(-count // CLUSTERED_FILE_ROWS)), *spec.cluster_by)


class _Scratch:
    """The touched groups of one incremental run, computed once; cached ones released at the end."""

    def __init__(self, spark: SparkSession):
        self.spark = spark
        self.cached: list[DataFrame] = []
        self.collected: tuple[list, StructType] | None = None  # the last groups collected, if any

    def groups(self, frame: DataFrame | list[DataFrame], few: bool) -> DataFrame:
        """The distinct `_group` values of `frame` (or of every frame of a list). When `few` (at
        most `LOCAL_GROUPS` rows expected), collected, a frame at a time (a frame over rows
        collected already computes its column as it is planned: no Spark job), and they travel as
        a literal table hinted for broadcast; else cached. More than `LOCAL_GROUPS` collected
        after all are cached too."""
        frames = frame if isinstance(frame, list) else [frame]
        values = [part.select(GROUP) for part in frames]
        self.collected = None
        if few:
            found = {row[0] for part in values for row in part.collect()}
            if len(found) <= LOCAL_GROUPS:
                self.collected = (sorted(found, key=str), values[0].schema)
                return self.local(*self.collected)
        cached = keep_cached(_union(values).distinct())
        self.cached.append(cached)
        return cached

    def values(self) -> list | None:
        """The touched groups as Python values when they were collected (the table store can then
        find the files holding them without a Spark job), else None."""
        return None if self.collected is None else self.collected[0]

    def local(self, values: list, schema: StructType) -> DataFrame:
        # Spark cannot size a table made from Python rows, so without the hint every join
        # with it (history, expand_groups, the replaced files) shuffles and sorts the big side.
        return F.broadcast(self.spark.createDataFrame([(v,) for v in values], schema))

    def release(self) -> None:
        for frame in self.cached:
            release_cached(frame)


def _versions(spec: GoldTableSpec, warehouse: WarehouseView) -> tuple[dict[str, int], dict]:
    """(the versions of the sources that exist, what the table's last commit recorded)."""
    store = warehouse.store
    versions = {s: store.version(s) for s in spec.sources}
    present = {s: v for s, v in versions.items() if v is not None}
    recorded = store.last_commit_metadata(spec.table, WATERMARKS) if store.exists(spec.table) else {}
    return present, recorded


class GoldPath(Enum):
    """How a run brings a gold table up to date (`plan`), each path one function (`PATHS`)."""

    FULL = "full build"  # no build yet, or a source it never read: everything, then overwrite
    UP_TO_DATE = "up to date"  # no source gained a row since the last build (`rows_changed_since`)
    APPEND = "append"  # `Append`: the new rows' groups are new, built alone and appended
    ACCUMULATE = "accumulate"  # `Accumulate`: new counts added to the touched rows, no history read
    EXTEND = "extend"  # `Extend`: touched groups extended in event-time order, late ones rebuilt
    REBUILD = "rebuild"  # touched groups rebuilt from their whole history (`HISTORY_FALLBACK`)


# The rule a table falls back to when its own strategy cannot apply this run (a source rewrote
# rows, a timeline's sources recorded no event-time watermark, more new rows than can be
# collected): its touched groups rebuilt from their whole history, which always equals a full build.
HISTORY_FALLBACK = RebuildGroups()


@dataclass(frozen=True)
class Plan:
    """The path a run takes, the source and table rows it scans, the new source rows; decided
    from Delta metadata alone: the executor follows it, the runner weighs the task by it.

    `flowing`: the rows the task's plans carry past their scans, which its execution mode follows
    (`GoldJob.small`). Most paths carry what they scan; a rebuild of few touched groups scans its
    sources whole but keeps only those groups' rows, so it carries about as many as the new rows
    touch, and runs as small as they are."""

    path: GoldPath
    scanned: int
    source_rows: int
    flowing: int | None = None  # None: what is scanned

    @property
    def rows_carried(self) -> int:
        return self.scanned if self.flowing is None else self.flowing


def _rows_held(store, tables) -> int:
    """The rows `tables` hold now (Delta statistics, no Spark job): what reading them whole scans."""
    return sum(store.count_added_since(t, None) for t in tables)


def plan(spec: GoldTableSpec, warehouse: WarehouseView, present: dict[str, int], recorded: dict) -> Plan:
    store = warehouse.store
    seen = recorded.get(WATERMARKS)
    rebuilt = spec.revision and recorded.get(REVISION) != spec.revision  # new columns or rules
    if not seen or any(s not in seen for s in present) or rebuilt:  # or no build yet, or a new source
        everything = _rows_held(store, present)
        return Plan(GoldPath.FULL, everything, everything)
    changed = {s: v for s, v in present.items() if v > seen[s] and store.rows_changed_since(s, seen[s])}
    if not changed:  # no commit since the last build, or none that changed a row
        return Plan(GoldPath.UP_TO_DATE, 0, 0)
    if any(replaced_since(store, s, seen[s]) for s in changed):  # keys it held may be gone (`replacement`)
        everything = _rows_held(store, present)
        return Plan(GoldPath.FULL, everything, everything)
    source_rows = sum(store.count_added_since(s, seen[s]) for s in changed)
    # absent: recorded by an older release, so unknown; a None value: that source held no event
    newest_seen = recorded.get(EVENT_TIME_WATERMARK) or {}
    strategy = spec.incremental
    appended = lambda: all(store.only_appended_since(s, seen[s]) for s in changed)  # noqa: E731
    if isinstance(strategy, Append):
        return Plan(GoldPath.APPEND, source_rows, source_rows)
    if isinstance(strategy, Accumulate) and appended():
        return Plan(GoldPath.ACCUMULATE, source_rows + store.count_added_since(spec.table, None), source_rows)
    if (
        isinstance(strategy, Extend)
        and all(s in newest_seen for s in present)
        and source_rows <= LOCAL_GROUPS
        and appended()
    ):
        return Plan(GoldPath.EXTEND, source_rows, source_rows)  # late groups, if any, read their history too
    # The touched groups' history is read from every source; few groups keep few of its rows.
    everything = _rows_held(store, present)
    if source_rows > LOCAL_GROUPS:
        return Plan(GoldPath.REBUILD, everything, source_rows)
    linking = strategy if isinstance(strategy, RebuildGroups) else HISTORY_FALLBACK
    whole = _rows_held(store, [s for s in linking.kept_whole if s in present])
    return Plan(GoldPath.REBUILD, everything, source_rows, source_rows + whole)


@dataclass
class GoldJob:
    """What every path needs: the table, the run, the sources' versions now and as last built,
    the plan, and (incremental paths) the new rows and the commit's metadata."""

    spec: GoldTableSpec
    ctx: RunContext
    present: dict[str, int]  # each source's version now
    recorded: dict  # what the table's last commit recorded
    plan: Plan
    new_rows: dict[str, DataFrame] = field(default_factory=dict)  # per changed source, its new rows
    metadata: dict = field(default_factory=dict)  # what this run's commit records

    @property
    def seen(self) -> dict[str, int]:
        return self.recorded[WATERMARKS]

    @property
    def few(self) -> bool:
        """At most `LOCAL_GROUPS` new rows, so at most that many touched groups (one per row)."""
        return self.plan.source_rows <= LOCAL_GROUPS

    @property
    def small(self) -> bool:
        """Whether the rows the plans carry are below the profile's `small_input_rows` (a small task)."""
        return is_small_input(self.plan.rows_carried, self.ctx.config.profile.get("small_input_rows"))

    def small_input(self, rows: int | None = None):
        """The plans inside run as a small input does when the rows they carry are few (`small_input_mode`)."""
        limit = self.ctx.config.profile.get("small_input_rows")
        return small_input_mode(self.ctx.spark, self.plan.rows_carried if rows is None else rows, limit)


def pending_rows(spec: GoldTableSpec, warehouse: WarehouseView) -> int:
    """The rows this task would scan (every source row for a full build or a history rebuild;
    Delta statistics, no Spark job): what the runner weighs a task by (`pipelines.orchestration.runner`)."""
    present, recorded = _versions(spec, warehouse)
    return plan(spec, warehouse, present, recorded).scanned if present else 0


def run(spec: GoldTableSpec, ctx: RunContext) -> TaskResult:
    result = _bring_up_to_date(spec, ctx)
    _run_checks(spec, ctx)
    return result


def _run_checks(spec: GoldTableSpec, ctx: RunContext) -> None:
    """The spec's `checks`, after every run of the task (up to date or not): their outcomes go to
    `ops.dq_results` under the names they give, and a breached `fail` one stops the run as a
    table's own `fail` rule does (the table is written by then)."""
    fatal = []
    for check in spec.checks:
        for name, outcomes in check(ctx.store).items():
            record_dq(ctx, name, outcomes)
            fatal += [(name, outcome) for outcome in breaches(outcomes)]
    if fatal and ctx.config.section("quality")["fail_on_breach"]:
        raise QualityGateError(gate_message(*fatal[0]))


def _bring_up_to_date(spec: GoldTableSpec, ctx: RunContext) -> TaskResult:
    present, recorded = _versions(spec, ctx.warehouse)
    if not present:
        return TaskResult(status="SKIPPED", message="no source table exists yet")
    job = GoldJob(spec, ctx, present, recorded, plan(spec, ctx.warehouse, present, recorded))
    if job.plan.path is GoldPath.UP_TO_DATE:
        return TaskResult(status="SKIPPED", message="up to date")
    if job.plan.path is not GoldPath.FULL:
        job.new_rows = {
            s: ctx.store.read_added_since(s, job.seen[s], v, collected=_few_new(ctx, s, job.seen[s]))
            for s, v in present.items()
            if v > job.seen[s]
        }
        job.metadata = _commit_metadata(spec, ctx, {**job.seen, **present}, "incremental")
    return PATHS[job.plan.path](job)


def _few_new(ctx: RunContext, source: str, seen: int) -> bool:
    """Whether `source`'s rows since `seen` are few enough (`LOCAL_ROWS`) to be read into the
    driver once for the run, for every table they feed (`TableStore.read_added_since`)."""
    return (
        ctx.store.only_appended_since(source, seen)
        and ctx.store.count_added_since(source, seen) <= LOCAL_ROWS
    )


def _incremental(job: GoldJob, rows_out: int, message: str = "incremental") -> TaskResult:
    return TaskResult(source_rows=job.plan.source_rows, rows_in=rows_out, rows_out=rows_out, message=message)


def _append_new_rows(job: GoldJob) -> TaskResult:
    """An append-only table's new groups are built from the new rows alone (no history read)."""
    spec, store = job.spec, job.ctx.store
    before = store.version(spec.table)
    relevant = {s: spec.relevant(s, rows) for s, rows in job.new_rows.items()}
    with job.small_input():
        _gated(
            job,
            spec.build(relevant),
            lambda rows, count: store.append(
                rows, spec.table, partition_by=list(spec.partition_by), metadata=job.metadata, rows=count
            ),
        )
    return _incremental(job, store.count_added_since(spec.table, before))


def _accumulate_new_rows(job: GoldJob) -> TaskResult:
    """Add what the new source rows count to the table's rows of the groups they touch, and
    replace those groups: the work follows the new rows and the touched rows, not the history.
    Where the table declares a `locality` (the column all rows of a group share, e.g. the day),
    the touched groups' rows are looked up and replaced by it too, so only the files of those
    values are read and rewritten (`_accumulate_by_locality`)."""
    relevant = {s: job.spec.relevant(s, rows) for s, rows in job.new_rows.items()}
    if job.spec.locality is not None and job.few:
        done = _accumulate_by_locality(job, relevant)
        if done is not None:
            return done
    return _accumulate_general(job, relevant)


def _accumulate_general(job: GoldJob, relevant: dict[str, DataFrame]) -> TaskResult:
    """The touched groups' rows found by a scan of the group column, and replaced whole."""
    spec, ctx, store = job.spec, job.ctx, job.ctx.store
    scratch = _Scratch(ctx.spark)
    try:
        with job.small_input():
            touched = scratch.groups(list(relevant.values()), job.few)
            current = _of_groups(store.read(spec.table), spec.group_key, touched, scratch.values())
            written = _gated(
                job,
                spec.incremental.combine(current, spec.build(relevant)),
                lambda rows, count: _replace(job, rows, touched, scratch.values(), count),
            )
    finally:
        scratch.release()
    return _incremental(job, written, "incremental, new counts added")


def _accumulate_by_locality(job: GoldJob, relevant: dict[str, DataFrame]) -> TaskResult | None:
    """`_accumulate_new_rows` for a table with a `locality`: one collect finds the touched groups
    and their localities; the rows matching both are read, added to and replaced. None when the
    groups are too many to name in a selection, or a row has no locality (the general path then)."""
    spec, store = job.spec, job.ctx.store
    with job.small_input():
        pairs = _union([rows.select(GROUP, spec.locality) for rows in relevant.values()]).distinct().collect()
        groups = sorted({row[0] for row in pairs if row[0] is not None}, key=str)
        if len(groups) > INLINE_GROUPS or any(row[1] is None for row in pairs):
            return None
        selection = [In(spec.group_key, groups), In(spec.locality, [row[1] for row in pairs])]
        current = store.read(spec.table, where=selection)
        written = _gated(
            job,
            spec.incremental.combine(current, spec.build(relevant)),
            lambda rows, count: store.replace_where(rows, spec.table, [selection], job.metadata, count),
        )
    return _incremental(job, written, "incremental, new counts added")


def _rebuild_touched_groups(job: GoldJob) -> TaskResult:
    """Rebuild the groups the sources' new rows touch from their whole history, and replace them
    (the table's own `RebuildGroups`, else `HISTORY_FALLBACK`). Another table of this run with the
    same sources, versions, `relevant` and `expand_groups` found the same groups: they are
    collected once (`ctx.touched_groups`)."""
    spec, ctx, store = job.spec, job.ctx, job.ctx.store
    everything = {s: spec.relevant(s, store.read(s, v)) for s, v in job.present.items()}
    linking = spec.incremental if isinstance(spec.incremental, RebuildGroups) else HISTORY_FALLBACK
    if isinstance(spec.incremental, Extend):  # a fallback: its sources are read whole anyway
        job.metadata[EVENT_TIME_WATERMARK] = _newest_in_sources(ctx, job.present)
    shared = (spec.sources, tuple(sorted(job.seen.items())), tuple(sorted(job.present.items())))
    remembered = (*shared, spec.relevant, linking.expand_groups)
    scratch = _Scratch(ctx.spark)
    try:
        with job.small_input():
            if remembered in ctx.touched_groups:
                scratch.collected = ctx.touched_groups[remembered]
                touched = scratch.local(*scratch.collected)
            else:
                new_groups = [spec.relevant(s, rows).select(GROUP) for s, rows in job.new_rows.items()]
                touched = scratch.groups(new_groups, job.few)
                if linking.expand_groups is not None:
                    touched = _expanded(linking, scratch, touched, everything, job.few)
                if scratch.collected is not None:
                    ctx.touched_groups[remembered] = scratch.collected
            history = {
                s: _of_groups(rows, GROUP, touched, scratch.values()) for s, rows in everything.items()
            }
            written = _gated(
                job,
                spec.build(history),
                lambda rows, count: _replace(job, rows, touched, scratch.values(), count),
            )
    finally:
        scratch.release()
    return _incremental(job, written)


def _expanded(
    linking: RebuildGroups,
    scratch: _Scratch,
    touched: DataFrame,
    everything: dict[str, DataFrame],
    few: bool,
) -> DataFrame:
    """The touched groups and the groups `linking.expand_groups` links to them. Collected groups
    that filter as an IN list are expanded as values (`linking.expand_group_values`): a filtering
    scan per hop instead of the joins' adaptive jobs."""
    values = scratch.values()
    if linking.expand_group_values is not None and _inline(values):
        expanded = linking.expand_group_values(values, everything)
        scratch.collected = (sorted(expanded, key=str), scratch.collected[1])
        return scratch.local(*scratch.collected)
    return scratch.groups(linking.expand_groups(touched, everything), few)


def _extend_touched_groups(job: GoldJob) -> TaskResult:
    """A new row is late when it is not after the newest event the last commit saw in its
    sources' ordering domain (`event_time_watermarks`, per source; `Extend.ordering_domains`);
    one collect finds the touched groups, whether any of their new rows is late, their earliest
    new event and each source's newest. The in-order groups are extended from their open rows;
    the late ones are rebuilt from the earliest late group's first new event on, from their rows
    open then and their sources' events since (`Extend`); one commit replaces them all."""
    spec, store = job.spec, job.ctx.store
    newest_seen = job.recorded.get(EVENT_TIME_WATERMARK) or {}
    relevant = {s: spec.relevant(s, rows) for s, rows in job.new_rows.items()}
    bounds = _domain_bounds(spec, newest_seen)
    flagged = [
        rows.select(
            GROUP,
            F.lit(s).alias("_source"),
            _is_late(bounds[_domain_of(spec, s, newest_seen)]).alias("_late"),
            F.unix_micros(EVENT_TIME).alias("_micros"),
        )
        for s, rows in relevant.items()
    ]
    with job.small_input(job.plan.source_rows):
        found = _touched_summary(flagged, collected=job.plan.source_rows <= LOCAL_ROWS)
    domains: dict = {}
    for row in found:
        domains.setdefault(row[GROUP], set()).add(_domain_of(spec, row["_source"], newest_seen))
    # a group with new rows of two ordering domains is rebuilt: no one bound orders its rows
    late_groups = {row[GROUP] for row in found if row["_late"] or len(domains[row[GROUP]]) > 1}
    late = sorted(late_groups, key=str)
    in_order = sorted(set(domains) - late_groups, key=str)
    closing: dict = {}  # the bound each in-order group's new rows are at or after: the rows they close
    for group in in_order:
        closing.setdefault(bounds[next(iter(domains[group]))], []).append(group)
    firsts = [row["_first"] for row in found if row[GROUP] in late_groups and row["_first"] is not None]
    since = _utc(min(firsts)) if firsts else None
    job.metadata[EVENT_TIME_WATERMARK] = _newest_after(job, newest_seen, found)
    schema = StructType([flagged[0].schema[GROUP]])
    # The plans compute the new rows and the touched groups' rows. The table is only scanned
    # through the broadcast groups, which runs as fast interpreted as compiled, so without late
    # groups the mode follows the new rows: one job per action, no code to generate and compile.
    # Late groups' history reads scan their sources from the late time on: then the mode follows
    # those rows, as a rebuild's does.
    history = _rows_held(store, job.present) if late else 0
    with job.small_input(job.plan.source_rows + history):
        written = _replace_extended_and_rebuilt(job, relevant, closing, late, since, schema)
    rebuilt = f", from their events since {since.isoformat(timespec='milliseconds')}" if late else ""
    return _incremental(
        job, written, f"incremental, {len(in_order)} groups extended, {len(late)} rebuilt{rebuilt}"
    )


def _touched_summary(flagged: list[DataFrame], collected: bool) -> list:
    """Per touched group and source of the new rows (`flagged`: one frame a source): whether one
    of its new rows is late, and its earliest and latest new event (epoch us), as rows or dicts
    of `GROUP`, `_source`, `_late`, `_first` and `_last`. A few new rows (`collected`) are
    collected a source at a time (rows read into the driver already compute these columns as
    they are planned, with no Spark job) and summed up here; more, by one Spark aggregation."""
    if not collected:
        return (
            _union(flagged)
            .groupBy(GROUP, "_source")
            .agg(
                F.max("_late").alias("_late"),
                F.min("_micros").alias("_first"),
                F.max("_micros").alias("_last"),
            )
            .collect()
        )
    found: dict[tuple, dict] = {}
    for frame in flagged:
        for row in frame.collect():
            entry = found.setdefault(
                (row[GROUP], row["_source"]),
                {GROUP: row[GROUP], "_source": row["_source"], "_late": False, "_first": None, "_last": None},
            )
            entry["_late"] = entry["_late"] or bool(row["_late"])
            micros = row["_micros"]
            if micros is not None:
                entry["_first"] = micros if entry["_first"] is None else min(entry["_first"], micros)
                entry["_last"] = micros if entry["_last"] is None else max(entry["_last"], micros)
    return list(found.values())


def _utc(micros: int) -> dt.datetime:
    return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=micros)


def _newest_after(job: GoldJob, newest_seen: dict, found: list) -> dict:
    """Each source's newest relevant `event_time` (epoch us) after this run: the last commit's,
    moved on by the new rows' (no source is scanned)."""
    newest = {s: newest_seen.get(s) for s in job.present}
    for row in found:
        if row["_last"] is not None:
            known = newest.get(row["_source"])
            newest[row["_source"]] = row["_last"] if known is None else max(known, row["_last"])
    return newest


def _open_rows(strategy: Extend, column: str, groups: list) -> list:
    """The bounds of the open rows of `groups`."""
    return [In(column, groups), In(strategy.open_flag, [True])]


def _domain_of(spec: GoldTableSpec, source: str, newest_seen: dict) -> tuple[str, ...]:
    """The ordering domain `source` belongs to (`Extend.ordering_domains`; all sources by default)."""
    return next((d for d in spec.incremental.ordering_domains if source in d), tuple(sorted(newest_seen)))


def _domain_bounds(spec: GoldTableSpec, newest_seen: dict) -> dict[tuple[str, ...], int | None]:
    """Each ordering domain's bound (epoch us): a new row at or after it is in order, and every
    row the table holds closed before it (None: the domain has no event seen yet)."""
    domains = {_domain_of(spec, s, newest_seen) for s in spec.sources} | {tuple(sorted(newest_seen))}
    bounds = {}
    for domain in domains:
        known = [newest_seen[s] for s in domain if newest_seen.get(s) is not None]
        bounds[domain] = max(known) + STATISTICS_PRECISION_MICROS if known else None
    return bounds


def _closed_by_extension(strategy: Extend, column: str, groups: list, bound: int | None) -> list:
    """The bounds of the rows an extension of `groups` may close: those that end at or after the
    domain's bound. The table holds none of them (its rows closed before the bound), so nothing
    is removed; they make what the replacement writes lie within what it replaces, which Delta's
    own `replaceWhere` checks."""
    return [In(column, groups), In(strategy.open_flag, [False]), AtLeast(strategy.ends, _utc(bound or 0))]


def _replace_extended_and_rebuilt(
    job: GoldJob, relevant: dict[str, DataFrame], closing: dict, late: list, since, schema: StructType
) -> int:
    """One commit: the in-order groups (`closing`: by the bound their new rows are after)
    extended from their open rows and new `relevant` rows, the `late` ones rebuilt from `since`
    on; returns the rows written. What it replaces: the open rows of every touched group, and
    the late groups' rows that closed at `since` or later."""
    spec, ctx, store = job.spec, job.ctx, job.ctx.store
    strategy: Extend = spec.incremental
    column = spec.group_key
    in_order = sorted((g for groups in closing.values() for g in groups), key=str)
    selections = []
    if in_order:
        selections.append(_open_rows(strategy, column, in_order))
        for bound, groups in closing.items():
            selections.append(_closed_by_extension(strategy, column, groups, bound))
    if late:
        selections.append(_open_rows(strategy, column, late))
        selections.append([In(column, late), In(strategy.open_flag, [False]), AtLeast(strategy.ends, since)])
    if not selections:  # no touched group: a commit of the watermarks alone
        store.commit_no_rows(store.read(spec.table).limit(0), spec.table, metadata=job.metadata)
        record_dq(ctx, spec.table, no_rows_outcomes(_suite(spec, ctx)))
        return 0
    rows = store.read_any(spec.table, selections)
    scratch = _Scratch(ctx.spark)
    parts = []
    if in_order:
        groups = scratch.local(in_order, schema)
        # with no late group every row and every new row belongs to an extended one: no filter
        current = _of_groups(rows, column, groups, in_order) if late else rows
        later = (
            {s: _of_groups(new, GROUP, groups, in_order) for s, new in relevant.items()} if late else relevant
        )
        parts.append(strategy.extend(current, later, None))
    if late:
        groups = scratch.local(late, schema)
        events = {
            s: _of_groups(spec.relevant(s, _events_since(store, s, v, since)), GROUP, groups, late)
            for s, v in job.present.items()
        }
        parts.append(strategy.extend(_of_groups(rows, column, groups, late), events, since))
    return _gated(
        job,
        _union(parts),
        lambda out, count: store.replace_where(out, spec.table, selections, job.metadata, count),
    )


def _events_since(store, source: str, version: int, since) -> DataFrame:
    """`source`'s rows at `version` whose event time is `since` or later, reading only the files
    (months, where the source is partitioned by them) that may hold one."""
    return store.read(source, version, where=since_bounds(store.columns(source), since))


PATHS: dict[GoldPath, Callable[[GoldJob], TaskResult]] = {
    GoldPath.FULL: _full_build,
    GoldPath.APPEND: _append_new_rows,
    GoldPath.ACCUMULATE: _accumulate_new_rows,
    GoldPath.EXTEND: _extend_touched_groups,
    GoldPath.REBUILD: _rebuild_touched_groups,
}


def _is_late(bound: int | None) -> Column:
    """True for a row before its ordering domain's `bound` (`_domain_bounds`: the newest event
    seen in the domain, within the statistics' precision), so not after that event; false for
    rows without event_time, which no build orders, and where the domain has seen no event."""
    if bound is None:
        return F.lit(False)
    return F.coalesce(F.unix_micros(EVENT_TIME) < F.lit(bound), F.lit(False))
