"""Crash cases shared by the crash-safety modules of each engine: a run killed (SIGKILL) at the
worst moments is repaired by the next run, and vacuum clears its debris.

Two landings arrive in two runs, so the second one appends to existing tables, creates a new
one, appends to the quarantine and (gold case) replaces gold groups incrementally. Each case copies the
warehouse left by the first run, kills a `lakehouse run` subprocess on the second landing at one
checkpoint (`pipelines/runtime/faults.py`), re-runs without the fault and must end with exactly the
tables of an uninterrupted run: same rows, no duplicates. The killed attempt's Parquet files are
still on disk at that point, so equal rows prove they are never read; `lakehouse vacuum
--retention-hours 0` must then leave only the snapshot's files. Cases run bronze and silver
only, except the gold one (gold tasks triple a run's time).

Every case runs on delta-rs. On delta-spark, where Delta writes and commits inside one JVM call
and the engine has Delta call the checkpoint as it begins the commit, two cases stand for the
rest: a write's commit (the first, which would create the table) and the quarantine's append.

A module runs the cases of one engine: it imports what `__all__` names (the `outcome` fixture
and the tests) and sets `pytest_generate_tests = cases_on(engine)`.
"""

from __future__ import annotations

import json
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import pytest
from deltalake import DeltaTable
from pyspark.sql import functions as F

from pipelines.cli import commands as cli
from pipelines.core.graph import load_graph
from pipelines.landing import ingestion_log
from pipelines.orchestration.runner import run_pipeline
from pipelines.quality import validation_documents
from pipelines.store import TableStore
from tests.support.engines import engine_store, skip_without_delta_spark, with_engine
from tests.support.runs import (
    SAMPLES,
    SOURCES,
    data_tables,
    duplicate_keys,
    lakehouse,
    parquet_files,
    snapshot,
)

__all__ = [  # what a crash-safety module collects
    "outcome",
    "test_killed_attempt_left_files_that_were_never_read",
    "test_no_record_is_doubled",
    "test_rerun_after_a_kill_equals_an_uninterrupted_run",
    "test_vacuum_leaves_exactly_the_snapshot_files_in_every_table",
]

# DataWorks is left out: its fifteen family tasks would triple every run's time and add no
# commit path the other sources do not take.
FIRST_LANDING = (
    "datahub_ece/2022-04-14",
    "datahub_ece/proposals",
    "openmetadata/2024-03-04",  # malformed lines: silver.quarantine exists after the first run
)
SECOND_LANDING = (
    "datahub_ece/2024-03",  # 3 quarantined records: a real merge into the existing quarantine
    "datahub_ece/2024-04",  # a duplicate and a late arrival
    "openmetadata/2024-04-01",
    "datahub_audit",  # its bronze and silver tables are created by the second run
)


SILVER = ("bronze", "silver")
ALL_LAYERS = ("bronze", "silver", "gold")


@dataclass(frozen=True)
class Case:
    fault: str  # LAKEHOUSE_FAULT of the killed run
    leftovers: str | None  # table folder where the killed attempt leaves Parquet files
    layers: tuple[str, ...] = SILVER  # gold only where the case needs it: it triples a run's time


CASES = {
    # files published into a table folder that has no Delta log yet, never committed
    "bronze_first_commit": Case("delta_commit@bronze.datahub_audit_events", "bronze.datahub_audit_events"),
    "bronze_commit_not_logged": Case("bronze_after_commit@bronze.datahub_entity_change_events", None),
    "silver_written_not_committed": Case(
        "delta_commit@silver.datahub_entity_changes", "silver.datahub_entity_changes"
    ),
    "silver_quarantined_not_appended": Case("silver_after_quarantine@silver.datahub_entity_changes", None),
    # rows quarantined, their files in the quarantine's folder, the append never committed
    "quarantine_append": Case("delta_commit@silver.quarantine", "silver.quarantine"),
    # a gold group replacement: the rebuilt rows and the rewritten files published, never committed
    "gold_merge": Case("merge_commit@gold.tag_timeline", "gold.tag_timeline", ALL_LAYERS),
}
# The cases run on delta-spark too (a delta-spark case takes minutes): Delta's write, Delta's merge.
DELTA_SPARK_CASES = ("bronze_first_commit", "quarantine_append")
# Every case runs in `make test-exhaustive`, not in CI's `make test-all`: a case is minutes of
# subprocess runs on 2 cores (a quarter of an hour on delta-spark, where Delta writes and commits
# in one JVM call). `make test-all` checks each commit path's own recovery on tables
# (tests/pipelines/store/test_change_feed_recovery.py, test_table_store.py) and the fault
# checkpoints themselves (test_crash_safety.py).
EXHAUSTIVE = {
    ("gold_merge", "delta-rs"),
    ("bronze_first_commit", "delta-rs"),
    ("bronze_commit_not_logged", "delta-rs"),
    ("silver_written_not_committed", "delta-rs"),
    ("silver_quarantined_not_appended", "delta-rs"),
    ("quarantine_append", "delta-rs"),
    ("bronze_first_commit", "delta-spark"),
    ("quarantine_append", "delta-spark"),
}


def _has_gold() -> bool:
    return any(task.layer == "gold" for task in load_graph().tasks)


def _copy_landing(parts: tuple[str, ...], landing: Path) -> None:
    for part in parts:
        shutil.copytree(SAMPLES / part, landing / part, dirs_exist_ok=True)  # copy2: mtimes kept


@dataclass
class Scenario:
    landing: Path
    after_first_run: Path
    reference: dict[str, list[str]]


_scenarios: dict[tuple[tuple[str, ...], str], Scenario] = {}


def _scenario(config, spark, tmp_path_factory, layers: tuple[str, ...], engine: str) -> Scenario:
    """The uninterrupted reference for `layers`: both landings, two runs; plus the warehouse after run one.

    Built once per layer set and engine (a failure too is kept and raised again, not rebuilt per test).
    """
    if (layers, engine) not in _scenarios:
        root = tmp_path_factory.mktemp(f"crash_{'_'.join(layers)}_{engine}")
        landing, warehouse = root / "landing", root / "reference"
        for source in SOURCES:
            (landing / source).mkdir(parents=True)
        reference = with_engine(config.with_overrides(landing=str(landing), warehouse=str(warehouse)), engine)
        _copy_landing(FIRST_LANDING, landing)
        run_pipeline(reference, layers, spark=spark)
        shutil.copytree(warehouse, root / "after_first_run")
        _copy_landing(SECOND_LANDING, landing)
        run_pipeline(reference, layers, spark=spark)
        store = engine_store(spark, warehouse, engine)
        _scenarios[(layers, engine)] = Scenario(landing, root / "after_first_run", snapshot(store))
    return _scenarios[(layers, engine)]


@dataclass
class Outcome:
    case: Case
    engine: str
    store: TableStore
    scenario: Scenario
    killed_stderr: str
    leftovers_before_vacuum: set[str]
    vacuum_output: str


def _snapshot_files(store: TableStore) -> dict[str, set[str]]:
    return {t: set(DeltaTable(store.path(t)).file_uris()) for t in store.tables()}


def _ever_committed(store: TableStore) -> set[str]:
    """Data files any commit of any table added (current or since removed)."""
    added = set()
    for table in store.tables():
        root = Path(store.path(table))
        for commit in sorted((root / "_delta_log").glob("*.json")):
            for line in commit.read_text().splitlines():
                action = json.loads(line) if line.strip() else {}
                if "add" in action:
                    added.add(str((root / unquote(action["add"]["path"])).resolve()))
    return added


def _uncommitted(store: TableStore) -> set[str]:
    """Parquet files under the warehouse that no commit ever added: debris of a killed write."""
    return parquet_files(store.warehouse) - _ever_committed(store)


_outcomes: dict[tuple[str, str], Outcome | BaseException] = {}


@pytest.fixture
def outcome(request, config, spark, tmp_path_factory, capsys) -> Outcome:
    """Kill a run at the case's checkpoint, re-run without the fault, vacuum (once per case and engine)."""
    name, engine = request.param
    skip_without_delta_spark(engine)
    case = CASES[name]
    if "gold" in case.layers and not _has_gold():
        pytest.skip("conf/jobs.yaml declares no gold task, so no gold merge can be interrupted")
    if (name, engine) not in _outcomes:
        try:
            _outcomes[(name, engine)] = _kill_and_recover(
                name, case, engine, config, spark, tmp_path_factory, capsys
            )
        except Exception as exc:  # kept: the case's other tests report the same failure
            _outcomes[(name, engine)] = exc
    found = _outcomes[(name, engine)]
    if isinstance(found, BaseException):
        raise found
    return found


def _kill_and_recover(name: str, case: Case, engine: str, config, spark, tmp_path_factory, capsys) -> Outcome:
    scenario = _scenario(config, spark, tmp_path_factory, case.layers, engine)
    warehouse = tmp_path_factory.mktemp(f"{name}_{engine}") / "warehouse"
    shutil.copytree(scenario.after_first_run, warehouse)
    # Tasks one by one: with a task beside the killed one, what that task had half written at
    # the kill (a staging folder) would depend on timing, and the case's leftovers would too.
    settings = warehouse.parent / "one_by_one.yaml"
    settings.write_text(f"run:\n  parallel_tasks: 1\nstorage:\n  engine: {engine}\n")
    killed = lakehouse(
        "run",
        "--landing",
        str(scenario.landing),
        "--warehouse",
        str(warehouse),
        "--layers",
        ",".join(case.layers),
        "--conf",
        str(settings),
        fault=case.fault,
    )
    assert killed.returncode == -signal.SIGKILL, (
        f"{case.fault} was never reached (exit {killed.returncode}):\n{killed.stderr[-3000:]}"
    )
    assert f"engine={engine}" in killed.stdout + killed.stderr
    store = engine_store(spark, warehouse, engine)
    leftovers = _uncommitted(store)
    rerun = with_engine(
        config.with_overrides(landing=str(scenario.landing), warehouse=str(warehouse)), engine
    )
    run_pipeline(rerun, case.layers, spark=spark)
    capsys.readouterr()
    vacuum = ["vacuum", "--warehouse", str(warehouse), "--retention-hours", "0", "--conf", str(settings)]
    assert cli.main(vacuum) == 0
    spark.conf.set("spark.sql.shuffle.partitions", "2")  # the CLI re-applied the profile's settings
    return Outcome(case, engine, store, scenario, killed.stderr, leftovers, capsys.readouterr().out)


def cases_on(engine: str) -> Callable[[pytest.Metafunc], None]:
    """A module's `pytest_generate_tests`: the `outcome` fixture of its tests takes every case
    on delta-rs, those of `DELTA_SPARK_CASES` on delta-spark."""
    params = [
        pytest.param(
            (name, engine),
            id=f"{name}-{engine}",
            marks=[pytest.mark.exhaustive] if (name, engine) in EXHAUSTIVE else [],
        )
        for name in CASES
        if engine == "delta-rs" or name in DELTA_SPARK_CASES
    ]

    def generate(metafunc: pytest.Metafunc) -> None:
        if "outcome" in metafunc.fixturenames:
            metafunc.parametrize("outcome", params, indirect=True)

    return generate


@pytest.mark.slow
def test_rerun_after_a_kill_equals_an_uninterrupted_run(outcome: Outcome):
    assert "faults: killing pid" in outcome.killed_stderr
    assert snapshot(outcome.store) == outcome.scenario.reference


@pytest.mark.slow
def test_no_record_is_doubled(outcome: Outcome):
    store = outcome.store
    for table in data_tables(store):
        rows = store.read(table)
        if table.startswith("bronze."):
            assert duplicate_keys(rows, "source_file", "record_index") == 0, table
        elif table == "silver.quarantine":
            assert duplicate_keys(rows, "quarantine_id") == 0, table
        elif table.startswith("silver."):
            assert duplicate_keys(rows, "event_id") == 0, table
    ingested = store.read(ingestion_log.TABLE).where(F.col("status") == ingestion_log.INGESTED)
    assert duplicate_keys(ingested, "source", "path", "file_hash") == 0


@pytest.mark.slow
def test_killed_attempt_left_files_that_were_never_read(outcome: Outcome):
    leftovers = outcome.case.leftovers
    if leftovers is None:
        assert not outcome.leftovers_before_vacuum  # the kill came after every write was committed
        return
    folder = outcome.store.warehouse / leftovers.replace(".", "/")
    assert any(Path(f).is_relative_to(folder) for f in outcome.leftovers_before_vacuum), (
        f"expected uncommitted Parquet files under {folder}"
    )
    reported = dict(line.split(": ", 1) for line in outcome.vacuum_output.splitlines())
    assert not reported[leftovers].startswith("0 "), reported[leftovers]


@pytest.mark.slow
def test_vacuum_leaves_exactly_the_snapshot_files_in_every_table(outcome: Outcome):
    store = outcome.store
    for table, files in _snapshot_files(store).items():
        on_disk = parquet_files(store.path(table))
        assert on_disk == files, (
            f"{table}: {len(on_disk)} Parquet files on disk, {len(files)} in its snapshot"
        )
    reported = dict(line.split(": ", 1) for line in outcome.vacuum_output.splitlines())
    assert sorted(reported) == sorted([*store.tables(), cli.LEFTOVERS, validation_documents.LABEL])
