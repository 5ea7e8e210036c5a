"""Expectation suites: one pass of row-level checks in Spark, results as GX objects.

A suite (`expectations/<table>.json`, GX 1.x format) is written once and
drives both the row split (drop -> quarantine, fail -> stop the run) and the
recorded validation result. GX's own Spark validation runs a job per
expectation; here every rule becomes a boolean Column and all counts come
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

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipelines.config import PROJECT_ROOT

SUITES_DIR = PROJECT_ROOT / "expectations"
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


def _column(name: str) -> Column:
    return F.col("`" + name.replace("`", "``") + "`") if "." not in name else F.col(name)


def _bound(value: Any) -> Column:
    return F.lit(value)


def _between(col: Column, lo: Any, hi: Any, strict_lo: bool, strict_hi: bool) -> Column:
    checks = []
    if lo is not None:
        checks.append(col > _bound(lo) if strict_lo else col >= _bound(lo))
    if hi is not None:
        checks.append(col < _bound(hi) if strict_hi else col <= _bound(hi))
    result = F.lit(True)
    for check in checks:
        result = result & check
    return result


def _rule(exp: Expectation) -> Column:
    """True when a row meets `exp`; rows outside a Spark `row_condition` pass (GX semantics)."""
    rule = _unconditional_rule(exp)
    condition = exp.kwargs.get("row_condition")
    if condition is None:
        return rule
    if exp.kwargs.get("condition_parser") != "spark":
        raise SuiteError(f"{exp.name}: row_condition needs condition_parser 'spark'")
    return F.coalesce(~F.expr(condition), F.lit(True)) | rule


def _unconditional_rule(exp: Expectation) -> Column:
    """True when a row meets `exp`. Nulls pass every rule but the null ones (GX semantics)."""
    kw = exp.kwargs
    t = exp.type
    if t == "expect_column_pair_values_to_be_in_set":
        a, b = _column(kw["column_A"]), _column(kw["column_B"])
        pairs = [F.struct(F.lit(x).alias("a"), F.lit(y).alias("b")) for x, y in kw["value_pairs_set"]]
        inside = F.array_contains(F.array(*pairs), F.struct(a.alias("a"), b.alias("b")))
        return a.isNull() | b.isNull() | inside
    col = _column(kw["column"])
    if t == "expect_column_values_to_not_be_null":
        return col.isNotNull()
    if t == "expect_column_values_to_be_null":
        return col.isNull()
    if t == "expect_column_values_to_be_in_set":
        return col.isNull() | col.isin(list(kw["value_set"]))
    if t == "expect_column_values_to_not_be_in_set":
        return col.isNull() | ~col.isin(list(kw["value_set"]))
    if t == "expect_column_values_to_match_regex":
        return col.isNull() | col.rlike(kw["regex"])
    if t == "expect_column_values_to_not_match_regex":
        return col.isNull() | ~col.rlike(kw["regex"])
    if t == "expect_column_values_to_be_between":
        inside = _between(
            col,
            kw.get("min_value"),
            kw.get("max_value"),
            kw.get("strict_min", False),
            kw.get("strict_max", False),
        )
        return col.isNull() | inside
    if t == "expect_column_value_lengths_to_be_between":
        return col.isNull() | _between(F.length(col), kw.get("min_value"), kw.get("max_value"), False, False)
    raise SuiteError(f"unsupported expectation type {t}")


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
    """The configured suites folder (`quality.suites_dir`), relative to the project root."""
    if not setting:
        return SUITES_DIR
    path = Path(setting).expanduser()
    return path if path.is_absolute() else PROJECT_ROOT / path


@cache
def load_suite(table: str, directory: Path = SUITES_DIR) -> Suite | None:
    """The suite named after `table` in `directory`, or None when the table has none."""
    path = directory / f"{table}.json"
    return _parse(path) if path.exists() else None


def flag_rows(df: DataFrame, suite: Suite | None) -> DataFrame:
    """Add `_failed_drop`, `_failed_warn`, `_failed_fail` (array<string> of failed rule names)."""
    empty = F.array().cast("array<string>")
    if suite is None:
        return df.withColumns({FAILED_DROP: empty, FAILED_WARN: empty, FAILED_FAIL: empty})

    def failed(severity: str) -> Column:
        exps = suite.by_severity(severity)
        if not exps:
            return empty
        names = F.array(*[F.when(~_rule(e), F.lit(e.name)) for e in exps])
        return F.filter(names, lambda n: n.isNotNull())

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
    let `measure(..., precomputed=True)` count on a narrow frame without the rules' inputs."""
    columns = []
    for i, exp in enumerate(_row_level(suite)):
        failing = ~_rule(exp)
        value = _column(exp.column).cast("string") if exp.column else F.lit(None)
        columns += [
            failing.alias(f"_rule_failed{i}"),
            F.when(failing, F.coalesce(value, F.lit("null"))).alias(f"_rule_example{i}"),
        ]
    return columns


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
    for i, exp in enumerate(exps):
        if precomputed:
            failing, example = F.col(f"_rule_failed{i}"), F.col(f"_rule_example{i}")
        else:
            failing = ~_rule(exp)
            value = _column(exp.column).cast("string") if exp.column else F.lit(None)
            example = F.when(failing, F.coalesce(value, F.lit("null")))
        aggs += [
            F.sum(F.when(failing, 1).otherwise(0)).alias(f"_u{i}"),
            F.min(example).alias(f"_lo{i}"),
            F.max(example).alias(f"_hi{i}"),
        ]
    row = flagged.agg(*aggs).first()
    total = int(row["_n"])
    outcomes = []
    for i, exp in enumerate(exps):
        examples = tuple(dict.fromkeys(v[:200] for v in (row[f"_lo{i}"], row[f"_hi{i}"]) if v is not None))
        outcomes.append(Outcome(exp, total, int(row[f"_u{i}"] or 0), examples))
    if count_flag:
        return total, outcomes, int(row["_flag"] or 0)
    return total, outcomes


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
    aggs = [F.count(F.lit(1)).alias("_n")]
    for i, exp in enumerate(unique):
        col = _column(exp.column)
        aggs += [F.count(col).alias(f"_c{i}"), F.count_distinct(col).alias(f"_d{i}")]
    if distinct_of:
        aggs.append(F.count_distinct(_column(distinct_of)).alias("_distinct"))
    row = output.agg(*aggs).first()
    total = int(row["_n"])
    outcomes = [
        Outcome(exp, total, int(row[f"_c{i}"]) - int(row[f"_d{i}"]), ()) for i, exp in enumerate(unique)
    ]
    return (total, outcomes, int(row["_distinct"])) if distinct_of else (total, outcomes)


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
