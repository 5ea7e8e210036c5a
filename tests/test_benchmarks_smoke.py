"""The benchmark end to end on a tiny size, and the DuckDB reference against the plain-Python model.

Why: the benchmark's numbers are only worth printing if the run really happened
(every layer timed, positive figures, one JSON line a script can read), and the
DuckDB reference only cross-checks gold if it is right itself, so it is held to
`tests/support/reference_model.py` on the same landing folder.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import time
from pathlib import Path

import pytest

from benchmarks import run as bench
from benchmarks import settings_ab
from benchmarks.duckdb_reference import run_reference
from benchmarks.instrument import Instrumentation, MemorySampler, TaskTiming, jvm_cpu_seconds
from benchmarks.report import report
from benchmarks.targets import evaluate_targets
from benchmarks.workload import add_increment, generate_landing
from pipelines.core.config import PROJECT_ROOT
from pipelines.core.graph import load_graph
from pipelines.runtime.spark import has_delta
from pipelines.store import open_store
from tests.support.reference_model import (
    expected_current_owners,
    expected_current_tags,
    iter_records,
    landing_files,
)

EVENTS = 2_000
# The DataHub and OpenMetadata chains into the two timelines: every kind of stage (bronze, silver with
# DQ, gold) in 7 tasks instead of the graph's 34, so the smoke test stays quick on a shared machine.
TASKS = "gold_tag_timeline,gold_ownership_timeline"
APPEND_ONLY = ("bronze", "silver")
PARALLEL = 3  # through --conf: the run takes the file, the tasks overlap and the report still adds up


@pytest.fixture(scope="module")
def printed(spark, tmp_path_factory) -> tuple[dict, Path, str, int]:
    """One benchmark run of the delta-rs engine on the shared session: (its final JSON line, workdir,
    text report, exit code)."""
    workdir = tmp_path_factory.mktemp("bench")
    conf = workdir / "bench.yaml"
    conf.write_text(f"run:\n  parallel_tasks: {PARALLEL}\n")
    out = io.StringIO()
    argv = ["--events", str(EVENTS), "--workdir", str(workdir), "--tasks", TASKS, "--conf", str(conf)]
    with contextlib.redirect_stdout(out):
        code = bench.main([*argv, "--engines", "delta-rs"], spark=spark)
    text = out.getvalue()
    return json.loads(text.strip().splitlines()[-1]), workdir / f"events-{EVENTS}" / "delta-rs", text, code


def _tasks(figures: dict, phase: str) -> dict[str, dict]:
    return {t["key"]: t for t in figures[phase]["tasks"]}


@pytest.mark.slow
def test_full_and_incremental_runs_complete(printed):
    figures, _workdir, _text, code = printed
    assert bench.failures(figures) == [] and code == 0


@pytest.mark.slow
def test_the_conf_file_reaches_the_runner_and_parallel_task_seconds_add_up(printed):
    figures, _workdir, _text, _code = printed
    assert figures["parallel_tasks"] == PARALLEL
    full = figures["full"]  # its two bronze tasks start together: their seconds overlap
    assert full["tasks_s"] < full["task_seconds_sum"]
    for phase in ("full", "incremental"):
        run = figures[phase]
        assert run["tasks_s"] <= run["task_seconds_sum"] + 0.01
        assert run["tasks_s"] <= run["pipeline_s"] + 0.01
        assert max(run["layer_s"].values()) <= run["tasks_s"] + 0.01


def test_sizes_pass_the_conf_file_to_each_size():
    args = bench.parse_args(["--sizes", "1000,2000", "--conf", "bench.yaml"])
    command = bench._child_command(args, 1000, "delta-rs")
    assert command[command.index("--conf") + 1] == str(Path("bench.yaml").resolve())
    assert command[command.index("--engines") + 1] == "delta-rs"
    assert "--no-new-process" not in command
    no_new = bench.parse_args(["--no-new-process"])
    assert "--no-new-process" in bench._child_command(no_new, 1000, "delta-spark")


def test_engines_default_to_both_and_take_a_comma_list():
    assert bench.parse_args([]).engines == ["delta-rs", "delta-spark"]
    assert bench.parse_args(["--engines", "delta-spark"]).engines == ["delta-spark"]
    assert bench.parse_args(["--engines", "delta-spark,delta-rs,delta-spark"]).engines == [
        "delta-spark",
        "delta-rs",
    ]
    with pytest.raises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
        bench.parse_args(["--engines", "parquet"])


@pytest.mark.slow
def test_stage_tables_print_every_task_and_the_dq_and_layer_totals(printed):
    figures, _workdir, text, _code = printed
    graph = load_graph().up_to(TASKS.split(","))
    keys = [t.key for t in graph.ordered()]
    full_table, incremental_table = text.split("== incremental run")[0], text.split("== incremental run")[1]
    for table, phase in ((full_table, "full"), (incremental_table, "incremental")):
        assert list(_tasks(figures, phase)) == keys
        lines = table.splitlines()
        for label in [*keys, "= bronze", "= silver", "= gold", "= DQ validation (in silver)", "= pipeline"]:
            assert any(line.startswith(label + " ") for line in lines), (phase, label)
        for task in figures[phase]["tasks"]:
            assert task["seconds"] > 0 and task["driver_mb"] > 0 and task["jobs"] > 0, task
    silver = [t for t in figures["full"]["tasks"] if t["layer"] == "silver"]
    assert all(t["dq_s"] > 0 for t in silver)
    assert figures["full"]["dq_s"] == pytest.approx(sum(t["dq_s"] for t in silver), abs=0.01)
    assert 0 < figures["dq_share_of_pipeline"] < 1
    assert figures["full"]["events_per_s"] > 0 and figures["driver_memory_mb"] > 0
    assert "== summary ==" in text and "== targets ==" in text and "spark / duckdb" in text


@pytest.mark.slow
def test_incremental_run_is_reported_on_the_new_files_only(printed):
    figures, _workdir, _text, _code = printed
    incremental = figures["incremental"]
    assert incremental["events"] == EVENTS // 100 and incremental["folder"] == "incr-1"
    bronze = [t for t in incremental["tasks"] if t["layer"] == "bronze"]
    assert sum(t["rows_out"] for t in bronze) <= incremental["events"]
    assert all(t["status"] == "SUCCESS" and t["rows_out"] > 0 for t in bronze)
    assert incremental["wall_s"] > 0 and 0 < figures["incremental_share_of_full"]


@pytest.mark.slow
def test_a_second_increment_runs_in_a_new_process_and_is_reported(printed):
    """What a scheduled `lakehouse run` waits for: the same size of increment, a fresh interpreter and JVM."""
    figures, _workdir, text, _code = printed
    cold, warm = figures["new_process_incremental"], figures["incremental"]
    assert cold["error"] is None and cold["folder"] == "incr-2" and cold["events"] == warm["events"]
    assert [t["key"] for t in cold["tasks"]] == list(_tasks(figures, "incremental"))
    assert all(t["status"] == "SUCCESS" for t in cold["tasks"])
    assert all(t["rows_out"] > 0 for t in cold["tasks"] if t["layer"] == "bronze")
    # its own clock: Spark started (not the test's shared session) and the run took time
    assert cold["startup_s"] > 0 and cold["pipeline_s"] > 0
    assert cold["wall_s"] >= cold["startup_s"] + cold["pipeline_s"]
    assert f"incremental, new process  {cold['wall_s']:8.2f} s" in text
    assert (
        cold["jit"] == "C1 only" and "JIT C1 only" in text
    )  # a small increment: `pipelines.runtime.tuning.jit`
    assert f"in a new process {cold['wall_s']:.1f} s" in text  # the incremental target's note


@pytest.mark.slow
def test_both_engines_run_on_the_same_data_and_write_the_same_rows(spark, tmp_path):
    """Side by side on the suite's session (it carries Delta's jars): each engine gets its own
    warehouse on byte-equal landing data, and every task writes and leaves the same rows."""
    if not has_delta(spark):
        pytest.skip("the suite's session has no Delta jars")
    out = io.StringIO()
    argv = ["--events", "1000", "--workdir", str(tmp_path), "--tasks", "silver_datahub_entity_changes"]
    with contextlib.redirect_stdout(out):
        code = bench.main([*argv, "--no-duckdb", "--no-new-process"], spark=spark)
    text = out.getvalue()
    figures = json.loads(text.strip().splitlines()[-1])
    assert code == 0 and [r["engine"] for r in figures["engines"]] == ["delta-rs", "delta-spark"]
    rs, ds = figures["engines"]
    keys = ["bronze_datahub_entity_change_events", "silver_datahub_entity_changes"]
    assert rs["landing"]["sha256"] == ds["landing"]["sha256"]
    for engine in bench.ENGINES:
        assert (
            tmp_path / "events-1000" / engine / "warehouse" / "silver" / "datahub_entity_changes"
        ).is_dir()
    for phase in ("full", "incremental"):
        rows = [{t["key"]: (t["rows_out"], t["table_rows"]) for t in r[phase]["tasks"]} for r in (rs, ds)]
        assert rows[0] == rows[1] and list(rows[0]) == keys, phase
    assert "1,000 events (same landing data):" in text.split("== engines side by side ==")[1]


def test_a_failed_new_process_run_fails_the_benchmark():
    figures = {"events": 10, "full": {"error": None}, "incremental": {"error": None}}
    assert bench.failures(figures) == []
    figures["new_process_incremental"] = {"error": "exit 1: boom"}
    assert bench.failures(figures) == ["10 new_process_incremental: exit 1: boom"]
    both = {"engines": [figures | {"engine": "delta-spark"}, {"events": 10, "engine": "delta-rs"}]}
    assert bench.failures(both) == ["10 delta-spark new_process_incremental: exit 1: boom"]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="the JVM's CPU is read from /proc (Linux)")
def test_each_run_reports_the_jvms_cpu_and_its_jit_share(printed):
    figures, _workdir, text, _code = printed
    for phase in ("full", "incremental"):
        run = figures[phase]
        assert 0 < run["jit_cpu_s"] < run["jvm_cpu_s"]
    assert "of which JIT" in text


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="the JVM's CPU is read from /proc (Linux)")
def test_jvm_cpu_seconds_counts_the_compiler_threads_and_grows_with_work(spark):
    pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    before = jvm_cpu_seconds(pid)
    spark.range(3_000_000).selectExpr("sum(id * 7 % 13)").collect()
    spent = jvm_cpu_seconds(pid) - before
    assert before.jit > 0  # a running Spark has compiled something already
    assert before.jit < before.jvm and spent.jvm > 0 and spent.jit >= 0
    assert jvm_cpu_seconds(None) is None


@pytest.mark.slow
def test_each_task_reports_the_seconds_its_spark_jobs_ran(printed):
    """Spark's share of a task: positive when it ran specs, never more than the task's own seconds."""
    figures, _workdir, text, _code = printed
    for phase in ("full", "incremental"):
        run = figures[phase]
        assert run["untimed_jobs"] == 0
        for task in run["tasks"]:
            assert 0 < task["spark_s"] <= task["seconds"] + 0.01, (phase, task["key"])
        assert run["spark_jobs_s"] == pytest.approx(sum(t["spark_s"] for t in run["tasks"]), abs=0.01)
        assert run["spark_jobs_s"] < run["task_seconds_sum"]
    assert "in Spark jobs             full " in text


def test_spark_job_seconds_come_from_the_status_store_and_overlaps_count_once(spark):
    instrumentation = Instrumentation(spark, MemorySampler(spark))
    tracker = spark.sparkContext.statusTracker()
    spark.sparkContext.setJobGroup("bench-test-spark-seconds", "two jobs")
    try:
        started = time.monotonic()
        spark.range(200_000).selectExpr("sum(id % 7)").collect()
        spark.range(100_000).repartition(3).selectExpr("count(*)").collect()
        elapsed = time.monotonic() - started
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    ids = list(tracker.getJobIdsForGroup("bench-test-spark-seconds"))
    both = TaskTiming("full", "both", "t.both", "silver", job_ids=ids)
    twice = TaskTiming("full", "twice", "t.twice", "silver", job_ids=ids + ids)
    unknown = TaskTiming("full", "unknown", "t.unknown", "gold", job_ids=[10**9])
    assert instrumentation.time_spark_jobs([both, twice, unknown], wait_s=0.2) == [10**9]
    assert len(ids) >= 2 and 0 < both.spark_s <= elapsed + 0.01
    assert twice.spark_s == both.spark_s  # a job counted twice covers the same seconds
    assert unknown.spark_s == 0.0


@pytest.mark.slow
def test_rows_written_reconcile_with_the_warehouse(printed, spark):
    """Full, warm incremental and new-process runs: each table's rows are what the runs wrote."""
    figures, workdir, _text, _code = printed
    full, incremental = _tasks(figures, "full"), _tasks(figures, "incremental")
    cold = {t["key"]: t for t in figures["new_process_incremental"]["tasks"]}
    store = open_store(spark, workdir / "warehouse", "delta-rs")
    for key, task in full.items():
        assert task["table_rows"] == task["rows_out"] > 0, key  # from an empty warehouse
    for key, task in incremental.items():
        counted = store.read(task["table"]).count()
        assert cold[key]["table_rows"] == counted, key
        if task["layer"] in APPEND_ONLY:
            assert task["table_rows"] == full[key]["rows_out"] + task["rows_out"], key
            assert counted == task["table_rows"] + cold[key]["rows_out"], key
        else:  # gold replaces the touched groups: the rows rebuilt are part of the table
            assert 0 < task["rows_out"] <= task["table_rows"], key


@pytest.mark.slow
@pytest.mark.parametrize("moment", ["full", "after_increment"])
def test_gold_timelines_equal_the_duckdb_reference(printed, moment):
    figures, _workdir, _text, _code = printed
    check = figures["duckdb"][moment]["cross_check"]
    assert set(check) == {
        f"{table}.{part}"
        for table in ("tag_timeline", "ownership_timeline")
        for part in ("current", "intervals")
    }
    assert {name: c["equal"] for name, c in check.items()} == dict.fromkeys(check, True)
    assert all(c["reference_rows"] > 0 for c in check.values())
    assert figures["duckdb"]["full"]["seconds"] > 0 and figures["duckdb"]["ratio_spark_over_duckdb"] > 0


@pytest.mark.slow
def test_duckdb_reference_equals_the_reference_model_on_the_benchmark_landing(printed):
    _figures, workdir, _text, _code = printed
    landing = workdir / "landing"
    ref = run_reference(landing)
    try:
        assert ref.current_tags() == expected_current_tags(landing)
        assert ref.current_owners() == expected_current_owners(landing)
    finally:
        ref.con.close()


def test_duckdb_reference_equals_the_reference_model_on_the_samples():
    landing = PROJECT_ROOT / "samples" / "landing"
    ref = run_reference(landing)
    try:
        assert ref.current_tags() == expected_current_tags(landing)
        assert ref.current_owners() == expected_current_owners(landing)
        assert ref.skipped_documents == []
    finally:
        ref.con.close()


def test_increment_lands_under_new_folders_of_each_source(tmp_path):
    landing = tmp_path / "landing"
    generate_landing(landing, 200, seed=1)
    before = {p for p in landing.rglob("*") if p.is_file()}
    counts, folder = add_increment(landing, 50, seed=2)
    added = {p for p in landing.rglob("*") if p.is_file()} - before
    assert folder == "incr-1" and sum(counts.values()) == 50
    assert {p.relative_to(landing).parts[:2] for p in added} == {
        (source, "incr-1") for source in ("datahub_ece", "datahub_audit", "openmetadata", "dataworks")
    }
    assert add_increment(landing, 10, seed=3)[1] == "incr-2"
    shutil.rmtree(landing)


def _ece_times(folder: Path) -> list[int]:
    return [
        r["auditStamp"]["time"]
        for path in landing_files(folder)
        for r in iter_records(path)
        if isinstance(r, dict)
    ]


def test_increments_after_the_base_follow_it_and_each_other_in_time(tmp_path):
    """A feed's next batches: later than every base event, at the base's pace, one after another."""
    landing = tmp_path / "landing"
    generate_landing(landing, 2_000, seed=1)
    base = _ece_times(landing / "datahub_ece")
    add_increment(landing, 200, seed=2, after_base_of=2_000)
    first = _ece_times(landing / "datahub_ece" / "incr-1")
    add_increment(landing, 200, seed=3, after_base_of=2_000)
    second = _ece_times(landing / "datahub_ece" / "incr-2")
    assert max(base) < min(first) and max(first) < min(second)
    base_span, first_span = max(base) - min(base), max(first) - min(first)
    assert 0.05 < first_span / base_span < 0.15  # 10% of the events, about 10% of the time
    inside = add_increment(landing, 200, seed=4)[1]  # no base given: inside the base's years
    assert min(base) <= min(_ece_times(landing / "datahub_ece" / inside)) < max(base)
    shutil.rmtree(landing)


def _result(events: int, pipeline_s: float, wall_s: float) -> dict:
    """The figures `evaluate_targets` reads, for one size."""
    return {
        "events": events,
        "full": {"wall_s": wall_s, "pipeline_s": pipeline_s, "error": None},
        "incremental": {"wall_s": 5.0, "events": events // 100, "error": None},
        "incremental_share_of_full": 5.0 / wall_s,
        "dq_share_of_pipeline": 0.1,
        "dq_split": True,
        "driver_memory_mb": 3000,
        "spark_startup_s": 8.0,
        "duckdb": {"ratio_spark_over_duckdb": 12.5},
    }


def test_targets_pass_miss_or_say_what_run_they_need():
    verdicts = {t.name: t.verdict for t in evaluate_targets([_result(250_000, 20.0, 30.0)])}
    assert verdicts["full pipeline, 1M events"] == "N/A"
    assert verdicts["DQ share of pipeline time"] == "PASS"
    sizes = [_result(1_000_000, 50.0, 58.0), _result(4_000_000, 240.0, 250.0)]
    targets = {t.name: t for t in evaluate_targets(sizes)}
    assert targets["full pipeline, 1M events"].verdict == "PASS"
    assert targets["growth per event 1M -> 4M"].value == pytest.approx(0.2)
    assert targets["growth per event 1M -> 4M"].verdict == "MISS"
    assert targets["driver memory at 4M"].verdict == "PASS"
    sizes[0]["incremental"]["error"] = "gold_x: failed"
    verdicts = {t.name: t.verdict for t in evaluate_targets(sizes)}
    assert verdicts["full pipeline, 1M events"] == verdicts["incremental 1% on top of 1M"] == "MISS"


def _fake_children(monkeypatch, slower: dict[str, float]) -> list[tuple[int, str]]:
    """`_run_child` replaced: each child's (events, engine) recorded, its result made up, the
    engine's seconds multiplied by `slower[engine]`."""
    children = []

    def fake_child(command):
        events, engine = int(command[command.index("--events") + 1]), command[command.index("--engines") + 1]
        children.append((events, engine))
        factor = slower.get(engine, 1.0)
        result = _result(events, pipeline_s=factor * events / 20_000, wall_s=factor * (events / 20_000 + 8))
        result["incremental"]["wall_s"] *= factor
        for phase in ("full", "incremental"):
            result[phase]["layer_s"] = {"bronze": 1.0, "silver": 2.0, "gold": 3.0}
        result |= {
            "landing": {"files": 3, "mb": 1.0, "sha256": "same"},
            "driver_memory_mb": round(3000 * factor),
        }
        return result | {"engine": engine}

    monkeypatch.setattr(bench, "_run_child", fake_child)
    return children


def test_sizes_run_one_process_each_and_print_the_growth(monkeypatch, capsys):
    children = _fake_children(monkeypatch, {})
    assert bench.main(["--sizes", "4000000,1000000", "--engines", "delta-rs"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    figures = json.loads(lines[-1])
    assert children == [(1_000_000, "delta-rs"), (4_000_000, "delta-rs")]
    assert figures["growth_per_event"] == {"delta-rs": {"1000000->4000000": 0.0}}
    assert any(line.lstrip().startswith("4,000,000") and "+0.0%" in line for line in lines)
    assert "engines side by side" not in "\n".join(lines)


def test_engines_run_one_process_each_on_the_same_data_and_print_side_by_side(monkeypatch, capsys):
    children = _fake_children(monkeypatch, {"delta-spark": 3.0})
    assert bench.main(["--events", "1000000"]) == 0
    text = capsys.readouterr().out
    figures = json.loads(text.strip().splitlines()[-1])
    assert children == [(1_000_000, "delta-rs"), (1_000_000, "delta-spark")]
    assert [r["engine"] for r in figures["engines"]] == ["delta-rs", "delta-spark"]
    table = text.split("== engines side by side ==")[1]
    assert "delta-rs " in table and "delta-spark " in table
    assert "faster full build: delta-rs (58.0 s vs 174.0 s, 3.00x)" in table
    assert "less driver memory: delta-rs (3,000 MB vs 9,000 MB, 3.00x)" in table
    assert all(line == line.rstrip() for line in table.splitlines())
    assert "(same landing data)" in table


def test_sizes_with_both_engines_print_each_engines_scaling_and_the_comparison(monkeypatch, capsys):
    children = _fake_children(monkeypatch, {"delta-spark": 2.0})
    assert bench.main(["--sizes", "1000000,4000000"]) == 0
    text = capsys.readouterr().out
    figures = json.loads(text.strip().splitlines()[-1])
    assert children == [(1_000_000, e) for e in bench.ENGINES] + [(4_000_000, e) for e in bench.ENGINES]
    assert set(figures["growth_per_event"]) == set(bench.ENGINES)
    assert "== scaling, delta-rs" in text and "== scaling, delta-spark" in text
    assert "4,000,000 events (same landing data):" in text.split("== engines side by side ==")[1]


def _phase(name: str, events: int) -> dict:
    tasks = [
        bench.TaskTiming(name, "bronze_a", "bronze.a", "bronze", "SUCCESS", 2.0, 100, 100, 100, scan_s=0.2),
        bench.TaskTiming(name, "silver_a", "silver.a", "silver", "SUCCESS", 3.0, 100, 98, 97, dq_rules_s=0.4),
        bench.TaskTiming(name, "gold_a", "gold.a", "gold", "SKIPPED", 0.5, jobs=2, stages=3, write_s=0.1),
    ]
    tasks[1].spark_s, tasks[2].spark_s = 1.5, 0.25
    for task, started in zip(tasks, (0.0, 2.0, 5.0), strict=True):
        task.started = started
    phase = bench.Phase(name, events, wall_s=7.0, pipeline_s=6.0, tasks=tasks)
    return bench.phase_figures(phase, {"driver_rss_mb": 1500.0})


def test_layer_seconds_are_the_time_some_task_ran_when_tasks_overlap():
    def task(layer: str, started: float, seconds: float):
        return bench.TaskTiming(
            "full", f"{layer}_{started}", f"{layer}.t", layer, "SUCCESS", seconds, started=started
        )

    tasks = [
        task("silver", 0.0, 2.0),
        task("silver", 1.0, 3.0),
        task("gold", 3.0, 1.0),
        task("silver", 10.0, 1.0),
    ]
    phase = bench.Phase("full", 10, wall_s=12.0, pipeline_s=11.5, tasks=tasks)
    assert phase.running_s("silver") == 5.0  # 0-4 and 10-11
    assert phase.running_s() == 5.0  # gold's 3-4 lies inside silver's span
    figures = bench.phase_figures(phase, {})
    assert figures["task_seconds_sum"] == 7.0 and figures["tasks_s"] == 5.0
    assert figures["layer_s"] == {"bronze": 0.0, "silver": 5.0, "gold": 1.0}


def test_report_prints_every_figure_without_spark():
    peaks = {"jvm_heap_used_mb": 900, "python_rss_mb": 300, "jvm_rss_mb": 1200}
    check = {"equal": True, "reference_rows": 5}
    reference = {"seconds": 0.5, "stage_seconds": {"ingest": 0.2, "dedup_flatten": 0.3}, "events": 90}
    reference |= {"current_tags": 3, "current_owners": 2, "cross_check": {"tag_timeline.current": check}}
    result = {
        "events": 100,
        "landing": {"files": 4, "mb": 0.1},
        "generate_s": 0.1,
        "spark_startup_s": 1.0,
        "full": _phase("full", 100) | {"jvm_cpu_s": 120.0, "jit_cpu_s": 30.0},
        "incremental": _phase("incremental", 1) | {"folder": "incr-1", "jvm_cpu_s": 10.0, "jit_cpu_s": 5.0},
        "incremental_share_of_full": 1.0,
        "new_process_incremental": {"wall_s": 12.5, "events": 1, "folder": "incr-2", "startup_s": 4.0}
        | {"pipeline_s": 8.0, "error": None},
        "dq_share_of_pipeline": 0.07,
        "memory": {"per_phase": {"full": peaks}, "heap_max_mb": 4096, "jvm_heap_pool_peaks_mb": 1000}
        | {"jvm_rss_hwm_mb": 1300, "python_maxrss_spark_full_mb": 310, "python_maxrss_mb": 400},
        "driver_memory_mb": 1200,
        "duckdb": {"full": reference, "after_increment": None, "comparable": "ECE"}
        | {"spark_comparable_s": 5.0, "duckdb_comparable_s": 0.5, "ratio_spark_over_duckdb": 10.0}
        | {"ratio_whole_pipeline_over_duckdb": 14.0},
        "machine": {"cpus": 2, "memory_mb": 1, "load_1min_before": 1, "load_1min_after": 2}
        | {"python": "3", "pyspark": "4", "duckdb": "2"},
    }
    out = io.StringIO()
    report(result, out)
    text = out.getvalue()
    assert "silver_a" in text and "= runner outside tasks" in text and "spark / duckdb" in text
    assert "tag_timeline.current: 5 rows, equal" in text
    assert "in Spark jobs             full 1.75 of 5.50 s (32%), incremental 1.75 of 5.50 s (32%)" in text
    assert "full 120.0 s, of which JIT 30.0 s (25%); incremental 10.0 s, of which JIT 5.0 s (50%)" in text
    assert (
        "incremental, new process     12.50 s  (1 events in incr-2/; Python + Spark start-up 4.00 s" in text
    )


def test_settings_ab_takes_key_value_settings():
    args = settings_ab.parse_args(["--set", "spark.a=1", "--set", " spark.b = x "])
    assert dict(args.settings) == {"spark.a": "1", "spark.b": "x"} and args.engine == "delta-spark"
    with pytest.raises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
        settings_ab.parse_args(["--set", "no-value"])
