"""Expectation suites: one pass of row-level checks in Spark, results as GX objects.

A suite (`expectations/<table>.json`, GX 1.x format, carried in the wheel) is written once and
drives both the row split (drop -> quarantine, fail -> stop the run) and the
recorded validation result. GX's own Spark validation runs a job per
expectation; here every rule becomes a boolean SQL expression and all counts come
from a single aggregation, then GX result objects are built from those counts
(see `to_gx_result`). `tests/pipelines/test_quality.py` checks that GX itself
reaches the same counts on a fixture.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from pipelines.core import defaults
from pipelines.core.config import ConfigError
from pipelines.runtime.sql_expressions import column, literal, literals, name, non_null_strings, when

SUITES_DIR = defaults.suites()
SEVERITIES = ("warn", "drop", "fail")
FAILED_DROP = "_failed_drop"
FAILED_WARN = "_failed_warn"
FAILED_FAIL = "_failed_fail"


class SuiteError(ValueError):
    """A suite file that cannot be used; the message names file and expectation."""


class QualityGateError(RuntimeError):
    """A `fail`-severity expectation was breached: the run stops."""


@dataclass(frozen=True)
class Expectation:
    name: str
    type: str
    kwargs: dict[str, Any]
    severity: str

    @property
    def column(self) -> str | None:
        return self.kwargs.get("column") or self.kwargs.get("column_A")

    @property
    def mostly(self) -> float:
        return float(self.kwargs.get("mostly", 1.0))

    @property
    def row_level(self) -> bool:
        return self.type != "expect_column_values_to_be_unique"


@dataclass(frozen=True)
class Suite:
    table: str
    expectations: tuple[Expectation, ...]
    path: Path

    def by_severity(self, severity: str) -> list[Expectation]:
        return [e for e in self.expectations if e.severity == severity and e.row_level]


def _column(column: str) -> str:
    """A suite's column as SQL text; a dotted name is a nested field (as `F.col` reads it)."""
    return name(*column.split("."))


def _between(value: str, lo: Any, hi: Any, strict_lo: bool, strict_hi: bool) -> str:
    checks = []
    if lo is not None:
        checks.append(f"{value} {'>' if strict_lo else '>='} {literal(lo)}")
    if hi is not None:
        checks.append(f"{value} {'<' if strict_hi else '<='} {literal(hi)}")
    return " AND ".join(f"({check})" for check in checks) or "true"


def _rule(exp: Expectation) -> str:
    """SQL text, true when a row meets `exp`; rows outside a Spark `row_condition` pass (GX semantics).

    Text, not Columns: a suite's rules become one JVM call each (see pipelines/runtime/sql_expressions.py)."""
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
        a, b = _column(kw["column_A"]), _column(kw["column_B"])
        pairs = ", ".join(
            f"named_struct('a', {literal(x)}, 'b', {literal(y)})" for x, y in kw["value_pairs_set"]
        )
        inside = f"array_contains(array({pairs}), named_struct('a', {a}, 'b', {b}))"
        return f"({a} IS NULL OR {b} IS NULL OR {inside})"
    col = _column(kw["column"])
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


def _failing(exp: Expectation) -> str:
    return f"NOT {_rule(exp)}"


def _example(exp: Expectation) -> str:
    """A failing row's value as text ('null' for a null), else null."""
    value = f"CAST({_column(exp.column)} AS STRING)" if exp.column else "NULL"
    return when(_failing(exp), f"coalesce({value}, 'null')")


SUPPORTED = {
    "expect_column_values_to_not_be_null",
    "expect_column_values_to_be_null",
    "expect_column_values_to_be_in_set",
    "expect_column_values_to_not_be_in_set",
    "expect_column_values_to_match_regex",
    "expect_column_values_to_not_match_regex",
    "expect_column_values_to_be_between",
    "expect_column_value_lengths_to_be_between",
    "expect_column_pair_values_to_be_in_set",
    "expect_column_values_to_be_unique",
}


def _parse(path: Path) -> Suite:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise SuiteError(f"{path}: not valid JSON ({exc})") from exc
    table = data.get("meta", {}).get("table") or data.get("name")
    expectations = []
    names = set()
    for index, item in enumerate(data.get("expectations", [])):
        meta = item.get("meta", {})
        exp_type = item.get("type") or item.get("expectation_type")
        severity = meta.get("severity", "warn")
        name = meta.get("name") or f"{exp_type}:{item.get('kwargs', {}).get('column', index)}"
        where = f"{path}: expectation {index} ({name})"
        if exp_type not in SUPPORTED:
            raise SuiteError(f"{where}: unsupported type {exp_type}")
        if severity not in SEVERITIES:
            raise SuiteError(f"{where}: severity must be one of {SEVERITIES}")
        if exp_type == "expect_column_values_to_be_unique" and severity != "warn":
            raise SuiteError(f"{where}: uniqueness is table-level and can only warn")
        if name in names:
            raise SuiteError(f"{where}: duplicate name")
        if not re.fullmatch(r"[A-Za-z0-9_.:\-]+", name):
            raise SuiteError(f"{where}: name must be a short identifier")
        names.add(name)
        expectations.append(Expectation(name, exp_type, dict(item.get("kwargs", {})), severity))
    return Suite(table, tuple(expectations), path)


def suites_dir(setting: str | None = None) -> Path:
    """The configured suites folder (`quality.suites_dir`; `pipelines.core.defaults.resolve` says
    where a relative one is: `expectations` is the suites the package carries)."""
    if not setting:
        return SUITES_DIR
    folder = defaults.resolve(setting)
    if not folder.is_dir():
        raise ConfigError(f"quality.suites_dir: {setting} is not a folder ({folder})")
    return folder


@cache
def load_suite(table: str, directory: Path = SUITES_DIR) -> Suite | None:
    """The suite named after `table` in `directory`, or None when the table has none."""
    path = directory / f"{table}.json"
    return _parse(path) if path.is_file() else None


def flag_rows(df: DataFrame, suite: Suite | None) -> DataFrame:
    """Add `_failed_drop`, `_failed_warn`, `_failed_fail` (array<string> of failed rule names)."""

    def failed(severity: str) -> Column:
        exps = suite.by_severity(severity) if suite is not None else []
        return column(non_null_strings(when(_failing(e), literal(e.name)) for e in exps))

    return df.withColumns(
        {FAILED_DROP: failed("drop"), FAILED_WARN: failed("warn"), FAILED_FAIL: failed("fail")}
    )


@dataclass(frozen=True)
class Outcome:
    expectation: Expectation
    element_count: int
    unexpected_count: int
    examples: tuple[str, ...]

    @property
    def unexpected_percent(self) -> float:
        return 100.0 * self.unexpected_count / self.element_count if self.element_count else 0.0

    @property
    def success(self) -> bool:
        if not self.element_count:
            return True
        allowed = (1.0 - self.expectation.mostly) * self.element_count
        return self.unexpected_count <= allowed


def _row_level(suite: Suite | None) -> list[Expectation]:
    return [e for e in suite.expectations if e.row_level] if suite is not None else []


def rule_results(suite: Suite | None) -> list[Column]:
    """Per row-level rule, whether the row fails it and (if so) its value as text: columns that
    let `measure(..., precomputed=True)` count on a narrow frame without the rules' inputs.
    Named as `rule_result_names` lists them."""
    columns = []
    for i, exp in enumerate(_row_level(suite)):
        failed, example = _rule_result_names(i)
        columns += [column(_failing(exp), failed), column(_example(exp), example)]
    return columns


def rule_result_names(suite: Suite | None) -> list[str]:
    """The names of the `rule_results` columns, to select or drop them."""
    return [name for i in range(len(_row_level(suite))) for name in _rule_result_names(i)]


def _rule_result_names(index: int) -> tuple[str, str]:
    """(failed flag, example value) column names of the suite's `index`-th row-level rule."""
    return f"_rule_failed{index}", f"_rule_example{index}"


def measure(flagged: DataFrame, suite: Suite | None, count_flag: str | None = None, precomputed=False):
    """Row count, per row-level rule its unexpected count and two example values, and (when
    `count_flag` names a boolean column) how many rows have it set: all in one Spark job.
    With `precomputed`, `flagged` carries the `rule_results` columns instead of the rules' inputs.
    Returns (rows, outcomes) or, with `count_flag`, (rows, outcomes, flagged rows).
    """
    exps = _row_level(suite)
    aggs = [F.count(F.lit(1)).alias("_n")]
    if count_flag:
        aggs.append(F.sum(F.col(count_flag).cast("long")).alias("_flag"))
    row = flagged.agg(*aggs, *_rule_aggregates(exps, precomputed)).first()
    total = int(row["_n"])
    outcomes = _rule_outcomes(row, exps, total)
    if count_flag:
        return total, outcomes, int(row["_flag"] or 0)
    return total, outcomes


def _rule_aggregates(exps: list[Expectation], precomputed: bool) -> list[Column]:
    aggs = []
    for i, exp in enumerate(exps):
        if precomputed:
            failing, example = (F.col(c) for c in _rule_result_names(i))
        else:
            failing, example = column(_failing(exp)), column(_example(exp))
        aggs += [
            F.sum(F.when(failing, 1).otherwise(0)).alias(f"_u{i}"),
            F.min(example).alias(f"_lo{i}"),
            F.max(example).alias(f"_hi{i}"),
        ]
    return aggs


def _rule_outcomes(row: Row, exps: list[Expectation], total: int) -> list[Outcome]:
    outcomes = []
    for i, exp in enumerate(exps):
        examples = tuple(dict.fromkeys(v[:200] for v in (row[f"_lo{i}"], row[f"_hi{i}"]) if v is not None))
        outcomes.append(Outcome(exp, total, int(row[f"_u{i}"] or 0), examples))
    return outcomes


def _table_level(suite: Suite | None) -> list[Expectation]:
    return [e for e in suite.expectations if not e.row_level] if suite is not None else []


def no_rows_uniqueness(suite: Suite | None) -> list[Outcome]:
    """What `measure_uniqueness` reports for no rows, without a Spark job."""
    return [Outcome(exp, 0, 0, ()) for exp in _table_level(suite)]


def no_rows_outcomes(suite: Suite | None) -> list[Outcome]:
    """What `measure` then `measure_uniqueness` report for no rows, without a Spark job."""
    return [Outcome(exp, 0, 0, ()) for exp in _row_level(suite)] + no_rows_uniqueness(suite)


def measure_uniqueness(output: DataFrame, suite: Suite | None, distinct_of: str | None = None):
    """Row count and the table-level uniqueness rules of the rows actually written, in one Spark job.
    Returns (rows, outcomes) or, when `distinct_of` names a column, (rows, outcomes, its distinct values)."""
    unique = _table_level(suite)
    row = output.agg(F.count(F.lit(1)).alias("_n"), *_uniqueness_aggregates(unique, distinct_of)).first()
    total = int(row["_n"])
    outcomes = _uniqueness_outcomes(row, unique, total)
    return (total, outcomes, int(row["_distinct"])) if distinct_of else (total, outcomes)


def _uniqueness_aggregates(
    unique: list[Expectation], distinct_of: str | None, only: Column | None = None
) -> list[Column]:
    """Per uniqueness rule its non-null and distinct counts (of the rows where `only` holds)."""

    def counted(text: str) -> Column:
        value = column(text)
        return F.when(only, value) if only is not None else value

    aggs = []
    for i, exp in enumerate(unique):
        col = counted(_column(exp.column))
        aggs += [F.count(col).alias(f"_c{i}"), F.count_distinct(col).alias(f"_d{i}")]
    if distinct_of:
        aggs.append(F.count_distinct(counted(_column(distinct_of))).alias("_distinct"))
    return aggs


def _uniqueness_outcomes(row: Row, unique: list[Expectation], total: int) -> list[Outcome]:
    return [Outcome(exp, total, int(row[f"_c{i}"]) - int(row[f"_d{i}"]), ()) for i, exp in enumerate(unique)]


@dataclass(frozen=True)
class BatchMeasure:
    """`measure` of a batch and, when `measure_batch` took it, `measure_uniqueness` of its accepted
    rows with their distinct keys (None: not measured, the accepted rows are yet to be deduplicated)."""

    rows: int
    outcomes: list[Outcome]
    rejected: int
    accepted_uniqueness: list[Outcome] | None = None
    accepted_distinct: int | None = None

    @property
    def accepted(self) -> int:
        return self.rows - self.rejected


def measure_batch(narrow: DataFrame, suite: Suite | None, reject_flag: str, distinct_of: str) -> BatchMeasure:
    """`measure(narrow, suite, count_flag=reject_flag, precomputed=True)` and `measure_uniqueness`
    of the rows without the flag (`distinct_of` counted too), in one Spark job instead of two:
    for a batch whose keys should be new to its table, appended as it is when they are distinct."""
    exps, unique = _row_level(suite), _table_level(suite)
    row = narrow.agg(
        F.count(F.lit(1)).alias("_n"),
        F.sum(F.col(reject_flag).cast("long")).alias("_flag"),
        *_rule_aggregates(exps, precomputed=True),
        *_uniqueness_aggregates(unique, distinct_of, only=~F.col(reject_flag)),
    ).first()
    total, rejected = int(row["_n"]), int(row["_flag"] or 0)
    return BatchMeasure(
        rows=total,
        outcomes=_rule_outcomes(row, exps, total),
        rejected=rejected,
        accepted_uniqueness=_uniqueness_outcomes(row, unique, total - rejected),
        accepted_distinct=int(row["_distinct"]),
    )


def breaches(outcomes: list[Outcome]) -> list[Outcome]:
    """`fail`-severity rules that did not pass."""
    return [o for o in outcomes if o.expectation.severity == "fail" and not o.success]


def to_gx_result(table: str, outcomes: list[Outcome], run_id: str):
    """A GX `ExpectationSuiteValidationResult` built from our counts (for Data Docs and archives)."""
    import great_expectations as gx
    from great_expectations.core import ExpectationSuiteValidationResult, ExpectationValidationResult

    suite = gx.ExpectationSuite(
        name=table,
        expectations=[
            {"type": o.expectation.type, "kwargs": o.expectation.kwargs, "meta": _meta(o.expectation)}
            for o in outcomes
        ],
    )
    results = [
        ExpectationValidationResult(
            success=o.success,
            expectation_config=exp.configuration,
            result={
                "element_count": o.element_count,
                "unexpected_count": o.unexpected_count,
                "unexpected_percent": o.unexpected_percent,
                "partial_unexpected_list": list(o.examples),
            },
        )
        for o, exp in zip(outcomes, suite.expectations, strict=True)
    ]
    return ExpectationSuiteValidationResult(
        success=all(r.success for r in results),
        results=results,
        suite_name=table,
        statistics={
            "evaluated_expectations": len(results),
            "successful_expectations": sum(r.success for r in results),
            "unsuccessful_expectations": sum(not r.success for r in results),
        },
        meta={"run_id": run_id},
    )


def _meta(exp: Expectation) -> dict:
    return {"name": exp.name, "severity": exp.severity}
