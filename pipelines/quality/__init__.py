"""Data quality: expectation suites, their validation documents, and the `lakehouse dq-report` page.

The report (`pipelines.quality.report`) is imported from its module: it reads the ops tables
that the bookkeeping, a user of the suites, writes.
"""

from pipelines.quality.suites import QualityGateError, Suite, SuiteError, load_suite

__all__ = ["QualityGateError", "Suite", "SuiteError", "load_suite"]
