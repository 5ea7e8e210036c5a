"""Shared fixtures: one SparkSession for the whole suite, fresh warehouses per test."""

from __future__ import annotations

import pytest

from pipelines.config import load_config
from pipelines.spark import get_spark
from pipelines.store import open_store


@pytest.fixture(scope="session")
def config():
    return load_config()


@pytest.fixture(scope="session")
def spark(config):
    session = get_spark(config)
    session.conf.set("spark.sql.shuffle.partitions", "2")
    yield session
    session.stop()


@pytest.fixture
def warehouse(tmp_path):
    return tmp_path / "warehouse"


@pytest.fixture
def store(spark, warehouse):
    return open_store(spark, warehouse, "delta-rs")
