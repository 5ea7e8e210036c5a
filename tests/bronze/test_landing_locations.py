"""A landing folder named as a URI, and the URIs Spark reports for the files it read, meet on one
local path: every file is ingested once whatever form either side uses."""

from __future__ import annotations

import shutil

import pytest
from pyspark.sql import functions as F

from bronze.records import spark_path_key
from pipelines.core.config import ConfigError
from pipelines.core.locations import NotALocalPath, local_path
from pipelines.orchestration.runner import run_pipeline
from pipelines.store import open_store
from tests.support.runs import SAMPLES

FORMS = {
    "/data/landing/a b.json": "/data/landing/a b.json",
    "file:/data/landing/x.json": "/data/landing/x.json",
    "file:///data/landing/x.json": "/data/landing/x.json",
    "file://localhost/data/landing/x.json": "/data/landing/x.json",
    "dbfs:/Volumes/main/lake/landing/x.json": "/Volumes/main/lake/landing/x.json",
    "/Volumes/main/lake/landing/x.json": "/Volumes/main/lake/landing/x.json",
}


@pytest.mark.parametrize(("location", "path"), FORMS.items())
def test_every_form_of_a_folder_or_file_has_one_local_path(location, path):
    assert local_path(location) == path


def test_an_object_store_uri_has_no_local_path():
    with pytest.raises(NotALocalPath, match="s3://bucket/landing: not a local folder"):
        local_path("s3://bucket/landing")


@pytest.mark.parametrize(
    "uri",
    [
        "file:/data/landing/caf%C3%A9%20x+1.json",
        "file:///data/landing/caf%C3%A9%20x+1.json",
        "file://localhost/data/landing/caf%C3%A9%20x+1.json",
        "dbfs:/data/landing/caf%C3%A9%20x+1.json".replace("dbfs:/data", "dbfs:/Volumes/data"),
    ],
)
def test_spark_and_the_driver_read_a_reported_uri_as_the_same_path(spark, small_input, uri):
    """Spark's `_metadata.file_path` is a URL-encoded URI (Hadoop keeps `+` as it is)."""
    reported = spark.range(1).select(spark_path_key(F.lit(uri)).alias("p")).first()["p"]
    assert reported == local_path(uri, encoded=True)
    assert reported.endswith("/landing/café x+1.json")


def test_a_configured_object_store_landing_is_refused_with_its_key(config):
    with pytest.raises(ConfigError, match="landing: s3://bucket/x: not a local folder"):
        assert config.with_overrides(landing="s3://bucket/x").landing is None


@pytest.mark.parametrize("form", ["file:{}", "file://{}"])
def test_a_landing_given_as_a_uri_ingests_every_file_once(config, spark, tmp_path, form):
    landing = tmp_path / "landing"
    shutil.copytree(SAMPLES / "datahub_audit", landing / "datahub_audit")
    by_uri = config.with_overrides(landing=form.format(landing), warehouse=str(tmp_path / "warehouse"))
    first = run_pipeline(by_uri, ("bronze",), spark=spark)
    again = run_pipeline(by_uri, ("bronze",), spark=spark)
    files = sorted(p for p in (landing / "datahub_audit").rglob("*") if p.is_file())
    assert first.results["bronze_datahub_audit_events"].files == len(files) > 0
    assert again.results["bronze_datahub_audit_events"].status == "SKIPPED"
    store = open_store(spark, by_uri.warehouse, "delta-rs")
    logged = store.read_rows("ops.ingestion_log", ["path", "records"], {"source": "datahub_audit"})
    assert sorted(row["path"] for row in logged) == [str(p) for p in files]
    assert all(row["records"] > 0 for row in logged)
    bronze = store.read("bronze.datahub_audit_events")
    assert bronze.count() == sum(row["records"] for row in logged)
