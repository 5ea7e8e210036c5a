"""Concurrent writers: one pipeline run per warehouse, and no lost or doubled Delta commit.

Two `lakehouse run` processes on one warehouse: the lock lets exactly one work and sends the
other away at once with a clear "in use" line (run.lock_timeout_seconds is 0). Below the
runner, two writers of one table through the store may both succeed (either engine retries a
commit that lost the race when the writes do not conflict) or one may get ConcurrentWriteError;
either way the table holds exactly the writes that reported success. The store's races run on
both engines.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable

import pytest

from pipelines.cli import commands as cli
from pipelines.core.config import PROJECT_ROOT
from pipelines.orchestration.lock import warehouse_lock
from pipelines.orchestration.runner import run_pipeline
from pipelines.store import ConcurrentWriteError, TableStore
from tests.support.engines import engine_store
from tests.support.runs import SAMPLES, SOURCES, snapshot

TABLE = "silver.concurrency_probe"


@pytest.mark.slow
def test_second_run_on_a_busy_warehouse_is_sent_away(config, spark, store, tmp_path):
    landing, warehouse = tmp_path / "landing", tmp_path / "busy"
    for source in SOURCES:
        (landing / source).mkdir(parents=True)
    shutil.copytree(SAMPLES / "datahub_ece" / "2022-04-14", landing / "datahub_ece" / "2022-04-14")
    layers = ("bronze", "silver")  # the lock is taken before any task: gold would only add minutes
    args = ["run", "--landing", str(landing), "--warehouse", str(warehouse), "--layers", ",".join(layers)]
    command = [sys.executable, "-m", "pipelines.cli", *args]
    runs = [
        subprocess.Popen(command, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    results = [(run.wait(timeout=1200), *run.communicate()) for run in runs]

    codes = sorted(code for code, _out, _err in results)
    assert codes == [0, 1], [err[-2000:] for _code, _out, err in results]
    _code, loser_out, loser_err = next(r for r in results if r[0] == 1)
    reasons = [line for line in loser_err.splitlines() if line.startswith("lakehouse: ")]
    assert len(reasons) == 1 and "is in use by pid" in reasons[0], loser_err[-2000:]
    assert "done" not in loser_out and "success" not in loser_out  # it did no task at all

    run_pipeline(
        config.with_overrides(landing=str(landing), warehouse=str(store.warehouse)), layers, spark=spark
    )
    busy = TableStore(warehouse, store.engine)
    assert snapshot(busy) == snapshot(store)
    assert busy.read("ops.runs").select("run_id").distinct().count() == 1

    # the lock went with the winner: a later run gets it (in this process: no third Spark start)
    run_pipeline(config.with_overrides(landing=str(landing), warehouse=str(warehouse)), layers, spark=spark)
    assert busy.read("ops.runs").select("run_id").distinct().count() == 2


def test_vacuum_never_runs_beside_a_live_run(spark, tmp_path, capsys):
    """A live run's merge source in `_tmp` looks like a crash's leftover; vacuum must not take it."""
    warehouse = tmp_path / "live"
    source = warehouse / "_tmp" / "0123abcd" / "part-00000.parquet"
    source.parent.mkdir(parents=True)
    source.write_bytes(b"PAR1")
    os.utime(source, (0, 0))
    os.utime(source.parent, (0, 0))
    vacuum = ["vacuum", "--warehouse", str(warehouse), "--retention-hours", "0"]

    with warehouse_lock(warehouse):  # what `lakehouse run` holds from its first task to its last
        assert cli.main(vacuum) == 1
        assert source.exists()
    assert "is in use by pid" in capsys.readouterr().err

    assert cli.main(vacuum) == 0
    spark.conf.set("spark.sql.shuffle.partitions", "2")  # the CLI re-applied the profile's settings
    assert f"{cli.LEFTOVERS}: 1 folders removed" in capsys.readouterr().out
    assert not source.parent.exists()


@pytest.fixture
def any_store(engine, spark, warehouse) -> TableStore:
    return engine_store(spark, warehouse, engine)


def _rows(spark, ids: range, value: str):
    return spark.createDataFrame([(i, value) for i in ids], "id long, value string")


def _race(*writers: Callable[[], None]) -> list[BaseException | None]:
    """Run the writers in threads released together; what each raised (None: it succeeded)."""
    start = threading.Barrier(len(writers))
    outcome: list[BaseException | None] = [None] * len(writers)

    def work(index: int) -> None:
        start.wait()
        try:
            writers[index]()
        except BaseException as exc:  # recorded; the test decides what was allowed
            outcome[index] = exc

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(writers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    return outcome


def _state(store: TableStore) -> dict[int, str]:
    rows = store.read(TABLE).collect()
    assert len(rows) == len({r.id for r in rows}), "a row was written twice"
    return {r.id: r.value for r in rows}


@pytest.mark.parametrize("round_", range(2))
def test_two_appends_racing_both_land_once(spark, any_store, round_):
    any_store.append(_rows(spark, range(0, 10), "base"), TABLE)
    outcome = _race(
        lambda: any_store.append(_rows(spark, range(100, 110), "a"), TABLE),
        lambda: any_store.append(_rows(spark, range(200, 205), "b"), TABLE),
    )
    assert all(o is None or isinstance(o, ConcurrentWriteError) for o in outcome), outcome
    expected = {i: "base" for i in range(10)}
    if outcome[0] is None:
        expected.update({i: "a" for i in range(100, 110)})
    if outcome[1] is None:
        expected.update({i: "b" for i in range(200, 205)})
    assert _state(any_store) == expected
    assert any_store.version(TABLE) == sum(o is None for o in outcome)  # one commit per successful write


@pytest.mark.parametrize("round_", range(2))
def test_append_racing_a_merge_never_loses_or_doubles(spark, any_store, round_):
    any_store.append(_rows(spark, range(0, 10), "base"), TABLE)
    merged = _rows(spark, range(5, 15), "merged")  # updates 5..9, inserts 10..14
    outcome = _race(
        lambda: any_store.append(_rows(spark, range(100, 110), "appended"), TABLE),
        lambda: any_store.merge(merged, TABLE, keys=["id"]),
    )
    assert all(o is None or isinstance(o, ConcurrentWriteError) for o in outcome), outcome
    assert any(o is None for o in outcome), "at least one writer must win"
    expected = {i: "base" for i in range(10)}
    if outcome[0] is None:
        expected.update({i: "appended" for i in range(100, 110)})
    if outcome[1] is None:
        expected.update({i: "merged" for i in range(5, 15)})
    assert _state(any_store) == expected


def test_a_write_that_lost_reports_it_and_changes_nothing(spark, any_store):
    """A merge whose target moved under it in a conflicting way fails loudly, not silently."""
    any_store.append(_rows(spark, range(0, 4), "base"), TABLE)
    outcome = _race(
        lambda: any_store.merge(_rows(spark, range(0, 4), "left"), TABLE, keys=["id"]),
        lambda: any_store.merge(_rows(spark, range(0, 4), "right"), TABLE, keys=["id"]),
    )
    assert all(o is None or isinstance(o, ConcurrentWriteError) for o in outcome), outcome
    winners = {value for o, value in zip(outcome, ("left", "right"), strict=True) if o is None}
    state = _state(any_store)
    assert set(state) == set(range(4))
    assert len(set(state.values())) == 1 and set(state.values()) <= winners  # one merge, whole
