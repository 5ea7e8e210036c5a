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

from pyspark.sql import Column, DataFrame, Row, Window
from pyspark.sql import functions as F

from pipelines.core import defaults
from pipelines.core.config import ConfigError
from pipelines.runtime.sql_expressions import column, literal, literals, name, non_null_strings, when

SUITES_DIR = defaults.suites()
SEVERITIES = ("warn", "drop", "fail")
FAILED_DROP = "_failed_drop"
FAILED_WARN = "_failed_warn"
FAILED_FAIL = "_failed_fail"
UNIQUE = "expect_column_values_to_be_unique"
COMPOUND_UNIQUE = "expect_compound_columns_to_be_unique"
NO_OVERLAP = "expect_intervals_to_not_overlap_per_key"  # ours: GX has no built-in for it
# Rules over the rows of a key (`column_list`), evaluated with one window per key in the same
# aggregation as the row-level rules (`measure_output`): gold tables only, whose rows are written
# a whole group at a time, so a key's rows are all in the frame checked.
KEYED = (COMPOUND_UNIQUE, NO_OVERLAP)


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
    example_columns: tuple[str, ...] = ()  # `meta.example_columns`: what names a failing row

    @property
    def column(self) -> str | None:
        return self.kwargs.get("column") or self.kwargs.get("column_A")

    @property
    def keyed(self) -> bool:
        """Evaluated over the rows of each key (`column_list`), not row by row."""
        return self.type in KEYED

    @property
    def key(self) -> tuple[str, ...]:
        return tuple(self.kwargs.get("column_list", ()))

    @property
    def mostly(self) -> float:
        return float(self.kwargs.get("mostly", 1.0))

    @property
    def row_level(self) -> bool:
        return self.type != UNIQUE and not self.keyed


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
    if t == "expect_column_pair_values_a_to_be_greater_than_b":
        a, b = _column(kw["column_A"]), _column(kw["column_B"])
        greater = f"({a} {'>=' if kw.get('or_equal') else '>'} {b})"
        missing = {
            "either_value_is_missing": f"{a} IS NULL OR {b} IS NULL",
            "both_values_are_missing": f"{a} IS NULL AND {b} IS NULL",
            "neither": "false",
        }[kw.get("ignore_row_if", "both_values_are_missing")]
        return f"(({missing}) OR coalesce({greater}, false))"
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


def _as_text(columns: tuple[str, ...]) -> str:
    """The values of `columns` as one text ('null' for a null), joined by '|'."""
    if not columns:
        return "NULL"
    values = [f"coalesce(CAST({_column(c)} AS STRING), 'null')" for c in columns]
    return values[0] if len(values) == 1 else f"concat_ws('|', {', '.join(values)})"


def _example(exp: Expectation) -> str:
    """A failing row's value as text ('null' for a null; its `example_columns` when the suite
    names them), else null."""
    return when(_failing(exp), _as_text(exp.example_columns or ((exp.column,) if exp.column else ())))


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
    "expect_column_pair_values_a_to_be_greater_than_b",
    UNIQUE,
    *KEYED,
}
IGNORE_ROW_IF = ("both_values_are_missing", "either_value_is_missing", "neither")  # the first: GX's default
COMPOUND_IGNORE_ROW_IF = ("all_values_are_missing", "any_value_is_missing", "never")


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
        if exp_type == UNIQUE and severity != "warn":
            raise SuiteError(f"{where}: uniqueness is table-level and can only warn")
        kwargs = dict(item.get("kwargs", {}))
        _check_kwargs(where, table, exp_type, severity, kwargs)
        if name in names:
            raise SuiteError(f"{where}: duplicate name")
        if not re.fullmatch(r"[A-Za-z0-9_.:\-]+", name):
            raise SuiteError(f"{where}: name must be a short identifier")
        names.add(name)
        example = tuple(meta.get("example_columns", ()))
        expectations.append(Expectation(name, exp_type, kwargs, severity, example))
    return Suite(table, tuple(expectations), path)


def _check_kwargs(where: str, table: str, exp_type: str, severity: str, kwargs: dict) -> None:
    """What a suite file can get wrong about the rules only gold suites use."""
    gold = str(table).startswith("gold.")
    if gold and severity == "drop":
        raise SuiteError(f"{where}: a gold table has no quarantine, so no drop rules (warn or fail)")
    if exp_type in KEYED:
        if not gold:
            raise SuiteError(f"{where}: {exp_type} is evaluated on gold tables only")
        if not kwargs.get("column_list"):
            raise SuiteError(f"{where}: {exp_type} needs column_list (the key)")
    if exp_type == COMPOUND_UNIQUE and len(kwargs["column_list"]) < 2:
        # GX's rule: one column is expect_column_values_to_be_unique
        raise SuiteError(f"{where}: {exp_type} needs at least two columns in column_list")
    if exp_type == NO_OVERLAP and not (kwargs.get("from_column") and kwargs.get("to_column")):
        raise SuiteError(f"{where}: {exp_type} needs from_column and to_column")
    allowed = COMPOUND_IGNORE_ROW_IF if exp_type == COMPOUND_UNIQUE else IGNORE_ROW_IF
    if kwargs.get("ignore_row_if", allowed[0]) not in allowed:
        raise SuiteError(f"{where}: ignore_row_if must be one of {allowed}")


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
    """The uniqueness rules (`expect_column_values_to_be_unique`), measured on the rows written."""
    return [e for e in suite.expectations if e.type == UNIQUE] if suite is not None else []


def _keyed(suite: Suite | None) -> list[Expectation]:
    return [e for e in suite.expectations if e.keyed] if suite is not None else []


def no_rows_uniqueness(suite: Suite | None) -> list[Outcome]:
    """What `measure_uniqueness` reports for no rows, without a Spark job."""
    return [Outcome(exp, 0, 0, ()) for exp in _table_level(suite)]


def no_rows_outcomes(suite: Suite | None) -> list[Outcome]:
    """What `measure` then `measure_uniqueness` (or `measure_output`) report for no rows, without
    a Spark job."""
    keyed = [Outcome(exp, 0, 0, ()) for exp in _keyed(suite)]
    return [Outcome(exp, 0, 0, ()) for exp in _row_level(suite)] + keyed + no_rows_uniqueness(suite)


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
    nulls = [f"{_column(c)} IS NULL" for c in exp.key]
    skip = kw.get("ignore_row_if", COMPOUND_IGNORE_ROW_IF[0]) if exp.type == COMPOUND_UNIQUE else "never"
    if skip == "all_values_are_missing":
        checks.append(f"NOT ({' AND '.join(nulls)})")
    elif skip == "any_value_is_missing":
        checks.append(f"NOT ({' OR '.join(nulls)})")
    return " AND ".join(f"({c})" for c in checks) or "true"


def _keyed_failures(
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
            failing = present & (seen > 1)
        else:
            start, end = F.col(exp.kwargs["from_column"]), F.col(exp.kwargs["to_column"])
            before = window.rowsBetween(Window.unboundedPreceding, -1)
            open_before = F.max(present & end.isNull()).over(before)
            latest_end = F.max(F.when(present, end)).over(before)
            overlaps = F.coalesce(open_before, F.lit(False)) | F.coalesce(latest_end > start, F.lit(False))
            failing = present & overlaps
        flag, example = f"_keyed_failed{i}", f"_keyed_example{i}"
        columns[flag] = failing
        columns[example] = F.when(failing, column(_as_text(exp.example_columns or exp.key)))
        results.append((F.col(flag), F.col(example)))
    return (frame.withColumns(columns) if columns else frame), results


def measure_output(output: DataFrame, suite: Suite | None) -> tuple[int, list[Outcome]]:
    """Row count and the outcome of every rule of `suite` on `output` (rows about to be written:
    whole keys, for the keyed rules), all from one aggregation: one Spark job, plus a shuffle
    per distinct key of the keyed rules. Returns (rows, outcomes in the suite's order)."""
    exps = _row_level(suite)
    keyed = _keyed(suite)
    unique = _table_level(suite)
    frame, keyed_results = _keyed_failures(output, keyed)
    keyed_aggs = []
    for i, (failing, example) in enumerate(keyed_results):
        keyed_aggs += [
            F.sum(F.when(failing, 1).otherwise(0)).alias(f"_ku{i}"),
            F.min(example).alias(f"_klo{i}"),
            F.max(example).alias(f"_khi{i}"),
        ]
    row = frame.agg(
        F.count(F.lit(1)).alias("_n"),
        *_rule_aggregates(exps, precomputed=False),
        *keyed_aggs,
        *_uniqueness_aggregates(unique, None),
    ).first()
    total = int(row["_n"])
    found = {o.expectation.name: o for o in _rule_outcomes(row, exps, total)}
    for i, exp in enumerate(keyed):
        examples = tuple(dict.fromkeys(v[:200] for v in (row[f"_klo{i}"], row[f"_khi{i}"]) if v is not None))
        found[exp.name] = Outcome(exp, total, int(row[f"_ku{i}"] or 0), examples)
    found.update((o.expectation.name, o) for o in _uniqueness_outcomes(row, unique, total))
    return total, [found[e.name] for e in suite.expectations] if suite is not None else []


def gate_message(table: str, outcome: Outcome) -> str:
    """The one-line reason a breached `fail` rule stops the run with."""
    return (
        f"{table}: fail-severity expectation '{outcome.expectation.name}' failed for "
        f"{outcome.unexpected_count} of {outcome.element_count} rows "
        f"(e.g. {', '.join(outcome.examples) or '-'})"
    )


def breaches(outcomes: list[Outcome]) -> list[Outcome]:
    """`fail`-severity rules that did not pass."""
    return [o for o in outcomes if o.expectation.severity == "fail" and not o.success]


def to_gx_result(table: str, outcomes: list[Outcome], run_id: str):
    """A GX `ExpectationSuiteValidationResult` built from our counts (for Data Docs and archives)."""
    import great_expectations as gx
    from great_expectations.core import ExpectationSuiteValidationResult, ExpectationValidationResult

    configurations = _configurations(gx, [o.expectation for o in outcomes])
    results = [
        ExpectationValidationResult(
            success=o.success,
            expectation_config=configuration,
            result={
                "element_count": o.element_count,
                "unexpected_count": o.unexpected_count,
                "unexpected_percent": o.unexpected_percent,
                "partial_unexpected_list": list(o.examples),
            },
        )
        for o, configuration in zip(outcomes, configurations, strict=True)
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


def _configurations(gx, exps: list[Expectation]) -> list:
    """The GX `ExpectationConfiguration`s of `exps`: built-ins through one GX suite (which checks
    and normalises their kwargs), our own types (`OWN_TYPES`, which GX does not know) as they are."""
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

    specs = [{"type": e.type, "kwargs": e.kwargs, "meta": _meta(e)} for e in exps]
    builtin = [i for i, e in enumerate(exps) if e.type not in OWN_TYPES]
    suite = gx.ExpectationSuite(name="results", expectations=[specs[i] for i in builtin])
    configured = dict(zip(builtin, (x.configuration for x in suite.expectations), strict=True))
    return [configured.get(i) or ExpectationConfiguration(**specs[i]) for i in range(len(exps))]


OWN_TYPES = (NO_OVERLAP,)  # expectation types of ours, not GX's


def _meta(exp: Expectation) -> dict:
    return {"name": exp.name, "severity": exp.severity}
