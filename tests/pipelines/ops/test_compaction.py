"""Small files: a run compacts the tables it wrote once enough gathered; `lakehouse optimize` on demand.

Real runs on a tiny DataHub audit feed, one new landing file a run, so every run adds a file
to each table it writes. What must hold: fewer files, the same rows, and no later run reading
the rewritten rows as new.
"""

from __future__ import annotations

import json

import pytest

from pipelines.cli import main
from pipelines.core.config import load_config
from pipelines.orchestration.runner import run_pipeline
from pipelines.store import open_store

BRONZE = "bronze.datahub_audit_events"
SILVER = "silver.datahub_audit_events"


def _land(landing, number: int) -> None:
    """One more landing file of three audit events (new ids and times)."""
    folder = landing / "datahub_audit"
    folder.mkdir(parents=True, exist_ok=True)
    records = [
        {
            "eventType": "SearchEvent",
            "timestamp": 1767268800000 + 1000 * number + i,
            "actorUrn": f"urn:li:corpuser:u{number}",
        }
        for i in range(3)
    ]
    (folder / f"events-{number}.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")


def _settings(tmp_path, min_files: int, engine: str = "delta-rs"):
    conf = tmp_path / "compaction.yaml"
    conf.write_text(f"maintenance:\n  compact_min_files: {min_files}\nstorage:\n  engine: {engine}\n")
    return load_config(conf).with_overrides(
        landing=str(tmp_path / "landing"), warehouse=str(tmp_path / "warehouse")
    )


def _files(store, table: str) -> int:
    return len(store.read(table).inputFiles())


@pytest.mark.slow  # runs the pipeline four times
def test_a_run_compacts_the_tables_it_wrote_once_they_hold_enough_small_files(
    spark, engine, tmp_path, capsys
):
    settings = _settings(tmp_path, min_files=3, engine=engine)
    store = open_store(spark, settings.warehouse, engine)
    compacted = []
    for number in range(1, 4):
        _land(settings.landing, number)
        summary = run_pipeline(settings, layers=("bronze", "silver"), spark=spark)
        compacted.append({c.table for c in summary.compactions})
    # one and two files (ops.runs takes its rows once a run): fewer than three
    assert not {BRONZE, SILVER, "ops.runs"} & (compacted[0] | compacted[1])
    assert {BRONZE, SILVER, "ops.ingestion_log", "ops.runs"} <= compacted[2]
    assert "silver.datahub_entity_changes" not in compacted[2]  # skipped: its source does not exist
    assert _files(store, BRONZE) == _files(store, SILVER) == 1
    assert (
        "compacted  table=bronze.datahub_audit_events  files_removed=3  files_added=1"
        in capsys.readouterr().out
    )
    assert store.read(BRONZE).count() == store.read(SILVER).count() == 9
    assert store.read("ops.runs").count() == 3 * len(summary.results)

    _land(settings.landing, 4)  # the next run reads only the new file's rows, not the rewritten ones
    summary = run_pipeline(settings, layers=("bronze", "silver"), spark=spark)
    assert summary.results["silver_datahub_audit_events"].source_rows == 3
    assert store.read(SILVER).count() == 12
    assert not summary.compactions  # every table: two small files, not three


def test_no_compaction_when_it_is_switched_off(spark, tmp_path):
    settings = _settings(tmp_path, min_files=0)
    store = open_store(spark, settings.warehouse, "delta-rs")
    for number in range(1, 4):
        _land(settings.landing, number)
        assert not run_pipeline(settings, layers=("bronze",), spark=spark).compactions
    assert _files(store, BRONZE) == 3


def test_lakehouse_optimize_compacts_every_table_with_small_files(spark, engine, tmp_path, capsys):
    settings = _settings(tmp_path, min_files=0, engine=engine)
    for number in range(1, 3):
        _land(settings.landing, number)
        run_pipeline(settings, layers=("bronze",), spark=spark)
    store = open_store(spark, settings.warehouse, engine)
    conf = ["--conf", str(tmp_path / "compaction.yaml")]
    rows = sorted(map(tuple, store.read(BRONZE).select("source_file", "record_index", "raw").collect()))
    assert main(["optimize", *conf, "--warehouse", str(settings.warehouse), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"{BRONZE}: 2 small files would be compacted" in out and "ops.runs: 2 small files" in out
    assert out.strip().endswith("3 tables would be compacted, 0 have nothing to compact")
    assert _files(store, BRONZE) == 2  # a dry run changes nothing
    assert main(["optimize", *conf, "--warehouse", str(settings.warehouse), "--tables", BRONZE]) == 0
    assert f"{BRONZE}: 2 small files -> 1" in capsys.readouterr().out
    assert _files(store, "ops.runs") == 2  # not named: left alone (a file a run)
    assert main(["optimize", *conf, "--warehouse", str(settings.warehouse)]) == 0
    out = capsys.readouterr().out
    assert "ops.runs: 2 small files -> 1" in out and "ops.ingestion_log: 2 small files -> 1" in out
    assert BRONZE not in out  # compacted already
    assert out.strip().endswith("2 tables compacted, 1 had nothing to compact")
    assert (
        sorted(map(tuple, store.read(BRONZE).select("source_file", "record_index", "raw").collect())) == rows
    )


@pytest.mark.parametrize("tables", ["bronze.no_such_table", "bronze.datahub_audit_events,gold.nope"])
def test_lakehouse_optimize_refuses_unknown_tables(spark, tmp_path, capsys, tables):
    settings = _settings(tmp_path, min_files=0)
    _land(settings.landing, 1)
    run_pipeline(settings, layers=("bronze",), spark=spark)
    assert main(["optimize", "--warehouse", str(settings.warehouse), "--tables", tables]) == 2
    assert "no such tables" in capsys.readouterr().err
