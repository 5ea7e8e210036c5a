"""The crash cases of `tests/support/crash.py` that stand for the rest on Delta's own engine
(delta-spark): a table's first commit and the quarantine's append, killed and repaired."""

from __future__ import annotations

import pytest

from tests.support.crash import *  # noqa: F403 - the shared crash cases: `outcome` and its tests
from tests.support.crash import cases_on

pytest_generate_tests = cases_on("delta-spark")
pytestmark = pytest.mark.heavy
