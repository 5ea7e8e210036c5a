"""Time per event does not grow with size: from 1M to 4M generated events a full build costs at
most 15% more per event (`make test-scale` only: it builds five million events' warehouses)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pipelines.core.config import PROJECT_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.scale]

GROWTH = 0.15


def test_time_per_event_grows_less_than_fifteen_percent_from_one_to_four_million_events(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--sizes", "1000000,4000000", "--engines", "delta-rs"]
        + ["--no-duckdb", "--no-new-process", "--workdir", str(tmp_path)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=6 * 3600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    growth = figures["growth_per_event"]["delta-rs"]["1000000->4000000"]
    assert growth < GROWTH, f"time per event grew {growth:.1%} from 1M to 4M events"
