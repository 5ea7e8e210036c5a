"""`make bench` (`benchmarks.scheduled`): its targets judge the figures they name, and a tiny
run of every phase prints them, each run a `lakehouse run` process; `benchmarks.schedule`
times scheduled runs on a tiny feed and leaves no table fragmented."""

from __future__ import annotations

import json

import pytest

from benchmarks import schedule, scheduled
from benchmarks.scheduled import Run, targets
from benchmarks.workload import SMALL_FILE_RECORDS, generate_landing, write_small_files
from pipelines.store import open_store


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


def test_the_floor_targets_count_jobs_and_scale_seconds_by_the_machines_loop():
    runs = _runs(increment_small=30.0, idle_small=11.0, samples=50.0, full_small=100.0)
    runs[0].spark_jobs, runs[1].spark_jobs = 61, 0
    checks = _verdicts(targets(runs, loop=2.6))  # a machine half the reference machine's speed
    assert {k: v for k, v in checks.items() if "reference" in k or "Spark jobs" in k} == {
        "delta-rs: increment small runs at most 60 Spark jobs": False,
        "delta-rs: increment small <= 20 s on the reference machine": True,  # 15 s there
        "delta-rs: idle small runs at most 0 Spark jobs": True,
        "delta-rs: idle small <= 5 s on the reference machine": False,  # 5.5 s there
        "delta-rs: samples <= 40 s on the reference machine": True,  # 25 s there
        "delta-rs: full small <= 60 s on the reference machine": True,  # 50 s there
    }


def test_jobs_are_counted_by_the_task_whose_tag_they_carry(tmp_path):
    log = tmp_path / "events" / "app" / "events_1"
    log.parent.mkdir(parents=True)
    tags = "spark-session-1-thread-2-lakehouse-task-{},spark-session-1"
    lines = [
        json.dumps({"Event": "SparkListenerJobStart", "Properties": {"spark.job.tags": tags.format(key)}})
        for key in ("gold_tag_timeline", "gold_tag_timeline", "silver_datahub_entity_changes")
    ]
    lines += [
        json.dumps({"Event": "SparkListenerJobStart", "Properties": {}}),
        json.dumps({"Event": "Other"}),
    ]
    log.write_text("\n".join(json.dumps(json.loads(line), separators=(",", ":")) for line in lines))
    assert scheduled.jobs_by_task(tmp_path / "events") == {
        "gold_tag_timeline": 2,
        "silver_datahub_entity_changes": 1,
        "": 1,
    }
    assert scheduled.spark_jobs(tmp_path / "events") == 4


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
        "samples",
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
    increment = figures["runs"][2]
    assert sum(increment["task_jobs"].values()) <= increment["spark_jobs"]
    assert figures["runs"][3]["spark_jobs"] == 0  # the idle run: no session, so no job
    found = figures["runs"][-1]
    assert found["discovery_seconds"] is not None
    assert found["bronze_rows"] == scheduled.NEW_FILES * SMALL_FILE_RECORDS
    assert {t["target"] for t in figures["targets"]} >= {
        "delta-rs: increment on the larger warehouse <= 1.5x on the smaller",
        "delta-rs: finding the new files among the small ones < 2 s",
    }


@pytest.mark.scale  # two timed runs of the schedule simulator: it measures, as `make bench` does
def test_scheduled_runs_print_their_seconds_and_files_and_leave_no_table_fragmented(spark, tmp_path, capsys):
    """`benchmarks.schedule` on a tiny feed: two runs, each timed, the warehouse's files counted,
    and after the last no table holds as many small files as trigger a compaction."""
    landing, warehouse = tmp_path / "landing", tmp_path / "warehouse"
    generate_landing(landing, 300, seed=0)
    conf = tmp_path / "schedule.yaml"
    conf.write_text("maintenance:\n  compact_min_files: 2\n")
    argv = ["--warehouse", str(warehouse), "--landing", str(landing), "--runs", "2", "--events", "30"]
    assert schedule.main([*argv, "--conf", str(conf)], spark=spark) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    runs = json.loads(lines[-1])["runs"]
    assert [r["run"] for r in runs] == [1, 2]
    assert [line.split()[:2] for line in lines[:-1]] == [["run", "1"], ["run", "2"]]
    assert all(r["seconds"] > 0 and r["data_files"] > 0 for r in runs)
    assert "ops.ingestion_log" in runs[0]["compacted"]  # each bronze task logs its files: several a run
    store = open_store(spark, warehouse, "delta-rs")
    assert runs[-1]["data_files"] == schedule.data_files(store)
    assert max(store.compactable_files(t, 32 * 1024 * 1024) for t in store.tables()) < 2
    assert len(list(landing.glob("*/incr-2"))) == 4  # each run landed its increment in every source
