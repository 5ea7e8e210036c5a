"""What the Databricks job's tasks do besides the tables: the maintenance task's compaction, and
the IP salt read from a secret scope (over real HTTP on loopback, as the Secrets API answers)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from pipelines.core.config import ConfigError, load_config
from pipelines.ops import vacuum_schedule
from pipelines.ops.vacuum_schedule import HOUR_MS, VacuumRecord, not_due
from pipelines.orchestration.maintenance import run_maintenance
from pipelines.quality import validation_documents
from pipelines.runtime.secrets import salt_from_secret
from pipelines.store import open_store
from tests.support.engines import engine_store, with_engine
from tests.support.secrets_api import JOB_TOKEN, secrets_api

SALT = "pepper-from-the-scope"


def maintained_config(tmp_path, min_files: int):
    conf = tmp_path / "maintenance.yaml"
    conf.write_text(f"maintenance:\n  compact_min_files: {min_files}\nstorage:\n  engine: delta-rs\n")
    return load_config(conf).with_overrides(warehouse=str(tmp_path / "warehouse"))


def test_the_maintenance_task_compacts_every_table_holding_enough_small_files(spark, tmp_path, capsys):
    store = open_store(spark, tmp_path / "warehouse", "delta-rs")
    for start in (0, 10, 20):
        store.append(spark.range(start, start + 10).coalesce(1), "silver.fragmented")
    store.append(spark.range(5).coalesce(1), "gold.whole")
    done = run_maintenance(maintained_config(tmp_path, 3), spark=spark)
    assert [(c.table, c.files_removed, c.files_added) for c in done] == [("silver.fragmented", 3, 1)]
    assert sorted(r.id for r in store.read("silver.fragmented").collect()) == list(range(30))
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("maintenance ") and "engine=delta-rs" in out[0]
    assert any(line.startswith("compacted") and "table=silver.fragmented" in line for line in out)
    assert out[-1].startswith("done") and "tables=2" in out[-1] and "compacted=1" in out[-1]


def test_the_maintenance_task_vacuums_expires_validation_documents_and_writes_the_report(
    spark, tmp_path, capsys
):
    store = open_store(spark, tmp_path / "warehouse", "delta-rs")
    for start in (0, 10, 20):
        store.append(spark.range(start, start + 10).coalesce(1), "silver.fragmented")
    before = {p for p in (tmp_path / "warehouse" / "silver" / "fragmented").glob("*.parquet")}
    documents = validation_documents.table_folder(tmp_path / "warehouse", "silver.fragmented")
    documents.mkdir(parents=True)
    for name, days_old in (("old.json", 100), ("recent.json", 1), ("newest.json", 0)):
        (documents / name).write_text("{}")
        written = time.time() - days_old * validation_documents.DAY_SECONDS
        os.utime(documents / name, (written, written))
    conf = tmp_path / "maintenance.yaml"
    conf.write_text(
        "maintenance:\n  compact_min_files: 3\n  vacuum_retention_hours: 0\nstorage:\n  engine: delta-rs\n"
    )
    run_maintenance(load_config(conf).with_overrides(warehouse=str(tmp_path / "warehouse")), spark=spark)
    after = {p for p in (tmp_path / "warehouse" / "silver" / "fragmented").glob("*.parquet")}
    assert before and not before & after  # the compacted files' predecessors are vacuumed
    assert sorted(r.id for r in store.read("silver.fragmented").collect()) == list(range(30))
    assert sorted(p.name for p in documents.iterdir()) == ["newest.json", "recent.json"]
    report = tmp_path / "warehouse" / "reports" / "dq_report.html"
    assert report.is_file() and "<html" in report.read_text()
    governance = report.with_name("governance_report.html")  # beside it, its sections' tables missing
    assert "No coverage table yet" in governance.read_text()
    out = capsys.readouterr().out.splitlines()
    assert any(line.startswith("vacuumed") and "table=silver.fragmented" in line for line in out)
    assert "validation_documents_expired=1" in out[-1] and f"report={report}" in out[-1]


def test_the_maintenance_task_leaves_tables_alone_when_compaction_is_off(spark, tmp_path):
    store = open_store(spark, tmp_path / "warehouse", "delta-rs")
    for start in (0, 10, 20):
        store.append(spark.range(start, start + 10).coalesce(1), "silver.fragmented")
    assert run_maintenance(maintained_config(tmp_path, 0), spark=spark) == []


def _parquet_files(store, table: str) -> set:
    return set(Path(store.path(table)).rglob("*.parquet"))


def test_the_maintenance_task_vacuums_a_table_again_only_once_its_last_vacuum_is_old_enough(
    spark, engine, tmp_path, monkeypatch, capsys
):
    conf = tmp_path / "maintenance.yaml"
    conf.write_text(
        "maintenance:\n  compact_min_files: 3\n  vacuum_retention_hours: 0\n  vacuum_every_hours: 24\n"
    )
    config = with_engine(load_config(conf).with_overrides(warehouse=str(tmp_path / "warehouse")), engine)
    store = engine_store(spark, tmp_path / "warehouse", engine)

    def fragment_and_maintain(first: int) -> tuple[set, set]:
        for start in (first, first + 10, first + 20):
            store.append(spark.range(start, start + 10).coalesce(1), "silver.fragmented")
        before = _parquet_files(store, "silver.fragmented")
        assert [c.table for c in run_maintenance(config, spark=spark)] == ["silver.fragmented"]
        return before, _parquet_files(store, "silver.fragmented")

    before, after = fragment_and_maintain(0)  # no vacuum recorded: vacuumed at once
    assert before and not before & after
    recorded = VacuumRecord.load(tmp_path / "warehouse").last
    assert list(recorded) == ["silver.fragmented"]
    assert "tables_not_due_for_vacuum=0" in capsys.readouterr().out.splitlines()[-1]

    before, after = fragment_and_maintain(30)  # vacuumed moments ago: the replaced files wait
    assert before <= after
    assert "tables_not_due_for_vacuum=1" in capsys.readouterr().out.splitlines()[-1]
    assert VacuumRecord.load(tmp_path / "warehouse").last == recorded

    a_day_later = recorded["silver.fragmented"] + 25 * HOUR_MS
    monkeypatch.setattr(vacuum_schedule, "now_ms", lambda: a_day_later)
    run_maintenance(config, spark=spark)
    assert not before & _parquet_files(store, "silver.fragmented")
    assert sorted(r.id for r in store.read("silver.fragmented").collect()) == list(range(60))
    assert VacuumRecord.load(tmp_path / "warehouse").last == {"silver.fragmented": a_day_later}


def test_a_table_younger_than_the_retention_is_not_vacuumed_and_an_older_one_is(spark, engine, tmp_path):
    store = engine_store(spark, tmp_path / "warehouse", engine)
    store.append(spark.range(3), "gold.young")
    created = store.history("gold.young")[-1]["timestamp"]
    record = VacuumRecord.load(tmp_path / "warehouse")
    assert record.last == {}
    assert not_due(store, "gold.young", record, 168, 24, created + HOUR_MS) == "younger than the retention"
    assert not_due(store, "gold.young", record, 168, 24, created + 169 * HOUR_MS) is None
    assert not_due(store, "gold.young", record, 0, 24, created + HOUR_MS) is None  # nothing retained


def test_an_unreadable_vacuum_record_vacuums_as_if_none_was_kept(tmp_path):
    record = VacuumRecord.load(tmp_path)
    record.vacuumed("gold.a", 5)
    record.save()
    assert VacuumRecord.load(tmp_path).last == {"gold.a": 5}
    record.path.write_text("{not json")
    assert VacuumRecord.load(tmp_path).last == {}


@pytest.fixture
def workspace(monkeypatch):
    """A workspace's Secrets API on loopback holding one secret, `lakehouse/ip_salt`."""
    with secrets_api(monkeypatch, {("lakehouse", "ip_salt"): SALT}) as api:
        yield api


def test_a_serverless_task_takes_the_ip_salt_from_the_secret_scope(workspace, capsys):
    environ: dict[str, str] = {}
    assert salt_from_secret("LAKEHOUSE_IP_SALT", "lakehouse/ip_salt", environ) is True
    assert environ == {"LAKEHOUSE_IP_SALT": SALT}
    assert ("lakehouse", "ip_salt", f"Bearer {JOB_TOKEN}") in workspace.requests
    captured = capsys.readouterr()
    assert SALT not in captured.out + captured.err  # never printed


def test_a_salt_the_cluster_set_is_kept_without_asking_the_scope(workspace):
    environ = {"LAKEHOUSE_IP_SALT": "from-spark-env-vars"}
    assert salt_from_secret("LAKEHOUSE_IP_SALT", "lakehouse/ip_salt", environ) is False
    assert environ == {"LAKEHOUSE_IP_SALT": "from-spark-env-vars"}
    assert workspace.requests == []


def test_a_missing_secret_fails_the_task_naming_the_scope_and_key(workspace):
    with pytest.raises(ConfigError, match="cannot read the IP salt from secret lakehouse/pepper: "):
        salt_from_secret("LAKEHOUSE_IP_SALT", "lakehouse/pepper", {})
