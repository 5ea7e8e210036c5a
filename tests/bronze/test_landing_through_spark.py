"""A landing the driver cannot see is read through Spark (the server's view of a volume): the same
files found, the same records landed, each once, as when the driver reads its own disk."""

from __future__ import annotations

import gzip
import shutil

import pytest

from pipelines.landing import ingestion_log
from pipelines.landing.listing import list_landing
from pipelines.landing.through_spark import exists_through_spark, fetch_through_spark, list_through_spark
from pipelines.orchestration.runner import run_pipeline
from tests.support.engines import engine_store
from tests.support.runs import SAMPLES
from tests.support.tables import table_differences


def _bronze_run(config, spark, landing, warehouse, read_landing):
    settings = config.with_overrides(landing=str(landing), warehouse=str(warehouse))
    settings.raw["bronze"]["read_landing"] = read_landing
    return run_pipeline(settings, ("bronze",), spark=spark)


def test_spark_lists_and_fetches_what_the_driver_sees(spark, tmp_path):
    landing = tmp_path / "landing"
    shutil.copytree(SAMPLES / "datahub_ece", landing)
    (landing / "_in_flight.jsonl").write_text("{}\n")
    (landing / "sub").mkdir()
    with gzip.open(landing / "sub" / "z.jsonl.gz", "wt") as handle:
        handle.write('{"z": 1}\n')
    driver, through = list_landing(landing), list_through_spark(spark, landing)
    assert [(f.key, f.path, f.size, f.mtime_ms) for f in through.files] == [
        (f.key, f.path, f.size, f.mtime_ms) for f in driver.files
    ]
    fetched = fetch_through_spark(spark, driver.files)
    for file in driver.files:
        with open(file.path, "rb") as handle:
            assert fetched[file.path] == handle.read(), file.key
    assert list_through_spark(spark, tmp_path / "nothing").files == []
    assert exists_through_spark(spark, landing) and not exists_through_spark(spark, tmp_path / "nothing")


@pytest.mark.slow
def test_bronze_through_spark_lands_the_samples_as_the_driver_does(config, spark, tmp_path):
    landing = tmp_path / "landing"
    shutil.copytree(SAMPLES, landing)
    _bronze_run(config, spark, landing, tmp_path / "driver", "driver")
    summary = _bronze_run(config, spark, landing, tmp_path / "spark", "spark")
    assert not [k for k, r in summary.results.items() if r.status == "FAILED"]
    driver, through = (
        engine_store(spark, tmp_path / "driver", "delta-rs"),
        engine_store(spark, tmp_path / "spark", "delta-rs"),
    )
    for table in [t for t in driver.tables() if t.startswith("bronze.")]:
        assert table_differences(driver.read(table), through.read(table)) is None, table
    columns = ["source", "landing_key", "file_hash", "records", "corrupt_records", "status"]
    log = ingestion_log.TABLE
    assert table_differences(driver.read(log).select(*columns), through.read(log).select(*columns)) is None

    again = _bronze_run(config, spark, landing, tmp_path / "spark", "spark")
    assert all(r.status == "SKIPPED" for r in again.results.values()), "each file once"
