"""A `lakehouse run` prints its own lines: the JVM's and Spark's start-up notices, and the report
of Spark's dependency resolver checking Delta's jars, stay off stderr."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pipelines.core.config import PROJECT_ROOT
from tests.support.engines import ENGINES, skip_without_delta_spark

NOTICES = (
    "Using incubator modules",
    "log4j profile",
    "Setting default log level",
    "resolves to a loopback address",
    "SPARK_LOCAL_IP",
    "native-hadoop",
    "resolving dependencies",
    "added as a dependency",
    "artifacts copied",
)


@pytest.mark.slow  # starts a JVM in a subprocess
@pytest.mark.parametrize("engine", ENGINES)
def test_a_run_on_the_samples_leaves_the_start_up_notices_off_the_console(tmp_path, engine):
    skip_without_delta_spark(engine)
    conf = tmp_path / "engine.yaml"
    conf.write_text(f"storage:\n  engine: {engine}\n")
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
            "--conf",
            str(conf),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "done " in done.stdout
    assert f"engine={engine}" in done.stdout.splitlines()[0]
    assert [n for n in NOTICES if n in done.stderr] == [], done.stderr
