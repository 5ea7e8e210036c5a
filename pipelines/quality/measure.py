"""Counting a suite's rules on a frame: one Spark aggregation for every rule at once.

Each function returns fixed types: `(rows, outcomes)` or a `BatchMeasure`. An `Outcome` holds a
rule's unexpected count out of the rows it saw, two example values, and, when the rule failed on
some rows, its most frequent failing values with their counts and example row keys (`event_id`
unless the suite names another `row_key`): those come from a second, small job that runs only
when a rule failed. The SQL of the rules is `pipelines.quality.rules`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace

from pyspark.sql import Column, DataFrame, Row, Window
from pyspark.sql import functions as F

from pipelines.quality.rules import column_sql, example, failing, keyed_failures, rule_result_columns
from pipelines.quality.suites import Expectation, Suite
from pipelines.runtime.sql_expressions import column

TOP_VALUES = 5  # failing values kept per rule, most frequent first
VALUE_CHARS = 200  # a failing value longer than this is cut


@dataclass(frozen=True)
class FailingValue:
    """One value a rule failed on: how many rows held it, and the row keys of up to two of them."""

    value: str
    rows: int
    row_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outcome:
    expectation: Expectation
    element_count: int
    unexpected_count: int
    examples: tuple[str, ...]
    failing_values: tuple[FailingValue, ...] = ()

    @property
    def unexpected_percent(self) -> float:
        return 100.0 * self.unexpected_count / self.element_count if self.element_count else 0.0

    @property
    def evaluated(self) -> bool:
        """False when the rule saw no rows: it passes (GX's rule) but says nothing."""
        return self.element_count > 0

    @property
    def success(self) -> bool:
        if not self.element_count:
            return True
        allowed = (1.0 - self.expectation.mostly) * self.element_count
        return self.unexpected_count <= allowed


@dataclass(frozen=True)
class BatchMeasure:
    """`measure` of a batch with how many rows its reject flag set and, when `measure_batch` was
    given `distinct_of`, the uniqueness of its accepted rows with their distinct keys (None: not
    measured, the accepted rows are yet to be deduplicated)."""

    rows: int
    outcomes: list[Outcome]
    rejected: int
    accepted_uniqueness: list[Outcome] | None = None
    accepted_distinct: int | None = None

    @property
    def accepted(self) -> int:
        return self.rows - self.rejected


# A rule being counted: its expectation, whether a row breaks it, and the failing row's value.
_Check = tuple[Expectation, Column, Column]


def measure(
    flagged: DataFrame, suite: Suite | None, *, precomputed: bool = False
) -> tuple[int, list[Outcome]]:
    """Row count and the outcome of every row-level rule, in one Spark job (and a second one for
    the failing values when a rule failed). With `precomputed`, `flagged` carries the
    `rule_results` columns instead of the rules' inputs."""
    checks = _row_checks(suite, precomputed)
    row = flagged.agg(F.count(F.lit(1)).alias("_n"), *_rule_aggregates(checks)).first()
    total = int(row["_n"])
    outcomes = _rule_outcomes(row, checks, total)
    return total, _with_failing_values(flagged, suite, checks, outcomes)


def measure_batch(
    narrow: DataFrame, suite: Suite | None, reject_flag: str, distinct_of: str | None = None
) -> BatchMeasure:
    """`measure(narrow, suite, precomputed=True)` with the rows `reject_flag` marks counted, and,
    with `distinct_of`, `measure_uniqueness` of the other rows with that column's distinct values:
    in one Spark job. The uniqueness part is for a batch whose keys should be new to its table,
    appended as it is when they are distinct."""
    checks = _row_checks(suite, precomputed=True)
    unique = suite.table_level if suite is not None and distinct_of else []
    accepted = ~F.col(reject_flag)
    row = narrow.agg(
        F.count(F.lit(1)).alias("_n"),
        F.sum(F.col(reject_flag).cast("long")).alias("_flag"),
        *_rule_aggregates(checks),
        *(_uniqueness_aggregates(unique, distinct_of, only=accepted) if distinct_of else []),
    ).first()
    total, rejected = int(row["_n"]), int(row["_flag"] or 0)
    outcomes = _with_failing_values(narrow, suite, checks, _rule_outcomes(row, checks, total))
    if not distinct_of:
        return BatchMeasure(total, outcomes, rejected)
    return BatchMeasure(
        rows=total,
        outcomes=outcomes,
        rejected=rejected,
        accepted_uniqueness=_uniqueness_outcomes(row, unique, total - rejected),
        accepted_distinct=int(row["_distinct"]),
    )


def measure_uniqueness(output: DataFrame, suite: Suite | None) -> tuple[int, list[Outcome]]:
    """Row count and the table-level uniqueness rules of the rows actually written, in one Spark job."""
    unique = suite.table_level if suite is not None else []
    row = output.agg(F.count(F.lit(1)).alias("_n"), *_uniqueness_aggregates(unique, None)).first()
    total = int(row["_n"])
    return total, _uniqueness_outcomes(row, unique, total)


def measure_output(output: DataFrame, suite: Suite | None) -> tuple[int, list[Outcome]]:
    """Row count and the outcome of every rule of `suite` on `output` (rows about to be written:
    whole keys, for the keyed rules), all from one aggregation: one Spark job, plus a shuffle
    per distinct key of the keyed rules. Returns (rows, outcomes in the suite's order)."""
    if suite is None:
        return int(output.count()), []
    frame, keyed_results = keyed_failures(output, suite.keyed)
    checks = _row_checks(suite, precomputed=False) + [
        (exp, flag, value) for exp, (flag, value) in zip(suite.keyed, keyed_results, strict=True)
    ]
    unique = suite.table_level
    row = frame.agg(
        F.count(F.lit(1)).alias("_n"), *_rule_aggregates(checks), *_uniqueness_aggregates(unique, None)
    ).first()
    total = int(row["_n"])
    found = {o.expectation.name: o for o in _rule_outcomes(row, checks, total)}
    found.update((o.expectation.name, o) for o in _uniqueness_outcomes(row, unique, total))
    counted = _with_failing_values(frame, suite, checks, [found[e.name] for e in suite.expectations])
    return total, counted


def no_rows_uniqueness(suite: Suite | None) -> list[Outcome]:
    """What `measure_uniqueness` reports for no rows, without a Spark job."""
    return [Outcome(exp, 0, 0, ()) for exp in (suite.table_level if suite is not None else [])]


def no_rows_outcomes(suite: Suite | None) -> list[Outcome]:
    """What `measure` then `measure_uniqueness` (or `measure_output`) report for no rows, without
    a Spark job."""
    if suite is None:
        return []
    return [Outcome(exp, 0, 0, ()) for exp in suite.row_level + suite.keyed] + no_rows_uniqueness(suite)


def _row_checks(suite: Suite | None, precomputed: bool) -> list[_Check]:
    exps = suite.row_level if suite is not None else []
    if precomputed:
        return [(exp, *rule_result_columns(i)) for i, exp in enumerate(exps)]
    return [(exp, column(failing(exp)), column(example(exp))) for exp in exps]


def _rule_aggregates(checks: list[_Check]) -> list[Column]:
    aggs = []
    for i, (_, breaks, value) in enumerate(checks):
        aggs += [
            F.sum(F.when(breaks, 1).otherwise(0)).alias(f"_u{i}"),
            F.min(value).alias(f"_lo{i}"),
            F.max(value).alias(f"_hi{i}"),
        ]
    return aggs


def _rule_outcomes(row: Row, checks: list[_Check], total: int) -> list[Outcome]:
    outcomes = []
    for i, (exp, _, _) in enumerate(checks):
        values = (row[f"_lo{i}"], row[f"_hi{i}"])
        examples = tuple(dict.fromkeys(v[:VALUE_CHARS] for v in values if v is not None))
        outcomes.append(Outcome(exp, total, int(row[f"_u{i}"] or 0), examples))
    return outcomes


def _uniqueness_aggregates(
    unique: list[Expectation], distinct_of: str | None, only: Column | None = None
) -> list[Column]:
    """Per uniqueness rule its non-null and distinct counts (of the rows where `only` holds)."""

    def counted(text: str) -> Column:
        value = column(text)
        return F.when(only, value) if only is not None else value

    aggs = []
    for i, exp in enumerate(unique):
        col = counted(column_sql(exp.column))
        aggs += [F.count(col).alias(f"_c{i}"), F.count_distinct(col).alias(f"_d{i}")]
    if distinct_of:
        aggs.append(F.count_distinct(counted(column_sql(distinct_of))).alias("_distinct"))
    return aggs


def _uniqueness_outcomes(row: Row, unique: list[Expectation], total: int) -> list[Outcome]:
    return [Outcome(exp, total, int(row[f"_c{i}"]) - int(row[f"_d{i}"]), ()) for i, exp in enumerate(unique)]


def _with_failing_values(
    frame: DataFrame, suite: Suite | None, checks: list[_Check], outcomes: list[Outcome]
) -> list[Outcome]:
    """`outcomes` with the failing values of each rule in `checks` that failed on some rows."""
    failed = {o.expectation.name for o in outcomes if o.unexpected_count}
    wanted = [check for check in checks if check[0].name in failed]
    if not wanted:
        return outcomes
    row_key = suite.row_key if suite is not None and suite.row_key in frame.columns else None
    values = failing_values(frame, wanted, row_key)
    return [replace(o, failing_values=values.get(o.expectation.name, ())) for o in outcomes]


def failing_values(
    frame: DataFrame, checks: list[_Check], row_key: str | None
) -> dict[str, tuple[FailingValue, ...]]:
    """Per rule, its `TOP_VALUES` most frequent failing values (ties by value), each with its row
    count and the smallest and largest `row_key` among its rows: one Spark job."""
    entries = F.array(
        *[
            F.when(
                breaks,
                F.struct(F.lit(exp.name).alias("rule"), F.coalesce(value, F.lit("null")).alias("value")),
            )
            for exp, breaks, value in checks
        ]
    )
    key = F.col(row_key).cast("string") if row_key else F.lit(None).cast("string")
    pairs = frame.select(F.explode(F.filter(entries, lambda e: e.isNotNull())).alias("_e"), key.alias("_key"))
    grouped = pairs.groupBy(F.col("_e.rule").alias("rule"), F.col("_e.value").alias("value")).agg(
        F.count(F.lit(1)).alias("rows"), F.min("_key").alias("first_key"), F.max("_key").alias("last_key")
    )
    order = Window.partitionBy("rule").orderBy(F.desc("rows"), "value")
    top = grouped.withColumn("_rank", F.row_number().over(order)).where(F.col("_rank") <= TOP_VALUES)
    found: dict[str, list[FailingValue]] = defaultdict(list)
    for row in top.orderBy("rule", "_rank").collect():
        keys = tuple(dict.fromkeys(k for k in (row["first_key"], row["last_key"]) if k is not None))
        found[row["rule"]].append(FailingValue(row["value"][:VALUE_CHARS], int(row["rows"]), keys))
    return {rule: tuple(values) for rule, values in found.items()}
