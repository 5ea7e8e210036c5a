"""A suite measured on rows collected once: each rule's result is a column of the plan that
computes the rows, so the rows, the counts, the examples and the failing values all come out of
one Spark job.

Why: measuring a frame with `measure_output` is an aggregation of its own, and its failing values
another, each a Spark action that plans and runs the rows' whole plan again (or reads a cache that
took a third to fill). A small task's rows fit the driver: `checked_rows` adds the rules' results
to the plan, one `toArrow` computes everything, `measure_collected` counts it with pyarrow and
`table_rows` is what the table gets. The rules' SQL is `pipelines.quality.rules`, shared with
`measure_output`; the outcomes are the same, value for value.

    checked, checks = checked_rows(rows, suite)
    collected = checked.toArrow()
    count, outcomes = measure_collected(collected, checks)
    write(table_rows(collected, checks))
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipelines.quality.measure import TOP_VALUES, VALUE_CHARS, FailingValue, Outcome
from pipelines.quality.rules import (
    column_sql,
    keyed_failures,
    keyed_result_names,
    rule_result_names,
    rule_results,
)
from pipelines.quality.suites import Expectation, Suite
from pipelines.runtime.sql_expressions import column

ROW_KEY = "_check_row_key"  # the suite's row key as text, naming a failing row


@dataclass(frozen=True)
class Checks:
    """Which columns of a checked frame hold which rule's results, in the suite's order."""

    suite: Suite | None
    flagged: tuple[tuple[Expectation, str, str], ...]  # (rule, its failed flag, its example value)
    unique: tuple[tuple[Expectation, str], ...]  # (uniqueness rule, the column's values)
    row_key: str | None  # ROW_KEY when the rows carry the suite's row key

    @property
    def names(self) -> list[str]:
        """Every column the checks added (dropped before a write)."""
        flags = [name for _, flag, value in self.flagged for name in (flag, value)]
        return [*flags, *(name for _, name in self.unique), *([self.row_key] if self.row_key else [])]


def checked_rows(rows: DataFrame, suite: Suite | None) -> tuple[DataFrame, Checks]:
    """`rows` with the results of every rule of `suite` as columns of the same plan: per
    row-level and keyed rule (over whole keys: the rows must hold their keys' every row) whether
    the row breaks it and its failing value, per uniqueness rule the column's value, and the
    suite's row key as text."""
    if suite is None:
        return rows, Checks(None, (), (), None)
    names = rule_result_names(suite)
    flagged = [(exp, names[2 * i], names[2 * i + 1]) for i, exp in enumerate(suite.row_level)]
    frame = rows.select("*", *rule_results(suite)) if flagged else rows
    frame, _ = keyed_failures(frame, suite.keyed)
    flagged += [(exp, *keyed_result_names(i)) for i, exp in enumerate(suite.keyed)]
    extra = {}
    unique = []
    for i, exp in enumerate(suite.table_level):
        extra[f"_check_unique{i}"] = column(column_sql(exp.column))
        unique.append((exp, f"_check_unique{i}"))
    row_key = None
    if suite.row_key in rows.columns:
        extra[ROW_KEY] = F.col(suite.row_key).cast("string")
        row_key = ROW_KEY
    if extra:
        frame = frame.withColumns(extra)
    return frame, Checks(suite, tuple(flagged), tuple(unique), row_key)


def table_rows(collected: pa.Table, checks: Checks) -> pa.Table:
    """The collected rows without the checks' columns: what the table gets."""
    return collected.drop_columns(checks.names) if checks.names else collected


def measure_collected(collected: pa.Table, checks: Checks) -> tuple[int, list[Outcome]]:
    """Row count and the outcome of every rule of the suite (in its order), as `measure_output`
    gives them on the same rows, counted by pyarrow on the collected table."""
    total = collected.num_rows
    if checks.suite is None:
        return total, []
    found = {o.expectation.name: o for o in rule_outcomes(collected, checks)}
    found.update((o.expectation.name, o) for o in uniqueness_outcomes(collected, checks))
    return total, [found[e.name] for e in checks.suite.expectations]


def rule_outcomes(collected: pa.Table, checks: Checks) -> list[Outcome]:
    """The outcome of each row-level and keyed rule on the collected rows, in the suite's order
    of each kind (as `measure` gives them on the same rows)."""
    total = collected.num_rows
    return [
        _flagged_outcome(collected, exp, flag, value, checks.row_key, total)
        for exp, flag, value in checks.flagged
    ]


def uniqueness_outcomes(rows: pa.Table, checks: Checks) -> list[Outcome]:
    """The outcome of each uniqueness rule on `rows` (collected rows, or those of them written:
    `measure_uniqueness` on the same rows gives the same)."""
    outcomes = []
    for exp, name in checks.unique:
        values = rows.column(name)
        held = len(values) - values.null_count
        distinct = pc.count_distinct(values, mode="only_valid").as_py() if held else 0
        outcomes.append(Outcome(exp, rows.num_rows, held - distinct, ()))
    return outcomes


def _flagged_outcome(
    collected: pa.Table, exp: Expectation, flag: str, value: str, row_key: str | None, total: int
) -> Outcome:
    """One row-level or keyed rule's outcome: the rows it failed on, two example values (the
    smallest and largest failing value) and, when it failed, its most frequent failing values."""
    failed = pc.fill_null(collected.column(flag), False)
    unexpected = pc.sum(pc.cast(failed, pa.int64())).as_py() or 0
    if not unexpected:
        return Outcome(exp, total, 0, ())
    failing = collected.filter(failed)
    extremes = pc.min_max(failing.column(value))
    examples = tuple(
        dict.fromkeys(
            v[:VALUE_CHARS] for v in (extremes["min"].as_py(), extremes["max"].as_py()) if v is not None
        )
    )
    outcome = Outcome(exp, total, unexpected, examples)
    return replace(outcome, failing_values=_failing_values(failing, value, row_key))


def _failing_values(failing: pa.Table, value: str, row_key: str | None) -> tuple[FailingValue, ...]:
    """The `TOP_VALUES` most frequent failing values (ties by value), each with its row count and
    the smallest and largest row key among its rows, as `measure.failing_values` finds them."""
    values = pc.fill_null(failing.column(value), "null")
    keys = failing.column(row_key) if row_key else pa.nulls(failing.num_rows, pa.string())
    grouped = (
        pa.table({"value": values, "key": keys})
        .group_by("value")
        .aggregate([("value", "count"), ("key", "min"), ("key", "max")])
        .sort_by([("value_count", "descending"), ("value", "ascending")])
        .slice(0, TOP_VALUES)
    )
    found = []
    for row in grouped.to_pylist():
        named = tuple(dict.fromkeys(k for k in (row["key_min"], row["key_max"]) if k is not None))
        found.append(FailingValue(row["value"][:VALUE_CHARS], int(row["value_count"]), named))
    return tuple(found)
