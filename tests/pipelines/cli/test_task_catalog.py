"""`lakehouse-task` with a Unity Catalog catalog it may not use stops before any work, naming the
grant a catalog admin must give (the bundle cannot give `USE CATALOG`). Spark's own session
stands for the runtime's: a catalog it does not have fails `SHOW SCHEMAS IN` as a catalog
without `USE CATALOG` does on Databricks."""

from __future__ import annotations

import pytest

from pipelines.cli import commands as cli
from pipelines.cli import task_main
from pipelines.store.catalog_access import CatalogUnusable, check_catalog


@pytest.fixture
def session_of_the_task(spark, monkeypatch):
    """The task's session is the suite's, and the run itself must not start."""
    monkeypatch.setattr("pipelines.runtime.spark.get_spark", lambda config: spark)

    def no_run(*args, **kwargs):
        raise AssertionError("the task ran before the catalog was found usable")

    monkeypatch.setattr(cli, "_run_and_summarize", no_run)
    monkeypatch.delenv("DATABRICKS_RUNTIME_VERSION", raising=False)
    return spark


@pytest.mark.parametrize("first", ["--group=bronze_dataworks", "--maintenance", "--notify"])
def test_a_task_whose_catalog_cannot_be_used_stops_first_with_the_grant_to_give(
    session_of_the_task, tmp_path, capsys, first
):
    who = session_of_the_task.sql("SELECT current_user() AS who").first()["who"]
    with pytest.raises(SystemExit) as stopped:
        task_main(
            [
                first,
                f"--landing={tmp_path / 'no_landing'}",  # missing too: the catalog is reported first
                f"--warehouse={tmp_path / 'warehouse'}",
                "--catalog=no_such_catalog",
                "--engine=delta-spark",
                "--conf=",
            ]
        )
    assert stopped.value.code == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        f"lakehouse: catalog 'no_such_catalog' does not exist, or {who} may not use it: a catalog admin "
        f"must grant USE CATALOG on it: GRANT USE CATALOG ON CATALOG `no_such_catalog` TO `{who}` (or name "
        "an existing catalog: storage.catalog; the bundle's catalog variable: --var catalog=NAME)"
    )
    assert not (tmp_path / "warehouse").exists()  # nothing was written


def test_a_catalog_the_session_can_use_passes_and_one_it_cannot_is_refused(spark):
    check_catalog(spark, "spark_catalog")  # the session's own catalog: its schemas can be listed
    with pytest.raises(CatalogUnusable, match="GRANT USE CATALOG ON CATALOG `nope`"):
        check_catalog(spark, "nope")
    # a failure that is not the catalog's (here a name the SQL parser refuses) is the task's to meet
    check_catalog(spark, "no`pe")
