"""Gold tests build from a few hand-written rows: they run as the pipeline runs a small input."""

from __future__ import annotations

import pytest

from pipelines.runtime.spark import SMALL_INPUT_CONF, session_conf


@pytest.fixture(autouse=True)
def small_input(spark):
    """Interpreted, one partition, no adaptive re-planning (`SMALL_INPUT_CONF`): a gold build over
    ten rows otherwise spends most of its time compiling generated code for each new plan. The
    generated-code path is the one the generated-scale test takes."""
    with session_conf(spark, SMALL_INPUT_CONF):
        yield
