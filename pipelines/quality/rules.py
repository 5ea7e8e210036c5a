"""A suite's rules as Spark SQL: per rule, a boolean expression true when a row breaks it and
the text that names the failing row.

GX's own Spark validation runs a job per expectation; here every rule becomes a boolean SQL
expression so that all of a suite's counts come from a single aggregation
(`pipelines.quality.measure`), and the same expressions split the rows by severity
(`flag_rows`: drop -> quarantine, fail -> stop the run). Text, not Columns: a suite's rules
become one JVM call each (see pipelines/runtime/sql_expressions.py).
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from pipelines.quality.suites import (
    COMPOUND_IGNORE_ROW_IF,
    COMPOUND_UNIQUE,
    NO_OVERLAP,
    Expectation,
    Suite,
    SuiteError,
)
from pipelines.runtime.sql_expressions import column, literal, literals, name, non_null_strings, when

FAILED_DROP = "_failed_drop"
FAILED_WARN = "_failed_warn"
FAILED_FAIL = "_failed_fail"


def column_sql(column_name: str) -> str:
    """A suite's column as SQL text; a dotted name is a nested field (as `F.col` reads it)."""
    return name(*column_name.split("."))


def _between(value: str, lo: Any, hi: Any, strict_lo: bool, strict_hi: bool) -> str:
    checks = []
    if lo is not None:
        checks.append(f"{value} {'>' if strict_lo else '>='} {literal(lo)}")
    if hi is not None:
        checks.append(f"{value} {'<' if strict_hi else '<='} {literal(hi)}")
    return " AND ".join(f"({check})" for check in checks) or "true"


def _rule(exp: Expectation) -> str:
    """SQL text, true when a row meets `exp`; rows outside a Spark `row_condition` pass (GX semantics)."""
    rule = _unconditional_rule(exp)
    condition = exp.kwargs.get("row_condition")
    if condition is None:
        return rule
    if exp.kwargs.get("condition_parser") != "spark":
        raise SuiteError(f"{exp.name}: row_condition needs condition_parser 'spark'")
    return f"(coalesce(NOT ({condition}), true) OR ({rule}))"


def _unconditional_rule(exp: Expectation) -> str:
    """True when a row meets `exp`. Nulls pass every rule but the null ones (GX semantics)."""
    kw = exp.kwargs
    t = exp.type
    if t == "expect_column_pair_values_to_be_in_set":
        a, b = column_sql(kw["column_A"]), column_sql(kw["column_B"])
        pairs = ", ".join(
            f"named_struct('a', {literal(x)}, 'b', {literal(y)})" for x, y in kw["value_pairs_set"]
        )
        inside = f"array_contains(array({pairs}), named_struct('a', {a}, 'b', {b}))"
        return f"({a} IS NULL OR {b} IS NULL OR {inside})"
    if t == "expect_column_pair_values_a_to_be_greater_than_b":
        a, b = column_sql(kw["column_A"]), column_sql(kw["column_B"])
        greater = f"({a} {'>=' if kw.get('or_equal') else '>'} {b})"
        missing = {
            "either_value_is_missing": f"{a} IS NULL OR {b} IS NULL",
            "both_values_are_missing": f"{a} IS NULL AND {b} IS NULL",
            "neither": "false",
        }[kw.get("ignore_row_if", "both_values_are_missing")]
        return f"(({missing}) OR coalesce({greater}, false))"
    col = column_sql(kw["column"])
    if t == "expect_column_values_to_not_be_null":
        return f"({col} IS NOT NULL)"
    if t == "expect_column_values_to_be_null":
        return f"({col} IS NULL)"
    if t == "expect_column_values_to_be_in_set":
        return f"({col} IS NULL OR {_in(col, kw['value_set'])})"
    if t == "expect_column_values_to_not_be_in_set":
        return f"({col} IS NULL OR NOT {_in(col, kw['value_set'])})"
    if t == "expect_column_values_to_match_regex":
        return f"({col} IS NULL OR {col} RLIKE {literal(kw['regex'])})"
    if t == "expect_column_values_to_not_match_regex":
        return f"({col} IS NULL OR NOT ({col} RLIKE {literal(kw['regex'])}))"
    if t == "expect_column_values_to_be_between":
        inside = _between(
            col,
            kw.get("min_value"),
            kw.get("max_value"),
            kw.get("strict_min", False),
            kw.get("strict_max", False),
        )
        return f"({col} IS NULL OR ({inside}))"
    if t == "expect_column_value_lengths_to_be_between":
        inside = _between(f"length({col})", kw.get("min_value"), kw.get("max_value"), False, False)
        return f"({col} IS NULL OR ({inside}))"
    raise SuiteError(f"unsupported expectation type {t}")


def _in(col: str, values: list) -> str:
    """`col IN (...)`; an empty set holds nothing (`IN ()` is not SQL)."""
    return f"({col} IN ({literals(values)}))" if values else "false"


def failing(exp: Expectation) -> str:
    """SQL text, true when a row breaks the row-level rule `exp`."""
    return f"NOT {_rule(exp)}"


def as_text(columns: tuple[str, ...]) -> str:
    """SQL text: the values of `columns` as one text ('null' for a null), joined by '|'."""
    if not columns:
        return "NULL"
    values = [f"coalesce(CAST({column_sql(c)} AS STRING), 'null')" for c in columns]
    return values[0] if len(values) == 1 else f"concat_ws('|', {', '.join(values)})"


def example(exp: Expectation) -> str:
    """SQL text: a failing row's value as text ('null' for a null; its `example_columns` when the
    suite names them), else null."""
    return when(failing(exp), as_text(exp.example_columns or ((exp.column,) if exp.column else ())))


def flag_rows(df: DataFrame, suite: Suite | None) -> DataFrame:
    """Add `_failed_drop`, `_failed_warn`, `_failed_fail` (array<string> of failed rule names)."""

    def failed(severity: str) -> Column:
        exps = suite.by_severity(severity) if suite is not None else []
        return column(non_null_strings(when(failing(e), literal(e.name)) for e in exps))

    return df.withColumns(
        {FAILED_DROP: failed("drop"), FAILED_WARN: failed("warn"), FAILED_FAIL: failed("fail")}
    )


def rule_results(suite: Suite | None) -> list[Column]:
    """Per row-level rule, whether the row fails it and (if so) its value as text: columns that
    let `measure(..., precomputed=True)` count on a narrow frame without the rules' inputs.
    Named as `rule_result_names` lists them."""
    columns = []
    for i, exp in enumerate(suite.row_level if suite is not None else []):
        failed, value = _rule_result_names(i)
        columns += [column(failing(exp), failed), column(example(exp), value)]
    return columns


def rule_result_names(suite: Suite | None) -> list[str]:
    """The names of the `rule_results` columns, to select or drop them."""
    count = len(suite.row_level) if suite is not None else 0
    return [name for i in range(count) for name in _rule_result_names(i)]


def rule_result_columns(index: int) -> tuple[Column, Column]:
    """(failed flag, example value) of the suite's `index`-th row-level rule in a frame that
    carries the `rule_results` columns."""
    failed, value = _rule_result_names(index)
    return F.col(failed), F.col(value)


def _rule_result_names(index: int) -> tuple[str, str]:
    return f"_rule_failed{index}", f"_rule_example{index}"


def keyed_result_names(index: int) -> tuple[str, str]:
    """(failed flag, example value) column names of the `index`-th keyed rule (`keyed_failures`)."""
    return f"_keyed_failed{index}", f"_keyed_example{index}"


def _present(exp: Expectation) -> str:
    """SQL text, true for the rows a keyed rule looks at: those meeting its `row_condition`,
    without the key values its `ignore_row_if` skips."""
    kw = exp.kwargs
    checks = []
    condition = kw.get("row_condition")
    if condition is not None:
        if kw.get("condition_parser") != "spark":
            raise SuiteError(f"{exp.name}: row_condition needs condition_parser 'spark'")
        checks.append(f"coalesce(({condition}), false)")
    nulls = [f"{column_sql(c)} IS NULL" for c in exp.key]
    skip = kw.get("ignore_row_if", COMPOUND_IGNORE_ROW_IF[0]) if exp.type == COMPOUND_UNIQUE else "never"
    if skip == "all_values_are_missing":
        checks.append(f"NOT ({' AND '.join(nulls)})")
    elif skip == "any_value_is_missing":
        checks.append(f"NOT ({' OR '.join(nulls)})")
    return " AND ".join(f"({c})" for c in checks) or "true"


def keyed_failures(
    frame: DataFrame, keyed: list[Expectation]
) -> tuple[DataFrame, list[tuple[Column, Column]]]:
    """`frame` with, per keyed rule, whether a row breaks it and which key it names.

    One window per distinct key, ordered by the intervals of its overlap rules, so that the
    rules of one key (one current interval, no overlap) share one shuffle and one sort.
    `expect_compound_columns_to_be_unique`: the rows of a key seen more than once (GX counts
    every row of a duplicated key). `expect_intervals_to_not_overlap_per_key`: the intervals that
    begin before an earlier interval of their key (by start, then end, open last) ends; an
    interval ends at `to_column` (excluded; null: still open), so one beginning where another
    ends does not overlap it."""
    orders: dict[tuple[str, ...], list[Column]] = {}
    for exp in keyed:
        order = orders.setdefault(exp.key, [])
        if exp.type == NO_OVERLAP:
            order += [
                F.col(exp.kwargs["from_column"]).asc_nulls_last(),
                F.col(exp.kwargs["to_column"]).asc_nulls_last(),
            ]
    windows = {
        key: Window.partitionBy(*key).orderBy(*order) if order else Window.partitionBy(*key)
        for key, order in orders.items()
    }
    columns, results = {}, []
    for i, exp in enumerate(keyed):
        window = windows[exp.key]
        present = column(_present(exp))
        if exp.type == COMPOUND_UNIQUE:
            everyone = window.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
            seen = F.sum(F.when(present, 1).otherwise(0)).over(everyone if orders[exp.key] else window)
            breaks = present & (seen > 1)
        else:
            start, end = F.col(exp.kwargs["from_column"]), F.col(exp.kwargs["to_column"])
            before = window.rowsBetween(Window.unboundedPreceding, -1)
            open_before = F.max(present & end.isNull()).over(before)
            latest_end = F.max(F.when(present, end)).over(before)
            overlaps = F.coalesce(open_before, F.lit(False)) | F.coalesce(latest_end > start, F.lit(False))
            breaks = present & overlaps
        flag, value = keyed_result_names(i)
        columns[flag] = breaks
        columns[value] = F.when(breaks, column(as_text(exp.example_columns or exp.key)))
        results.append((F.col(flag), F.col(value)))
    return (frame.withColumns(columns) if columns else frame), results
