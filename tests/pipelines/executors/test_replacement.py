"""A silver table typed under another revision of its spec is typed again from its whole source
by the next ordinary run, and what reads it follows: a silver table typed from it is typed again,
a gold table reading it is built again in full, and so is a gold table reading that one. On real Delta tables, both engines, both of the
silver executor's paths (a small batch collected, a large one in Spark)."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from gold import GROUP
from pipelines.core.context import RunContext
from pipelines.core.table_specs import ERRORS_COLUMN, GoldTableSpec, SilverTableSpec
from pipelines.executors import gold as gold_executor
from pipelines.executors import silver as silver_executor
from pipelines.executors.replacement import REPLACED, REVISION
from tests.support.engines import engine_store

SOURCE = "bronze.toy_events"
TABLE = "silver.toy_events"
DERIVED = "silver.toy_event_keys"
GOLD = "gold.toy_keys"
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
SCHEMA = "raw string, source_file string, record_index long, ingested_at timestamp"


def _keyed(prefix: str):
    """A transform keying each record `<prefix><raw>`; a record `bad` fails its typing."""

    def transform(bronze: DataFrame) -> DataFrame:
        return bronze.select(
            F.col("raw").alias("event_id"),
            F.concat(F.lit(prefix), "raw").alias("entity_key"),
            F.lit(T0).cast("timestamp").alias("event_time"),
            F.lit(T0.date()).alias("event_date"),
            "raw",
            "source_file",
            "record_index",
            "ingested_at",
            F.when(F.col("raw") == "bad", F.array(F.lit("cast:raw")))
            .otherwise(F.array().cast("array<string>"))
            .alias(ERRORS_COLUMN),
        )

    return transform


def _derived(rows: DataFrame) -> DataFrame:
    return rows.select(
        "event_id", "entity_key", "event_time", "event_date", "raw", "source_file", "record_index", "ingested_at",
        F.array().cast("array<string>").alias(ERRORS_COLUMN),
    )  # fmt: skip


OLD = SilverTableSpec(table=TABLE, source=SOURCE, transform=_keyed("id:"))
NEW = dataclasses.replace(OLD, transform=_keyed("name:"), revision="names-1")
KEYS = SilverTableSpec(table=DERIVED, source=TABLE, transform=_derived, source_unique=True)
GOLD_KEYS = GoldTableSpec(
    table=GOLD,
    sources=(DERIVED,),
    relevant=lambda _source, rows: rows.withColumn(GROUP, F.col("entity_key")),
    build=lambda sources: (
        sources[DERIVED].groupBy(F.col(GROUP).alias("group_key")).agg(F.count("*").alias("n"))
    ),
    group_key="group_key",
    row_key=("group_key",),
)

# a gold table reading a gold table: the group prefix of each key (`id`, `name`)
PREFIXES = GoldTableSpec(
    table="gold.toy_prefixes",
    sources=(GOLD,),
    relevant=lambda _source, rows: rows.withColumn(GROUP, F.substring_index("group_key", ":", 1)),
    build=lambda sources: sources[GOLD].groupBy(F.col(GROUP).alias("prefix")).agg(F.sum("n").alias("n")),
    group_key="prefix",
    row_key=("prefix",),
)


@pytest.fixture(params=["collected", "in Spark"])
def both_paths(request, monkeypatch):
    if request.param == "in Spark":
        monkeypatch.setattr(silver_executor, "COLLECTED_ROWS", 0)
    return request.param


@pytest.fixture
def engine_warehouse(spark, engine, tmp_path):
    return engine_store(spark, tmp_path / "warehouse", engine)


def _land(spark, store, *records):
    rows = [(raw, f"f-{raw}.jsonl", 0, T0) for raw in records]
    store.append(spark.createDataFrame(rows, SCHEMA), SOURCE)


def _run(spark, store, config, *specs):
    ctx = RunContext(spark, store, config, "run-1", T0)
    return [
        (gold_executor if isinstance(spec, GoldTableSpec) else silver_executor).run(spec, ctx)
        for spec in specs
    ]


def _keys(store, table) -> list[str]:
    return sorted(row.entity_key for row in store.read(table).collect())


def test_a_table_typed_under_another_revision_is_typed_again_once(
    spark, engine_warehouse, config, both_paths
):
    store = engine_warehouse
    _land(spark, store, "a", "b", "bad")
    _run(spark, store, config, OLD)
    _land(spark, store, "c")
    _run(spark, store, config, OLD)
    quarantined = store.read("silver.quarantine").count()
    assert _keys(store, TABLE) == ["id:a", "id:b", "id:c"]

    (result,) = _run(spark, store, config, NEW)

    assert _keys(store, TABLE) == ["name:a", "name:b", "name:c"]
    assert (result.source_rows, result.rows_out, result.rows_quarantined) == (4, 3, 1)
    assert store.read("silver.quarantine").count() == quarantined  # its bad rows are not quarantined twice
    last = store.history(TABLE, limit=1)[0]["metadata"]
    assert (last[REVISION], last[REPLACED], last[silver_executor.WATERMARK]) == (
        "names-1",
        True,
        store.version(SOURCE),
    )
    assert _run(spark, store, config, NEW)[0].status == "SKIPPED"
    _land(spark, store, "d")
    (appended,) = _run(spark, store, config, NEW)
    assert (appended.source_rows, appended.rows_out) == (1, 1)
    assert REPLACED not in store.history(TABLE, limit=1)[0]["metadata"]
    assert _keys(store, TABLE) == ["name:a", "name:b", "name:c", "name:d"]


def test_what_reads_a_retyped_table_follows_it(spark, engine_warehouse, config, both_paths):
    store = engine_warehouse
    _land(spark, store, "a", "b")
    _run(spark, store, config, OLD, KEYS, GOLD_KEYS, PREFIXES)
    _land(spark, store, "c")
    _run(spark, store, config, OLD, KEYS, GOLD_KEYS, PREFIXES)
    assert sorted(r.group_key for r in store.read(GOLD).collect()) == ["id:a", "id:b", "id:c"]
    assert [(r.prefix, r.n) for r in store.read("gold.toy_prefixes").collect()] == [("id", 3)]

    _silver, derived, built, prefixes = _run(spark, store, config, NEW, KEYS, GOLD_KEYS, PREFIXES)

    assert _keys(store, DERIVED) == ["name:a", "name:b", "name:c"]  # not the old rows kept by their ids
    assert derived.rows_out == 3 and store.history(DERIVED, limit=1)[0]["metadata"][REPLACED]
    assert built.message == prefixes.message == "full build"  # a gold table reading it follows too
    assert [(r.prefix, r.n) for r in store.read("gold.toy_prefixes").collect()] == [("name", 3)]
    assert sorted((r.group_key, r.n) for r in store.read(GOLD).collect()) == [
        ("name:a", 1),
        ("name:b", 1),
        ("name:c", 1),
    ]
    assert [r.status for r in _run(spark, store, config, NEW, KEYS, GOLD_KEYS, PREFIXES)] == ["SKIPPED"] * 4


def test_a_table_without_a_revision_is_never_typed_again(spark, engine_warehouse, config):
    store = engine_warehouse
    _land(spark, store, "a")
    _run(spark, store, config, OLD)
    _land(spark, store, "b")
    (result,) = _run(spark, store, config, OLD)
    assert (result.source_rows, result.rows_out) == (1, 1)
    assert REPLACED not in store.history(TABLE, limit=1)[0]["metadata"]
