"""`make bench` (`benchmarks.scheduled`): its targets judge the figures they name, and a tiny
run of every phase prints them, each run a `lakehouse run` process."""

from __future__ import annotations

import json

import pytest

from benchmarks import scheduled
from benchmarks.scheduled import Run, targets
from benchmarks.workload import SMALL_FILE_RECORDS, write_small_files


def _runs(**seconds) -> list[Run]:
    """Runs of delta-rs: `full_small=10.0` is the full build on the smaller warehouse, ..."""
    runs = []
    for key, value in seconds.items():
        phase = key.replace("_", " ")
        run = Run("delta-rs", phase, seconds=value)
        if phase == "new files":
            run.discovery_seconds = value
        runs.append(run)
    return runs


def _verdicts(checks) -> dict[str, bool]:
    return {check["target"]: check["passed"] for check in checks}


def test_the_targets_compare_the_larger_warehouse_with_the_smaller_and_with_its_full_build():
    checks = _verdicts(
        targets(
            _runs(
                full_small=100.0,
                increment_small=14.0,
                idle_small=4.0,
                full_large=400.0,
                increment_large=22.0,
                idle_large=7.0,
                new_files=1.5,
            )
        )
    )
    assert checks == {
        "delta-rs: increment on small <= 15% of its full build": True,
        "delta-rs: idle on small <= 5% of its full build": True,
        "delta-rs: increment on large <= 10% of its full build": True,
        "delta-rs: idle on large <= 5% of its full build": True,
        "delta-rs: increment on the larger warehouse <= 1.5x on the smaller": False,  # 22 > 21
        "delta-rs: idle on the larger warehouse <= 1.5x on the smaller": False,  # 7 > 6
        "delta-rs: finding the new files among the small ones < 2 s": True,
    }


def test_a_failed_run_misses_its_targets():
    runs = _runs(full_small=100.0, increment_small=1.0, new_files=0.1)
    runs[1].error = "boom"
    runs[2].error = "boom"
    assert not any(_verdicts(targets(runs)).values())


def test_small_files_are_numbered_on_and_hold_their_records(tmp_path):
    write_small_files(tmp_path, 3)
    write_small_files(tmp_path, 2, first=3)
    files = sorted((tmp_path / "datahub_ece").iterdir())
    assert [f.name for f in files] == [f"batch-{n:08d}.jsonl" for n in range(5)]
    records = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    assert len(records) == 5 * SMALL_FILE_RECORDS and len({json.dumps(r) for r in records}) == len(records)


@pytest.mark.scale  # eight runs, each a new process: about ten minutes on a 2-core machine
def test_every_phase_runs_as_a_new_process_and_prints_its_figures(tmp_path, capsys):
    argv = ["--events", "400", "--large-events", "800", "--increment", "40", "--small-files", "30"]
    argv += ["--engines", "delta-rs", "--workdir", str(tmp_path)]
    assert scheduled.main(argv) == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    phases = [r["phase"] for r in figures["runs"]]
    assert phases == [
        "full small",
        "increment small",
        "idle small",
        "full large",
        "increment large",
        "idle large",
        "small files",
        "new files",
    ]
    assert all(r["seconds"] > 0 and not r["error"] for r in figures["runs"])
    found = figures["runs"][-1]
    assert found["discovery_seconds"] is not None
    assert found["bronze_rows"] == scheduled.NEW_FILES * SMALL_FILE_RECORDS
    assert {t["target"] for t in figures["targets"]} >= {
        "delta-rs: increment on the larger warehouse <= 1.5x on the smaller",
        "delta-rs: finding the new files among the small ones < 2 s",
    }
