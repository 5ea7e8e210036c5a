"""A landing file that cannot be read (damaged, unreadable, gone, still being written) stops no run.

Each such file is logged in `ops.ingestion_log` with its status and reason, every other file
lands, and a good file put in its place is ingested by a later run.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from pipelines.cli import main
from pipelines.executors import bronze as bronze_executor
from pipelines.landing import ingestion_log, source_view
from pipelines.orchestration.runner import run_pipeline
from pipelines.quality.report import build_report

ECE = "bronze.datahub_entity_change_events"
SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "landing" / "datahub_ece"
GOOD = (SAMPLES / "2024-03" / "example_table_story.jsonl").read_bytes()
CHANGES = (SAMPLES / "2022-04-14" / "entity_change_samples.jsonl").read_bytes()


def _records(data: bytes) -> list[str]:
    return [line for line in data.decode("utf-8").splitlines() if line.strip()]


@pytest.fixture
def landing(tmp_path) -> Path:
    """A landing folder with one good DataHub file."""
    root = tmp_path / "landing"
    (root / "datahub_ece").mkdir(parents=True)
    (root / "datahub_ece" / "good.jsonl").write_bytes(GOOD)
    return root


def _run_bronze(config, spark, landing, warehouse):
    return run_pipeline(
        config.with_overrides(landing=str(landing), warehouse=str(warehouse)), ("bronze",), spark=spark
    )


def _log(store, key: str) -> list:
    rows = store.read(ingestion_log.TABLE).where(F.col("landing_key") == key).orderBy("logged_at").collect()
    return [row.asDict() for row in rows]


def _bronze_of(store, name: str) -> list:
    return store.read(ECE).where(F.col("source_file").endswith("/" + name)).orderBy("record_index").collect()


def _truncated_gzip(path: Path, data: bytes) -> None:
    compressed = gzip.compress(data)
    path.write_bytes(compressed[: len(compressed) * 2 // 3])


def _assert_good_file_landed(store) -> None:
    rows = _bronze_of(store, "good.jsonl")
    assert [r.raw for r in rows] == _records(GOOD)
    assert bronze_executor.DAMAGED_REASON not in {r.corrupt_reason for r in rows}


def _assert_log_counts_equal_bronze_rows(store) -> None:
    """Records read from every landed file (the log) = its bronze rows."""
    logged = {
        r.path: r.records
        for r in store.read(ingestion_log.TABLE).where(F.col("status").isin(*ingestion_log.LANDED)).collect()
    }
    in_bronze = {r.source_file: r["count"] for r in store.read(ECE).groupBy("source_file").count().collect()}
    assert logged == in_bronze


@pytest.mark.slow  # the whole pipeline, then the report
def test_a_truncated_gzip_beside_good_files_does_not_stop_the_run(spark, landing, tmp_path, store, capsys):
    warehouse = tmp_path / "warehouse"
    _truncated_gzip(landing / "datahub_ece" / "cut.jsonl.gz", CHANGES)
    arguments = ["run", "--landing", str(landing), "--warehouse", str(warehouse)]

    assert main(arguments) == 0, capsys.readouterr().err

    _assert_good_file_landed(store)
    [logged] = _log(store, "cut.jsonl.gz")
    assert logged["status"] == ingestion_log.DAMAGED
    assert "truncated" in logged["note"]
    kept = _bronze_of(store, "cut.jsonl.gz")
    assert 0 < len(kept) == logged["records"] == logged["corrupt_records"]
    whole = _records(CHANGES)
    assert [r.raw for r in kept[:-1]] == whole[: len(kept) - 1]  # the records before the damage
    assert whole[len(kept) - 1].startswith(kept[-1].raw)  # the last one as far as it got
    assert {(r.is_corrupt, r.corrupt_reason) for r in kept} == {(True, bronze_executor.DAMAGED_REASON)}
    _assert_log_counts_equal_bronze_rows(store)

    page = build_report(store)
    section = page[page.index('id="landing-files"') :]
    assert "cut.jsonl.gz" in section and "DAMAGED" in section and "truncated" in section

    version = store.version(ECE)
    assert main(arguments) == 0, capsys.readouterr().err
    assert store.version(ECE) == version and len(_log(store, "cut.jsonl.gz")) == 1


def test_a_damaged_file_replaced_by_a_good_one_is_ingested_by_the_next_run(
    config, spark, landing, warehouse, store
):
    target = landing / "datahub_ece" / "cut.jsonl.gz"
    _truncated_gzip(target, CHANGES)
    _run_bronze(config, spark, landing, warehouse)
    damaged = len(_bronze_of(store, "cut.jsonl.gz"))

    target.write_bytes(gzip.compress(CHANGES))
    _run_bronze(config, spark, landing, warehouse)
    _run_bronze(config, spark, landing, warehouse)

    assert [r["status"] for r in _log(store, "cut.jsonl.gz")] == [
        ingestion_log.DAMAGED,
        ingestion_log.INGESTED,
    ]
    rows = _bronze_of(store, "cut.jsonl.gz")
    whole = [r.raw for r in rows if not r.is_corrupt]
    assert whole == _records(CHANGES) and len(rows) == damaged + len(whole)
    _assert_good_file_landed(store)
    assert "cut.jsonl.gz" not in build_report(store).split('id="landing-files"')[1]


def _unreadable(path: Path, how: str) -> None:
    if how == "permissions":
        if os.geteuid() == 0:
            pytest.skip("root reads any file whatever its permissions")
        path.write_bytes(GOOD)
        path.chmod(0)
    else:  # a link to itself: opening it fails, as a file without read permission does
        path.symlink_to(path.name)


@pytest.mark.parametrize("how", ["permissions", "link loop"])
def test_an_unreadable_file_is_logged_and_read_once_it_can_be(config, spark, landing, warehouse, store, how):
    target = landing / "datahub_ece" / "locked.jsonl"
    _unreadable(target, how)

    _run_bronze(config, spark, landing, warehouse)
    _run_bronze(config, spark, landing, warehouse)

    _assert_good_file_landed(store)
    [logged] = _log(store, "locked.jsonl")
    assert logged["status"] == ingestion_log.UNREADABLE and logged["note"].startswith("cannot be read: ")
    assert _bronze_of(store, "locked.jsonl") == []

    target.unlink()
    target.write_bytes(CHANGES)
    _run_bronze(config, spark, landing, warehouse)
    assert [r.raw for r in _bronze_of(store, "locked.jsonl")] == _records(CHANGES)
    assert _log(store, "locked.jsonl")[-1]["status"] == ingestion_log.INGESTED
    _assert_log_counts_equal_bronze_rows(store)


def _before_scanning(monkeypatch, name: str, change) -> None:
    """Calls `change(path)` when bronze is about to read the file `name`, after discovery."""
    real_scan = source_view.scan

    def scan(file, *args):
        if file.path.endswith("/" + name):
            change(Path(file.path))
        return real_scan(file, *args)

    monkeypatch.setattr(source_view, "scan", scan)


def test_a_file_deleted_between_discovery_and_read_is_logged_as_vanished(
    config, spark, landing, warehouse, store, monkeypatch
):
    (landing / "datahub_ece" / "brief.jsonl").write_bytes(CHANGES)
    _before_scanning(monkeypatch, "brief.jsonl", Path.unlink)

    _run_bronze(config, spark, landing, warehouse)

    _assert_good_file_landed(store)
    [logged] = _log(store, "brief.jsonl")
    assert logged["status"] == ingestion_log.VANISHED and logged["note"] == "deleted before it could be read"
    assert _bronze_of(store, "brief.jsonl") == []
    _assert_log_counts_equal_bronze_rows(store)


def test_a_file_deleted_after_its_scan_before_spark_reads_it_is_logged_as_vanished(
    config, spark, landing, warehouse, store, monkeypatch
):
    target = landing / "datahub_ece" / "brief.jsonl"
    target.write_bytes(CHANGES)
    real_file_texts = bronze_executor._file_texts

    def file_texts(session, scans):
        if target.exists() and any(s.file.path == str(target) for s in scans):
            target.unlink()
        return real_file_texts(session, scans)

    monkeypatch.setattr(bronze_executor, "_file_texts", file_texts)
    _run_bronze(config, spark, landing, warehouse)

    _assert_good_file_landed(store)
    [logged] = _log(store, "brief.jsonl")
    assert (
        logged["status"] == ingestion_log.VANISHED and logged["note"] == "deleted before Spark could read it"
    )
    assert _bronze_of(store, "brief.jsonl") == []
    assert store.version(ECE) == 0  # the failed attempt committed nothing
    _assert_log_counts_equal_bronze_rows(store)


def test_a_file_growing_during_the_run_is_read_whole_by_a_later_run(
    config, spark, landing, warehouse, store, monkeypatch
):
    target = landing / "datahub_ece" / "growing.jsonl"
    lines = CHANGES.splitlines(keepends=True)
    half = len(lines) // 2
    target.write_bytes(b"".join(lines[:half]))

    def append_the_rest(path: Path) -> None:
        with path.open("ab") as handle:
            handle.write(b"".join(lines[half:]))

    _before_scanning(monkeypatch, "growing.jsonl", append_the_rest)
    _run_bronze(config, spark, landing, warehouse)

    _assert_good_file_landed(store)
    [logged] = _log(store, "growing.jsonl")
    assert logged["status"] == ingestion_log.STILL_WRITING and logged["note"].startswith(
        "still being written"
    )
    assert _bronze_of(store, "growing.jsonl") == []

    monkeypatch.undo()
    _run_bronze(config, spark, landing, warehouse)
    assert [r.raw for r in _bronze_of(store, "growing.jsonl")] == _records(CHANGES)
    assert _log(store, "growing.jsonl")[-1]["status"] == ingestion_log.INGESTED
    _assert_log_counts_equal_bronze_rows(store)
