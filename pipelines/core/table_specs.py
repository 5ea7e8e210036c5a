"""Table specs: what each table module declares so the runner can build its table.

A table module (e.g. `silver/datahub_entity_changes.py`) owns one table and exposes its
`SPEC`. Words used throughout: a *table spec* describes one table, a *task* runs it in the
task graph (`conf/jobs.yaml`), the *job* is that graph scheduled on Databricks.
Transforms are pure `DataFrame -> DataFrame`; reading new input, quality gates, quarantine,
deduplication, writing and bookkeeping are the executors' (`pipelines/executors/`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame

ERRORS_COLUMN = "_errors"  # array<string>: row-level problems found while typing a row
EVENT_MONTH = "event_month"  # first day of the event's month: silver's partition column (`table_layout`)
SILVER_PARTITIONS = (EVENT_MONTH,)


@dataclass(frozen=True)
class BronzeTableSpec:
    """Land one source's new landing files into its bronze table."""

    table: str
    source: str  # key in conf `sources`
    record_arrays: tuple[str, ...] = ()  # wrapper fields whose array holds the records (e.g. usageEvents)
    record_objects: tuple[str, ...] = ()  # wrapper fields holding a single record (e.g. messageBody)
    page_columns: dict[str, str] = field(
        default_factory=dict
    )  # bronze column -> wrapper field kept per record


@dataclass(frozen=True)
class SilverTableSpec:
    """Type the rows of `source` appended since the last run into `table`.

    `transform(new_rows)` returns typed rows with `event_id`, `event_time`,
    `event_date`, the lineage columns (`raw`, `source_file`, `record_index`,
    `ingested_at`) and `_errors`. Rows with errors or failing `drop`
    expectations go to `silver.quarantine`; the rest are deduplicated on
    `event_id` (within the batch and against the table) and appended.
    `reconciles` names the landing source whose bronze rows this table accounts
    for (None for tables derived from another silver table).
    `selects` says which source rows the transform keeps, so a batch holding none of
    them costs a look at one column instead of a typing pass (DataWorks families).
    `source_unique`: the source is a silver table holding each of its keys once, and this
    table's keys derive from the source row's key (one row per source row, or per item
    of it). Rows typed from source rows added by appends then repeat no key this table
    holds, so the executor only checks that the batch's keys are distinct instead of
    deduplicating against the table (after a rewrite of the source it deduplicates).
    `checks`: functions of the table store returning more `quality.Outcome`s recorded with the
    table's own (e.g. the audit pages' collection completeness, `silver.audit_completeness`).
    `partition_by`: the table is partitioned by its events' month (`pipelines.core.table_layout`),
    so a batch's key probe reads the months its events fall in. `fallback_time`: a condition
    true for rows whose `event_time` is not the record's own (a landing time): a duplicate of
    such a row may carry another time, so a batch holding one probes every key.
    `revision` names what the transform's rows are (their columns, how keys are made): a table
    last typed under another revision is typed again from its whole source and replaced, once,
    so the next ordinary run corrects a warehouse typed by an older release. Its commit says so
    (`retyped`), and what reads the table follows: a silver table typed from it is typed again
    too, a gold table reading it is built again in full.
    """

    table: str
    source: str
    transform: Callable[[DataFrame], DataFrame]
    reconciles: str | None = None
    partition_by: tuple[str, ...] = SILVER_PARTITIONS  # derived by the executor (`table_layout`)
    dedup_key: str = "event_id"
    selects: RowSelector | None = None
    source_unique: bool = False
    checks: tuple[Callable[[object], list], ...] = ()  # extra outcomes from the store after a run
    fallback_time: Callable[[], Column] | None = None  # true where event_time is not the record's own
    revision: str = ""


@dataclass(frozen=True)
class RowSelector:
    """The source rows a silver transform keeps, decided by one column's value in Python.

    `accepts(value)` must agree with the transform's own filter: when no distinct value
    of `column` among the new source rows is accepted, the executor records an empty
    batch (watermark, DQ rows of zero elements) without running the transform.
    """

    column: str
    accepts: Callable[[object], bool]


@dataclass(frozen=True)
class RebuildGroups:
    """The general incremental strategy: the touched groups are rebuilt from their whole history
    and replace their rows, so an incremental run equals a full rebuild.

    `expand_groups(touched, relevant_sources)` may add groups linked to the touched ones (e.g. a
    proposal's status event that names no resource); `expand_group_values(values,
    relevant_sources)` returns the same groups for touched groups known as Python strings (a
    small incremental run), so the executor filters with IN lists instead of joining.
    `kept_whole`: the sources whose every row a rebuild keeps, whatever groups it touches (a daily
    table's state, read as one more group): the rows the rebuild carries, which its execution
    mode follows, count them as well as the new rows.
    """

    expand_groups: Callable[[DataFrame, dict[str, DataFrame]], DataFrame] | None = None
    expand_group_values: Callable[[list[str], dict[str, DataFrame]], set[str]] | None = None
    kept_whole: tuple[str, ...] = ()


@dataclass(frozen=True)
class Append:
    """Every group is one silver row's own `event_id`, which its table holds once and never
    rewrites, so a touched group's whole history is its new rows: incremental runs build from
    the new rows alone and append, reading no history and rewriting no file."""


@dataclass(frozen=True)
class Accumulate:
    """For tables of counts that add up: silver holds each event once and only appends, so a
    touched group's new rows follow from its current rows and `build` of the new source rows
    alone, combined by `combine(current, increment)`; no history is read. A run that finds rows
    removed from a source since the last one (a rewrite) rebuilds the groups instead."""

    combine: Callable[[DataFrame, DataFrame], DataFrame]


@dataclass(frozen=True)
class Extend:
    """For tables of intervals that follow from their events in `event_time` order (timelines).

    A row is open while its `open_flag` column is true and ends at its `ends` column. Every
    commit records each source's newest `event_time`. A touched group whose new rows all come
    after the newest event of their `ordering_domains` entry (sources whose events are ordered
    among each other; by default all sources together) is extended from its open rows and its
    new rows alone: `extend(rows, new relevant rows, None)`; its closed rows are neither read nor
    rewritten. A group with an earlier (late) new row is rebuilt from the earliest such time T
    on: `extend(its rows open at T or later, its events from T on, T)`; its rows that closed
    before T stay. Needs an `event_time` column in every source. The table is partitioned by
    `open_flag` (its spec's `partition_by`), so the open rows a run replaces are a small part of
    the table, whatever its history.
    """

    extend: Callable[[DataFrame, dict[str, DataFrame], object], DataFrame]
    ordering_domains: tuple[tuple[str, ...], ...] = ()
    open_flag: str = "is_current"
    ends: str = "valid_to"


IncrementalStrategy = RebuildGroups | Append | Accumulate | Extend


@dataclass(frozen=True)
class GoldTableSpec:
    """Recompute the groups of `table` that new rows of its `sources` touch.

    Incremental contract (the executor does the I/O):
    1. `relevant(source_table, rows)` keeps the rows of one source this table
       uses and adds a `_group` column (the recompute unit, e.g. the dataset an
       association belongs to). Applied to new rows it yields the touched groups;
       applied to the full source it yields the history of those groups.
    2. `build({source_table: relevant rows of the touched groups})` returns the
       complete output rows of those groups, with a `group_key` column equal to
       `_group` and unique `row_key`.
    3. `incremental` says how the touched groups reach the table: rebuilt from their history
       (`RebuildGroups`, the default), appended (`Append`), added up (`Accumulate`) or
       extended in event-time order (`Extend`).

    Layout, so that a run reads and rewrites the part of the table it changes: `partition_by`
    (e.g. `is_current` of interval tables); `locality`, a column all rows of a group share and
    that the relevant source rows carry too (e.g. `event_date` of daily tables), by which an
    `Accumulate` run finds and replaces its groups' rows; `cluster_by`, columns a full build
    writes its files in ranges of, so their statistics tell which files hold a value.

    `revision` names what the rows depend on beyond the sources (the table's columns, the
    configured rules): a table last built under another revision is built again in full, once.

    `checks`: functions of the table store run after every run of the task, whether its sources
    changed or not (e.g. whether a feed went silent, `gold.feed_checks`), each returning
    `{name: [quality.Outcome]}` recorded in `ops.dq_results` under those names.
    """

    table: str
    sources: tuple[str, ...]
    relevant: Callable[[str, DataFrame], DataFrame]
    build: Callable[[dict[str, DataFrame]], DataFrame]
    group_key: str
    row_key: tuple[str, ...]
    partition_by: tuple[str, ...] = ()
    incremental: IncrementalStrategy = field(default_factory=RebuildGroups)
    locality: str | None = None
    cluster_by: tuple[str, ...] = ()
    revision: str = ""
    checks: tuple[Callable[[object], dict[str, list]], ...] = ()
