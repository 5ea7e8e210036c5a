"""A `lakehouse run` prints its own lines: the JVM's and Spark's start-up notices stay off stderr."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pipelines.core.config import PROJECT_ROOT

NOTICES = (
    "Using incubator modules",
    "log4j profile",
    "Setting default log level",
    "resolves to a loopback address",
    "SPARK_LOCAL_IP",
    "native-hadoop",
)


@pytest.mark.slow  # starts a JVM in a subprocess
def test_a_run_on_the_samples_leaves_the_start_up_notices_off_the_console(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipelines.cli",
            "run",
            "--landing",
            str(PROJECT_ROOT / "samples" / "landing"),
            "--warehouse",
            str(tmp_path / "warehouse"),
            "--layers",
            "bronze",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "done " in done.stdout
    assert [n for n in NOTICES if n in done.stderr] == [], done.stderr
