"""The runner runs tasks whose upstream tasks are done side by side (`run.parallel_tasks`):
up to N at once, or with `auto` small tasks beside small ones and large tasks alone.

The toy tasks (`tests/support/toy_graph`) meet at a two-party rendezvous inside their
transform: they only get past it when both run at the same time, so one by one the
first fails, and side by side both pass. Real silver executions on real Delta tables,
scheduled by the runner's `_run_graph` (`run_pipeline` selects tasks by layer, and the
toy modules live outside the layer packages).
"""

from __future__ import annotations

import datetime as dt
import importlib
import threading

import pytest

from pipelines.core.config import ConfigError, load_config
from pipelines.core.context import RunContext
from pipelines.core.graph import Task
from pipelines.executors import silver as silver_executor
from pipelines.ops.bookkeeping import write_bookkeeping
from pipelines.orchestration import admission
from pipelines.orchestration.runner import RunSummary, _run_graph
from tests.support import toy_graph

TOYS = "tests.support.toy_graph"
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


@pytest.fixture(autouse=True)
def fresh_rendezvous():
    toy_graph.RENDEZVOUS["barrier"] = threading.Barrier(2, timeout=60)
    toy_graph.SESSIONS.clear()


FIRST = Task("first", f"{TOYS}.meets_then_succeeds")
SECOND = Task("second", f"{TOYS}.meets_too")


@pytest.fixture
def run_tasks(spark, store, config):
    """run_tasks(parallel, *tasks, settings=config) -> (the first failed task's key, the results)."""

    def run(parallel: int | str, *tasks: Task, settings=config) -> tuple[str | None, RunSummary]:
        ctx = RunContext(spark, store, settings, "toy-run", T0)
        summary = RunSummary("toy-run")
        try:
            return _run_graph(ctx, list(tasks), parallel, summary), summary
        finally:
            write_bookkeeping(ctx)  # what the runner does when its tasks are done

    return run


def _land(spark, store, *names: str, rows_each: int = 3) -> None:
    for name in names:
        rows = [(f"{name}-{i}", "toy.jsonl", i, T0) for i in range(rows_each)]
        store.append(spark.createDataFrame(rows, toy_graph.SCHEMA), f"bronze.toy_{name}")


def _runs(store) -> dict[str, tuple]:
    return {r.job: (r.status, r.started_at, r.finished_at) for r in store.read("ops.runs").collect()}


def test_ready_tasks_run_at_the_same_time_and_downstream_waits_for_both(spark, store, run_tasks):
    _land(spark, store, "meets_then_succeeds", "meets_too", "plain")

    failed, summary = run_tasks(2, FIRST, SECOND, Task("after_both", f"{TOYS}.plain", ("first", "second")))

    assert failed is None
    assert {k: r.status for k, r in summary.results.items()} == dict.fromkeys(
        ("first", "second", "after_both"), "SUCCESS"
    )
    for table in ("silver.toy_meets_then_succeeds", "silver.toy_meets_too", "silver.toy_plain"):
        assert store.read(table).count() == 3
    runs = _runs(store)
    assert runs["after_both"][1] >= max(runs["first"][2], runs["second"][2])


def test_one_by_one_the_rendezvous_is_never_met(spark, store, run_tasks):
    """The control: the same tasks one at a time fail at the rendezvous."""
    toy_graph.RENDEZVOUS["barrier"] = threading.Barrier(2, timeout=1)
    _land(spark, store, "meets_then_succeeds", "meets_too")

    failed, summary = run_tasks(1, FIRST, SECOND)

    assert failed == "first" and summary.results["first"].message.startswith("BrokenBarrierError")
    assert set(_runs(store)) == {"first"}


def test_after_a_failure_running_tasks_finish_and_no_task_starts(spark, store, run_tasks):
    _land(spark, store, "meets_then_succeeds", "meets_then_fails", "plain")
    fails = Task("fails", f"{TOYS}.meets_then_fails")

    failed, summary = run_tasks(2, FIRST, fails, Task("after_failure", f"{TOYS}.plain", ("fails",)))

    assert failed == "fails"
    assert summary.results["fails"].message == "RuntimeError: toy failure after the rendezvous"
    assert {k: v[0] for k, v in _runs(store).items()} == {"first": "SUCCESS", "fails": "FAILED"}
    assert store.read("silver.toy_meets_then_succeeds").count() == 3
    assert not store.exists("silver.toy_plain")


def test_each_parallel_task_plans_in_a_session_of_its_own(spark, store, run_tasks):
    """So the SQL settings a task changes (small-input mode, filters kept in place) are its own."""
    _land(spark, store, "meets_then_succeeds", "meets_too")
    before = spark.conf.get("spark.sql.shuffle.partitions")

    run_tasks(2, FIRST, SECOND)

    assert len(toy_graph.SESSIONS) == 2 and len(set(toy_graph.SESSIONS)) == 2
    assert toy_graph.session_id(spark) not in toy_graph.SESSIONS
    assert spark.conf.get("spark.sql.shuffle.partitions") == before


@pytest.fixture
def two_cores(monkeypatch):
    """`auto` runs at most one task a core: the same width on any machine the suite runs on."""
    monkeypatch.setattr(admission.os, "cpu_count", lambda: 2)


def _small_input_rows(tmp_path, rows: int):
    conf = tmp_path / "small.yaml"
    conf.write_text(f"profiles:\n  local:\n    small_input_rows: {rows}\n")
    return load_config(conf)


def test_auto_runs_small_tasks_side_by_side(spark, store, run_tasks, two_cores):
    _land(spark, store, "meets_then_succeeds", "meets_too")

    failed, summary = run_tasks("auto", FIRST, SECOND)

    assert failed is None and {r.status for r in summary.results.values()} == {"SUCCESS"}
    assert len(set(toy_graph.SESSIONS)) == 2


def test_auto_runs_a_large_task_alone(spark, store, run_tasks, two_cores, tmp_path):
    """Three new rows are small below a limit of 4; five are large: the second task waits for
    the first, which then meets nobody at the rendezvous."""
    toy_graph.RENDEZVOUS["barrier"] = threading.Barrier(2, timeout=1)
    _land(spark, store, "meets_then_succeeds")
    _land(spark, store, "meets_too", rows_each=5)

    failed, summary = run_tasks("auto", FIRST, SECOND, settings=_small_input_rows(tmp_path, 4))

    assert failed == "first" and summary.results["first"].message.startswith("BrokenBarrierError")
    assert set(_runs(store)) == {"first"}


def test_auto_runs_a_large_task_on_the_calling_thread_in_the_runs_session(
    spark, store, run_tasks, two_cores, tmp_path
):
    """As one by one: no session of its own, and the graph goes on after it."""
    toy_graph.RENDEZVOUS["barrier"] = threading.Barrier(2, timeout=1)
    _land(spark, store, "meets_then_succeeds", "plain", rows_each=5)
    settings = _small_input_rows(tmp_path, 4)

    failed, _summary = run_tasks("auto", FIRST, settings=settings)
    assert failed == "first" and toy_graph.SESSIONS == [toy_graph.session_id(spark)]

    plain = Task("plain", f"{TOYS}.plain")
    again = Task("plain_again", f"{TOYS}.plain", ("plain",))
    failed, summary = run_tasks("auto", plain, again, settings=settings)
    assert failed is None
    assert {k: r.status for k, r in summary.results.items()} == {"plain": "SUCCESS", "plain_again": "SKIPPED"}


def test_auto_runs_every_task_alone_without_a_small_input_limit(spark, store, run_tasks, two_cores, tmp_path):
    toy_graph.RENDEZVOUS["barrier"] = threading.Barrier(2, timeout=1)
    _land(spark, store, "meets_then_succeeds", "meets_too")

    failed, _summary = run_tasks("auto", FIRST, SECOND, settings=_small_input_rows(tmp_path, 0))

    assert failed == "first" and set(_runs(store)) == {"first"}


def test_a_silver_task_weighs_the_source_rows_it_has_yet_to_type(spark, store, config):
    ctx = RunContext(spark, store, config, "toy-run", T0)
    spec = importlib.import_module(f"{TOYS}.plain").SPEC
    _land(spark, store, "plain", rows_each=4)
    assert silver_executor.pending_rows(spec, ctx) == 4

    silver_executor.run(spec, ctx)
    assert silver_executor.pending_rows(spec, ctx) == 0


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "many"])
def test_parallel_tasks_must_be_auto_or_a_whole_number_from_one(tmp_path, value):
    conf = tmp_path / "conf.yaml"
    conf.write_text(f"run:\n  parallel_tasks: {str(value).lower()}\n")
    with pytest.raises(ConfigError, match="parallel_tasks"):
        load_config(conf)


def test_parallel_tasks_is_auto_by_default():
    assert load_config().section("run")["parallel_tasks"] == "auto"


@pytest.mark.parametrize("value", [1, 3, "auto"])
def test_parallel_tasks_takes_auto_or_a_number_from_a_file(tmp_path, value):
    conf = tmp_path / "conf.yaml"
    conf.write_text(f"run:\n  parallel_tasks: {value}\n")
    assert load_config(conf).section("run")["parallel_tasks"] == value
