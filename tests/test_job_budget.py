"""What a small increment costs in Spark jobs, counted rather than timed: a task's rows are computed
once and written from the driver, tables reading the same new rows share one read of them, and a
run with nothing new starts no Spark session. A change that brings back the per-table floor (an
action per check, a read per table, a job for bookkeeping) fails here, naming the tasks that
ran the jobs.
"""

from __future__ import annotations

import copy
import shutil

from pipelines.core.config import Config
from pipelines.core.context import TaskObserver
from pipelines.orchestration.runner import run_pipeline
from pipelines.synthetic.generator import END_MS, generate

INCREMENT_EVENTS = 1_000
WEEK_MS = 7 * 86_400_000
# Spark jobs the increment may run in all, over its 51 tasks: one a task with new rows (its rows,
# checked, in one job), and the few lookups some tables make of their history (first days,
# entities' names); the increment ran 212 before a task's rows were computed once.
JOB_BUDGET = 120


class _JobsPerTask(TaskObserver):
    """Each task's Spark jobs, counted through a job group of its own (tasks run one by one, on
    the thread that calls the runner)."""

    def __init__(self, spark):
        self.spark = spark
        self.jobs: dict[str, int] = {}

    def task_started(self, key, spec):
        self.spark.sparkContext.setJobGroup(f"budget-{key}", "counted")

    def task_executed(self, key, spec, result):
        tracker = self.spark.sparkContext.statusTracker()
        self.jobs[key] = len(tracker.getJobIdsForGroup(f"budget-{key}"))
        self.spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)


def _one_by_one(config: Config, landing, warehouse) -> Config:
    moved = config.with_overrides(landing=str(landing), warehouse=str(warehouse))
    raw = copy.deepcopy(moved.raw)
    raw["run"]["parallel_tasks"] = 1
    return Config(raw)


def _land_increment(landing, scratch) -> None:
    """`INCREMENT_EVENTS` generated events, their times in the week after the samples' own, as new
    files in the samples' source folders (a feed's next batch)."""
    generate(scratch, INCREMENT_EVENTS, seed=11, window=(END_MS + 1, END_MS + WEEK_MS))
    for path in sorted(p for p in scratch.rglob("*") if p.is_file()):
        relative = path.relative_to(scratch)
        target = landing / relative.parts[0] / "increment" / relative.relative_to(relative.parts[0])
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(path), target)


def test_an_increment_stays_within_its_job_budget_and_a_run_with_nothing_new_starts_no_session(
    sample_warehouse, spark, tmp_path
):
    built, _ = sample_warehouse
    landing, warehouse = tmp_path / "landing", tmp_path / "warehouse"
    shutil.copytree(built.landing, landing)
    shutil.copytree(built.warehouse, warehouse)
    _land_increment(landing, tmp_path / "increment")
    config = _one_by_one(built, landing, warehouse)
    counted = _JobsPerTask(spark)

    summary = run_pipeline(config, spark=spark, observer=counted)

    assert summary.total("rows_in", "bronze") == INCREMENT_EVENTS
    busiest = ", ".join(f"{k} {n}" for k, n in sorted(counted.jobs.items(), key=lambda kv: -kv[1])[:8])
    assert sum(counted.jobs.values()) <= JOB_BUDGET, f"{sum(counted.jobs.values())} jobs; busiest: {busiest}"
    assert len(counted.jobs) == len(summary.results)

    started = []
    idle = run_pipeline(config, session=lambda: started.append("a session") or spark)

    assert started == []  # nothing new: no session was asked for
    assert {r.status for r in idle.results.values()} == {"SKIPPED"}
    assert len(idle.results) == len(summary.results)
