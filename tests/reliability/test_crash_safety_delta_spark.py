"""The crash cases of `tests/support/crash.py` that stand for the rest on Delta's own engine
(delta-spark): a table's first commit and the quarantine's append, killed and repaired."""

from __future__ import annotations

from tests.support.crash import (  # the shared cases' fixture and tests
    cases_on,
    outcome,  # noqa: F401 - the tests' fixture
    test_killed_attempt_left_files_that_were_never_read,  # noqa: F401 - collected here
    test_no_record_is_doubled,  # noqa: F401 - collected here
    test_rerun_after_a_kill_equals_an_uninterrupted_run,  # noqa: F401 - collected here
    test_vacuum_leaves_exactly_the_snapshot_files_in_every_table,  # noqa: F401 - collected here
)


def pytest_generate_tests(metafunc):
    if "outcome" in metafunc.fixturenames:
        metafunc.parametrize("outcome", cases_on("delta-spark"), indirect=True)
