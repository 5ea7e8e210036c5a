"""On Delta's own engine with a catalog, as on Databricks with Unity Catalog, the tables are that
catalog's managed tables: the pipeline reaches them by name only (the store is never told
their folders and refuses to give one), runs incrementally over two landings, and builds what
delta-rs builds from the same files."""

from __future__ import annotations

import shutil

import pytest

from pipelines.orchestration.runner import run_pipeline
from pipelines.store import LAYERS, CatalogTableError, folder_tables, open_configured_store, open_store
from tests.support.engines import skip_without_delta_spark, with_engine
from tests.support.runs import SAMPLES, data_tables
from tests.support.tables import assert_reconciles, table_differences

pytestmark = pytest.mark.slow  # Delta's JVM engine, two runs

CATALOG, PREFIX = "spark_catalog", "uc_"
SECOND_LANDING = ("datahub_ece/2024-04", "openmetadata/2024-04-01", "datahub_audit/2024-03-03")


@pytest.fixture(scope="module")
def catalog_run(config, spark, sample_warehouse, tmp_path_factory):
    """(config, store) of the samples landed in two runs into managed tables of `spark_catalog`,
    schemas `uc_<layer>` made beforehand at folders of their own (a catalog's storage)."""
    skip_without_delta_spark("delta-spark")
    root = tmp_path_factory.mktemp("catalog")
    for layer in LAYERS:
        spark.sql(f"CREATE SCHEMA IF NOT EXISTS {PREFIX}{layer} LOCATION '{root / 'managed' / layer}'")
    landing = root / "landing"
    shutil.copytree(
        SAMPLES, landing, ignore=shutil.ignore_patterns(*[p.split("/")[-1] for p in SECOND_LANDING])
    )
    raw = with_engine(
        config.with_overrides(landing=str(landing), warehouse=str(root / "warehouse")), "delta-spark"
    )
    configured = raw.with_overrides(catalog=CATALOG, schema_prefix=PREFIX)
    run_pipeline(configured, spark=spark)
    for part in SECOND_LANDING:
        shutil.copytree(SAMPLES / part, landing / part)
    run_pipeline(configured, spark=spark)
    yield configured, open_configured_store(spark, configured)
    for layer in LAYERS:
        spark.sql(f"DROP SCHEMA IF EXISTS {PREFIX}{layer} CASCADE")


def test_the_store_refuses_a_folder_for_a_catalog_table(catalog_run):
    _, store = catalog_run
    with pytest.raises(CatalogTableError, match="gold.tag_timeline is the catalog table"):
        store.path("gold.tag_timeline")
    refs = [store.ref(table) for table in store.tables()]
    assert refs and all(ref.path is None and ref.catalog_name.startswith("`spark_catalog`") for ref in refs)


def test_the_warehouse_folder_holds_no_table(catalog_run):
    configured, _ = catalog_run
    assert folder_tables(configured.warehouse) == []


def test_two_runs_on_catalog_tables_equal_delta_rs_on_the_same_files(catalog_run, spark, sample_warehouse):
    _, store = catalog_run
    built, _ = sample_warehouse
    reference = open_store(spark, built.warehouse, "delta-rs")
    assert sorted(data_tables(store)) == sorted(data_tables(reference))
    for table in data_tables(reference):
        if table.startswith("bronze."):  # lineage names each run's landing folder
            assert store.read(table).count() == reference.read(table).count(), table
            continue
        lineage = ("source_file", "quarantine_id")  # the quarantine's key hashes the landing path
        differences = table_differences(
            store.read(table).drop(*lineage), reference.read(table).drop(*lineage)
        )
        assert differences is None, f"{table}: {differences}"
    assert_reconciles(store)
