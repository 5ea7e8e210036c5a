"""A run killed (SIGKILL) at the worst moments is repaired by the next run, and vacuum clears its
debris: every crash case of `tests/support/crash.py` on the delta-rs engine; and the fault
checkpoints themselves kill only where they point."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from pipelines.core.config import PROJECT_ROOT
from pipelines.runtime import faults
from pipelines.runtime.faults import ENV as FAULT_ENV
from tests.support.crash import *  # noqa: F403 - the shared crash cases: `outcome` and its tests
from tests.support.crash import cases_on

pytest_generate_tests = cases_on("delta-rs")
pytestmark = pytest.mark.heavy


@pytest.mark.parametrize(
    ("fault", "calls", "killed_at"),
    [
        ("delta_commit", [("merge_commit", "/w/gold/t"), ("delta_commit", "/w/silver/t")], 2),
        ("delta_commit@silver.t", [("delta_commit", "/w/bronze/t"), ("delta_commit", "/w/silver/t")], 2),
        ("delta_commit@silver.t#2", [("delta_commit", "/w/silver/t")] * 3, 2),
        ("delta_commit@gold.", [("delta_commit", "/w/silver/t")] * 3, None),
    ],
)
def test_checkpoint_kills_only_where_the_fault_points(fault, calls, killed_at):
    """Cheap (no Spark): the hook is inert unless named, and then dies by SIGKILL at the right call."""
    script = ";".join(
        ["from pipelines.runtime import faults"]
        + [
            f"faults.checkpoint({name!r}, {target!r}); print({n}, flush=True)"
            for n, (name, target) in enumerate(calls, 1)
        ]
    )
    env = {**os.environ, FAULT_ENV: fault}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, cwd=PROJECT_ROOT
    )
    survived = [int(line) for line in done.stdout.split()]
    if killed_at is None:
        assert done.returncode == 0 and survived == list(range(1, len(calls) + 1))
    else:
        assert done.returncode == -signal.SIGKILL and survived == list(range(1, killed_at))


def test_a_malformed_fault_is_refused():
    for text in ("", "@silver", "x#0", "x#two"):
        with pytest.raises(ValueError, match=FAULT_ENV):
            faults.parse(text)
    assert faults.parse("merge_commit@gold.#3") == faults.Fault("merge_commit", "gold.", 3)
