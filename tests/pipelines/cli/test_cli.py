"""The `lakehouse` CLI end to end on tiny data: run (once, on a timer), lakehouse-task, bundle, errors."""

from __future__ import annotations

import json
import re

import pytest

from pipelines.cli import commands as cli
from pipelines.cli import main, task_main
from pipelines.core.config import ConfigError, load_config
from pipelines.orchestration.lock import warehouse_lock
from pipelines.store import open_store

SUMMARY = re.compile(
    r"^done +run_id=\S+ +bronze_rows=(\d+) +silver_rows=\d+ +quarantined=\d+ .*warehouse=", re.M
)


@pytest.fixture
def landing(tmp_path):
    folder = tmp_path / "landing" / "datahub_audit"
    folder.mkdir(parents=True)
    records = [
        {"eventType": "SearchEvent", "timestamp": 1767268800000 + i, "actorUrn": "urn:li:corpuser:a"}
        for i in range(3)
    ]
    (folder / "events.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return tmp_path / "landing"


def test_run_prints_its_summary_line(spark, landing, tmp_path, capsys):
    warehouse = tmp_path / "warehouse"
    code = main(["run", "--landing", str(landing), "--warehouse", str(warehouse), "--layers", "bronze"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert SUMMARY.search(out).group(1) == "3"
    assert (
        open_store(spark, warehouse, "delta-rs").tables()
        == [
            "bronze.datahub_audit_events",
            "ops.ingestion_log",
            "ops.runs",
        ]
        or "bronze.datahub_audit_events" in open_store(spark, warehouse, "delta-rs").tables()
    )


def test_run_every_reports_a_locked_warehouse_and_keeps_ticking(spark, landing, tmp_path, capsys):
    warehouse = tmp_path / "warehouse"
    with warehouse_lock(warehouse):
        code = main(
            ["run", "--landing", str(landing), "--warehouse", str(warehouse), "--layers", "bronze"]
            + ["--every", "1s", "--max-runs", "2"]
        )
    out, err = capsys.readouterr()
    assert code == 1
    assert "run 1 skipped, warehouse locked" in err and "run 2 skipped, warehouse locked" in err
    assert "next run at" in err
    assert not SUMMARY.search(out)


@pytest.mark.slow  # a whole task the way a job cluster runs it; the job-cluster simulation runs them all
def test_lakehouse_task_runs_exactly_one_task(spark, landing, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DATABRICKS_RUNTIME_VERSION", "17.3")  # the databricks profile: reuse the session
    warehouse = tmp_path / "warehouse"
    code = task_main(
        ["--task", "bronze_datahub_audit_events", "--warehouse", str(warehouse), "--landing", str(landing)]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert SUMMARY.search(out).group(1) == "3"
    store = open_store(spark, warehouse, "delta-rs")
    assert [t for t in store.tables() if not t.startswith("ops.")] == ["bronze.datahub_audit_events"]
    assert [r.job for r in store.read("ops.runs").collect()] == ["bronze_datahub_audit_events"]


def test_lakehouse_task_rejects_an_unknown_task(capsys):
    with pytest.raises(SystemExit) as exit_info:  # raised: the Jobs service ignores a returned code
        task_main(["--task", "no_such_task"])
    assert exit_info.value.code == 2
    assert "unknown task keys ['no_such_task']" in capsys.readouterr().err


@pytest.fixture
def ran(monkeypatch):
    """The config and graph `lakehouse-task` would run with (no Spark)."""
    calls = []

    def record(config, layers, log_format, graph=None, lock=True, compact=True):
        assert compact is False  # a job task leaves compaction to the maintenance task
        assert set(layers) == {t.layer for t in graph.tasks}
        calls.append((config, graph))

    monkeypatch.setattr(cli, "_run_and_summarize", record)
    # the catalog is asked of a session first (tests/pipelines/cli/test_task_catalog.py)
    monkeypatch.setattr(cli, "_check_catalog", lambda config: None)
    monkeypatch.delenv("DATABRICKS_RUNTIME_VERSION", raising=False)
    return calls


def test_lakehouse_task_accepts_every_parameter_the_bundle_passes(ran, tmp_path):
    overlay = tmp_path / "mine.yaml"
    overlay.write_text("quality: {fail_on_breach: false}\nstorage: {schema_prefix: ignored_}\n")
    code = task_main(
        [
            "--task=silver_datahub_audit_events",
            f"--conf={overlay}",
            "--landing=/Volumes/main/catalog_lakehouse/landing",
            "--warehouse=/Volumes/main/catalog_lakehouse/warehouse",
            "--catalog=main",
            "--schema-prefix=",  # an empty prefix is a setting: it wins over the file's
            "--profile=databricks",
            "--engine=delta-spark",
        ]
    )
    assert code == 0
    ((config, graph),) = ran
    assert [t.key for t in graph.tasks] == ["silver_datahub_audit_events"]
    assert config.raw["profile"] == "databricks" and config.profile["use_existing_session"] is True
    assert config.engine == "delta-spark"
    assert (config.section("storage")["catalog"], config.section("storage")["schema_prefix"]) == ("main", "")
    assert str(config.landing) == "/Volumes/main/catalog_lakehouse/landing"
    assert str(config.warehouse) == "/Volumes/main/catalog_lakehouse/warehouse"
    assert config.section("quality")["fail_on_breach"] is False  # from --conf


def test_lakehouse_task_runs_a_group_of_tasks_alone_in_graph_order(ran):
    assert task_main(["--group=silver_datahub", "--conf="]) == 0
    ((_, graph),) = ran
    assert [t.key for t in graph.ordered()] == [
        "silver_datahub_entity_changes",
        "silver_datahub_action_requests",
        "silver_datahub_ignored_events",
        "silver_datahub_audit_events",
    ]


def test_lakehouse_task_rejects_an_unknown_group(capsys):
    with pytest.raises(SystemExit) as exit_info:
        task_main(["--group", "silver"])
    assert exit_info.value.code == 2
    assert "unknown task group 'silver'" in capsys.readouterr().err


def test_lakehouse_task_without_overrides_keeps_the_defaults(ran):
    assert task_main(["--task", "gold_failed_logins", "--conf="]) == 0  # empty --conf: no overlay
    ((config, _),) = ran
    defaults = load_config()
    assert config.raw == defaults.raw


def test_lakehouse_task_on_a_cluster_uses_the_databricks_profile(ran, monkeypatch):
    monkeypatch.setenv("DATABRICKS_RUNTIME_VERSION", "17.3")
    assert task_main(["--task", "gold_failed_logins"]) == 0
    assert task_main(["--task", "gold_failed_logins", "--profile", "local"]) == 0
    assert [config.raw["profile"] for config, _ in ran] == ["databricks", "local"]


def test_lakehouse_task_rejects_an_unknown_profile(ran, capsys):
    with pytest.raises(SystemExit) as exit_info:
        task_main(["--task", "gold_failed_logins", "--profile", "nowhere"])
    assert exit_info.value.code == 2
    assert (
        "command line: profile 'nowhere' is not one of ['connect', 'databricks', 'local']"
        in capsys.readouterr().err
    )
    assert ran == []


def test_lakehouse_task_rejects_an_unknown_engine(capsys):
    with pytest.raises(SystemExit) as exit_info:
        task_main(["--task", "gold_failed_logins", "--engine", "duckdb"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'duckdb'" in capsys.readouterr().err


def test_config_overrides_are_validated_and_leave_the_original_alone():
    config = load_config()
    changed = config.with_overrides(catalog="main", schema_prefix="dev_", engine="delta-rs")
    assert changed.section("storage") == {
        **config.section("storage"),
        "catalog": "main",
        "schema_prefix": "dev_",
        "engine": "delta-rs",
    }
    assert config.section("storage")["catalog"] == ""
    assert changed.with_overrides(schema_prefix="").section("storage")["schema_prefix"] == ""
    assert changed.with_overrides().raw == changed.raw
    with pytest.raises(ConfigError, match="storage.engine must be one of"):
        config.with_overrides(engine="parquet")


def test_bundle_export_and_check(tmp_path, capsys):
    assert main(["bundle", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out.split() == [
        str(tmp_path / "databricks.yml"),
        str(tmp_path / "resources" / "catalog_lakehouse_job.yml"),
        str(tmp_path / "resources" / "catalog_lakehouse_storage.yml"),
    ]
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "catalog-lakehouse"\n[project.scripts]\nlakehouse-task = "pipelines.cli:task_main"\n'
        'lakehouse-collect = "pipelines.cli:collect_main"\n'
    )
    capsys.readouterr()
    assert main(["bundle", "--check", "--out", str(tmp_path)]) == 0
    assert "current and valid" in capsys.readouterr().out
    job = tmp_path / "resources" / "catalog_lakehouse_job.yml"
    job.write_text(job.read_text().replace("max_concurrent_runs: 1", "max_concurrent_runs: 2"))
    assert main(["bundle", "--check", "--out", str(tmp_path)]) == 1
    assert "differs from a fresh export" in capsys.readouterr().err


def test_known_failures_are_one_line(tmp_path, capsys):
    assert main(["run", "--landing", str(tmp_path / "missing"), "--warehouse", str(tmp_path / "w")]) == 1
    assert capsys.readouterr().err.strip().endswith("does not exist")
    bad = tmp_path / "bad.yaml"
    bad.write_text("storage: {engin: delta-rs}\n")
    assert main(["run", "--conf", str(bad)]) == 2
    assert "unknown key 'storage.engin'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--every", "5x"], "unit s, m or h"),
        (["--every", "0s"], "unit s, m or h"),
        (["--every", "15"], "unit s, m or h"),
        (["--every", "1m", "--max-runs", "0"], "must be at least 1"),
        (["--max-runs", "2"], "--max-runs needs --every"),
    ],
)
def test_bad_schedule_options_are_usage_errors(args, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", *args])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
