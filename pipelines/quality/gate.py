"""The quality gate: a breached `fail` rule stops the run, with a one-line reason."""

from __future__ import annotations

from pipelines.quality.measure import Outcome


class QualityGateError(RuntimeError):
    """A `fail`-severity expectation was breached: the run stops."""


def breaches(outcomes: list[Outcome]) -> list[Outcome]:
    """`fail`-severity rules that did not pass."""
    return [o for o in outcomes if o.expectation.severity == "fail" and not o.success]


def gate_message(table: str, outcome: Outcome) -> str:
    """The one-line reason a breached `fail` rule stops the run with."""
    return (
        f"{table}: fail-severity expectation '{outcome.expectation.name}' failed for "
        f"{outcome.unexpected_count} of {outcome.element_count} rows "
        f"(e.g. {', '.join(outcome.examples) or '-'})"
    )
