"""Shared fixtures: one SparkSession for the whole suite, fresh warehouses per test."""

from __future__ import annotations

import os

import pytest

from pipelines.class_archive import ENV as CLASS_ARCHIVE_ENV
from pipelines.config import load_config
from pipelines.spark import get_spark
from pipelines.store import open_store

# No JVM class archive in the suite, its `lakehouse` subprocesses included: they would map one a
# previous run left in the user's cache, or each record one (tests/pipelines/test_class_archive.py).
os.environ[CLASS_ARCHIVE_ENV] = "off"


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
