"""Our counts as Great Expectations result objects: the validation documents archived per table
and run (`pipelines.quality.validation_documents`), readable by GX's own tools."""

from __future__ import annotations

from typing import Any

from pipelines.quality.measure import Outcome
from pipelines.quality.suites import OWN_TYPES, Expectation


def to_gx_result(table: str, outcomes: list[Outcome], run_id: str) -> Any:
    """A GX `ExpectationSuiteValidationResult` built from our counts."""
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
                "partial_unexpected_counts": [{"value": v.value, "count": v.rows} for v in o.failing_values],
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


def _configurations(gx: Any, exps: list[Expectation]) -> list:
    """The GX `ExpectationConfiguration`s of `exps`: built-ins through one GX suite (which checks
    and normalises their kwargs), our own types (`OWN_TYPES`, which GX does not know) as they are."""
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

    specs = [
        {"type": e.type, "kwargs": e.kwargs, "meta": {"name": e.name, "severity": e.severity}} for e in exps
    ]
    builtin = [i for i, e in enumerate(exps) if e.type not in OWN_TYPES]
    suite = gx.ExpectationSuite(name="results", expectations=[specs[i] for i in builtin])
    configured = dict(zip(builtin, (x.configuration for x in suite.expectations), strict=True))
    return [configured.get(i) or ExpectationConfiguration(**specs[i]) for i in range(len(exps))]
