"""With the delta-spark engine the tables are catalog tables: Spark resolves `<layer>.<table>` itself."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import Row

from pipelines.core.config import PROJECT_ROOT
from pipelines.query import script, statements
from pipelines.query.spark_session import SqlSession
from pipelines.store import open_store
from tests.support.engines import skip_without_delta_spark
from tests.support.runs import SOURCES

REPO = PROJECT_ROOT
pytestmark = pytest.mark.slow  # Delta's JVM engine pays seconds per commit


@pytest.fixture
def delta_spark(spark):
    skip_without_delta_spark("delta-spark")
    return spark


def _rows(spark, ids):
    return spark.createDataFrame([Row(id=i, name=f"n{i}") for i in ids])


def test_tables_a_store_writes_resolve_by_name_in_plain_spark(delta_spark, warehouse):
    store = open_store(delta_spark, warehouse, "delta-spark")
    store.append(_rows(delta_spark, [1, 2]), "gold.named")
    store.append(_rows(delta_spark, [3]), "gold.named")
    assert sorted(r.id for r in delta_spark.table("gold.named").collect()) == [1, 2, 3]
    history = delta_spark.sql("DESCRIBE HISTORY gold.named").collect()
    assert [r.version for r in history] == [1, 0]
    location = delta_spark.sql("DESCRIBE DETAIL gold.named").first()["location"]
    assert location.rstrip("/").endswith(str(Path(store.path("gold.named"))))


def test_a_new_process_registers_the_warehouse_tables_it_finds(delta_spark, warehouse):
    """The session catalog lives in memory: a store opened later (a new process) registers
    every table of the warehouse, with the schema prefix the configuration gives."""
    open_store(delta_spark, warehouse, "delta-spark").append(_rows(delta_spark, [7]), "silver.found")
    later = open_store(delta_spark, warehouse, "delta-spark", schema_prefix="pfx_")
    assert later.register_all() == ["silver.found"]
    assert [r.id for r in delta_spark.table("pfx_silver.found").collect()] == [7]


def test_lakehouse_sql_resolves_catalog_names_natively_and_keeps_time_travel(delta_spark, warehouse):
    store = open_store(delta_spark, warehouse, "delta-spark", schema_prefix="qa_")
    store.append(_rows(delta_spark, [1]), "gold.events")
    store.append(_rows(delta_spark, [2]), "gold.events")
    with SqlSession(delta_spark, warehouse, "delta-spark", schema_prefix="qa_") as session:
        tokens = statements.tokenize("SELECT count(*) FROM gold.events")
        assert session.prepare(tokens) == "SELECT count(*) FROM `qa_gold`.`events`"
        out, err = io.StringIO(), io.StringIO()
        assert script.run_script(session, "DESCRIBE HISTORY gold.events", "json", out, err) == 0, (
            err.getvalue()
        )
        assert sorted(json.loads(line)["version"] for line in out.getvalue().splitlines()) == [0, 1]
    with SqlSession(delta_spark, warehouse, "delta-spark", version=0, schema_prefix="qa_") as session:
        assert session.execute("SELECT count(*) AS n FROM gold.events").first()["n"] == 1


def test_with_a_catalog_the_tables_are_that_catalogs_managed_tables(delta_spark, tmp_path):
    """As on Databricks with Unity Catalog: tables addressed by `<catalog>.<schema>.<table>`,
    no folder of theirs under the warehouse, and the store's reads and writes unchanged."""
    delta_spark.sql(f"CREATE SCHEMA IF NOT EXISTS uc_silver LOCATION '{tmp_path / 'managed'}'")
    store = open_store(delta_spark, tmp_path / "warehouse", "delta-spark", "spark_catalog", "uc_")
    store.append(_rows(delta_spark, [1, 2]), "silver.managed", metadata={"source_version": 1})
    version = store.version("silver.managed")
    store.append(_rows(delta_spark, [3]), "silver.managed", metadata={"source_version": 2})
    assert sorted(r.id for r in store.read_added_since("silver.managed", version).collect()) == [3]
    assert store.last_metadata("silver.managed", "source_version") == 2
    assert store.tables() == ["silver.managed"]
    assert sorted(r.id for r in delta_spark.table("spark_catalog.uc_silver.managed").collect()) == [1, 2, 3]
    assert not (tmp_path / "warehouse" / "silver").exists()


def test_lakehouse_run_and_sql_on_delta_spark_from_the_command_line(delta_spark, tmp_path):
    """What a user types: the run names its engine first; `DESCRIBE HISTORY gold.<t>` answers.
    The DataHub entity change samples only: they reach `gold.tag_timeline`."""
    landing = tmp_path / "landing"
    shutil.copytree(REPO / "samples" / "landing" / "datahub_ece", landing / "datahub_ece")
    for source in SOURCES:
        (landing / source).mkdir(exist_ok=True)
    conf = tmp_path / "delta-spark.yaml"
    conf.write_text("storage:\n  engine: delta-spark\n", encoding="utf-8")
    warehouse = tmp_path / "warehouse"
    lakehouse = [sys.executable, "-m", "pipelines.cli"]
    run = subprocess.run(
        [*lakehouse, "run", "--conf", str(conf), "--landing", str(landing)] + ["--warehouse", str(warehouse)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "engine=delta-spark" in run.stdout.splitlines()[0]
    query = subprocess.run(
        [*lakehouse, "sql", "--conf", str(conf), "--warehouse", str(warehouse), "--format", "json"]
        + ["DESCRIBE HISTORY gold.tag_timeline"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert query.returncode == 0, query.stderr[-3000:]
    commits = [json.loads(line) for line in query.stdout.splitlines()]
    assert commits and commits[-1]["version"] == 0
    assert all("engineInfo" in c for c in commits)
