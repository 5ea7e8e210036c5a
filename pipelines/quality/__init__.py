"""Data quality: expectation suites, the rules they compile to, how those are measured, the
gate a `fail` rule closes, GX result documents, and the `lakehouse dq-report` page.

One module per job: `suites` (suite files), `rules` (a rule as Spark SQL; the row split),
`measure` (counts and failing values in one aggregation), `collected` (the same counts from rows
collected once, the rules' results columns of their plan), `gate` (a breached `fail` rule stops
the run), `gx_results` (GX result objects), `validation_documents` (where they are kept). The
report (`pipelines.quality.report`) is imported from its module: it reads the ops tables that
the bookkeeping, a user of the measures, writes.
"""

from pipelines.quality.collected import (
    Checks,
    checked_rows,
    measure_collected,
    rule_outcomes,
    table_rows,
    uniqueness_outcomes,
)
from pipelines.quality.gate import QualityGateError, breaches, gate_message
from pipelines.quality.gx_results import to_gx_result
from pipelines.quality.measure import (
    BatchMeasure,
    FailingValue,
    Outcome,
    measure,
    measure_batch,
    measure_output,
    measure_uniqueness,
    no_rows_outcomes,
    no_rows_uniqueness,
)
from pipelines.quality.rules import (
    FAILED_DROP,
    FAILED_FAIL,
    FAILED_WARN,
    flag_rows,
    rule_result_names,
    rule_results,
)
from pipelines.quality.suites import Expectation, Suite, SuiteError, load_suite, parse_suite, suites_dir

__all__ = [
    "FAILED_DROP",
    "FAILED_FAIL",
    "FAILED_WARN",
    "BatchMeasure",
    "Checks",
    "Expectation",
    "FailingValue",
    "Outcome",
    "QualityGateError",
    "Suite",
    "SuiteError",
    "breaches",
    "checked_rows",
    "flag_rows",
    "gate_message",
    "load_suite",
    "measure",
    "measure_batch",
    "measure_collected",
    "measure_output",
    "measure_uniqueness",
    "no_rows_outcomes",
    "no_rows_uniqueness",
    "parse_suite",
    "rule_outcomes",
    "rule_result_names",
    "rule_results",
    "suites_dir",
    "table_rows",
    "to_gx_result",
    "uniqueness_outcomes",
]
