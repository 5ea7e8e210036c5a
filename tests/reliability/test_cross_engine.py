"""The two table engines share one warehouse format: each reads what the other writes, and a
warehouse started by one continues incrementally under the other.

- Delta's own reader (delta-spark) reads every table the delta-rs engine wrote from the bundled
  samples: the same rows and columns, the same commits with the same metadata, and its table
  detail describes the same files.
- The landing is split (each source's newer half of the files held back); one warehouse is
  started by delta-rs and finished by delta-spark, another the other way round. Every bronze,
  silver and gold table of both equals the one of a single delta-rs build of the whole landing
  (`make test-exhaustive`).
- Both engines create tables of the same protocol, which the other engine supports
  (docs/engines.md, "Protocol versions and table features").
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from deltalake import DeltaTable as RsTable
from pyspark.sql import functions as F

from pipelines.landing import ingestion_log
from pipelines.orchestration.runner import run_pipeline
from pipelines.store import TableStore
from tests.support.engines import engine_store, skip_without_delta_spark, with_engine
from tests.support.runs import SAMPLES, SOURCES, data_tables
from tests.support.tables import table_differences

pytestmark = [pytest.mark.slow, pytest.mark.heavy]

# What each engine creates a table with (minReaderVersion, minWriterVersion), and the most each
# reads and writes: delta-rs 1.x and Delta 4.x both implement reader version 3 and writer
# version 7 (table features). Tables later tasks read the new rows of (bronze, silver, gold) record
# their change data feed, which writer version 4 brings; the others are created as (1, 2).
# Neither needs a table feature.
CREATED_PROTOCOL = {"bronze": (1, 4), "silver": (1, 4), "gold": (1, 4), "ops": (1, 2)}
SUPPORTED = {"delta-rs": (3, 7), "delta-spark": (3, 7)}
LEGACY_FEATURES = {  # what each writer version implies, as Delta lists it
    2: {"appendOnly", "invariants"},
    4: {"appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns"},
}


@dataclass
class Warehouses:
    landing: Path
    full: TableStore  # delta-rs, one run over the whole landing
    continued: dict[tuple[str, str], TableStore]  # (first engine, second engine) -> warehouse


def _held_back(landing: Path) -> list[Path]:
    """Each source's newer half of its files (by path: dated folders sort in time order)."""
    held = []
    for source in SOURCES:
        files = sorted(p for p in (landing / source).rglob("*") if p.is_file())
        held += files[len(files) // 2 :]
    return held


# Each engine continuing the other's warehouse (four runs, two of them on delta-spark: twenty
# minutes on 2 cores) runs in `make test-exhaustive`; `make test-all` has Delta's reader read
# every table of one delta-rs build, and builds delta-spark incrementally through Spark Connect
# (tests/test_spark_connect.py).
ORDERS = [
    pytest.param(("delta-rs", "delta-spark"), id="delta-rs-then-delta-spark"),
    pytest.param(("delta-spark", "delta-rs"), id="delta-spark-then-delta-rs"),
]


def _selected_orders(session: pytest.Session) -> list[tuple[str, str]]:
    """The orders the selected tests compare (the fixture builds no other)."""
    orders = set()
    for item in session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "order" in callspec.params:
            orders.add(callspec.params["order"])
    return sorted(orders)


@pytest.fixture(scope="module")
def warehouses(request, config, spark, tmp_path_factory) -> Warehouses:
    skip_without_delta_spark("delta-spark")
    root = tmp_path_factory.mktemp("cross_engine")
    landing = root / "landing"
    shutil.copytree(SAMPLES, landing)  # copy2: modification times kept

    def run(warehouse: str, engine: str) -> TableStore:
        settings = with_engine(
            config.with_overrides(landing=str(landing), warehouse=str(root / warehouse)), engine
        )
        summary = run_pipeline(settings, spark=spark)
        assert not [k for k, r in summary.results.items() if r.status == "FAILED"]
        return engine_store(spark, settings.warehouse, engine)

    orders = _selected_orders(request.session)
    if orders:  # compared with the continued warehouses, lineage included: the same landing
        full = run("full", "delta-rs")
    else:  # read by Delta's reader only: the suite's delta-rs build of the same samples
        built, _ = request.getfixturevalue("sample_warehouse")
        full = engine_store(spark, built.warehouse, "delta-rs")
    aside = root / "held_back"
    moved = {}
    try:
        for path in _held_back(landing):  # renamed: the same paths and times come back later
            target = aside / path.relative_to(landing)
            target.parent.mkdir(parents=True, exist_ok=True)
            path.rename(target)
            moved[path] = target
        for first, second in orders:
            run(f"{first}-then-{second}", first)
    finally:
        for path, target in moved.items():
            target.rename(path)
    assert moved, "nothing held back"
    continued = {(first, second): run(f"{first}-then-{second}", second) for first, second in orders}
    return Warehouses(landing, full, continued)


def _columns(frame) -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in frame.schema.fields]


def test_deltas_own_reader_reads_every_table_delta_rs_writes(spark, warehouses: Warehouses):
    from delta.tables import DeltaTable

    store = warehouses.full
    tables = store.tables()
    assert {t.split(".")[0] for t in tables} == {"bronze", "silver", "gold", "ops"}
    for table in tables:
        path = store.path(table)
        ours, delta = store.read(table), spark.read.format("delta").load(path)
        assert _columns(delta) == _columns(ours), table
        differences = table_differences(ours, delta, exclude=frozenset())
        assert differences is None, f"{table}: {differences}"

        history = spark.sql(f"DESCRIBE HISTORY delta.`{path}`").collect()
        assert {r.version: r.userMetadata for r in history} == {
            c["version"]: c["userMetadata"] for c in store.history(table)
        }, table

        detail = DeltaTable.forPath(spark, path).detail().first()
        rs_table = RsTable(path)
        assert detail.format == "delta", table
        assert detail.numFiles == len(rs_table.file_uris()), table
        assert list(detail.partitionColumns) == rs_table.metadata().partition_columns, table


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.exhaustive
def test_a_warehouse_continued_by_the_other_engine_equals_a_full_build(warehouses: Warehouses, order):
    full, continued = warehouses.full, warehouses.continued[order]
    assert sorted(data_tables(continued)) == sorted(data_tables(full))
    assert any(t.startswith("gold.") for t in data_tables(full))
    differences = {}
    for table in data_tables(full):
        found = table_differences(full.read(table), continued.read(table))
        if found:
            differences[table] = found
    assert not differences, "\n".join(
        f"{t} (full vs {'-then-'.join(order)}): {d}" for t, d in differences.items()
    )


@pytest.mark.exhaustive
def test_the_second_engine_ingested_only_the_held_back_files(warehouses: Warehouses):
    """Incremental, not rebuilt: the second run took up the first engine's ingestion log."""
    held = {p.resolve() for p in _held_back(warehouses.landing)}
    landed = {
        p.resolve() for source in SOURCES for p in (warehouses.landing / source).rglob("*") if p.is_file()
    }
    for order, store in warehouses.continued.items():
        rows = store.read(ingestion_log.TABLE).where(F.col("status") == ingestion_log.INGESTED).collect()
        runs: dict[str, set[Path]] = {}
        for row in sorted(rows, key=lambda r: r.logged_at):
            runs.setdefault(row.run_id, set()).add(Path(row.path).resolve())
        assert list(runs.values()) == [landed - held, held], order


@pytest.mark.exhaustive
def test_both_engines_create_tables_the_other_reads(spark, warehouses: Warehouses):
    """Every table a first run created (by delta-rs in one warehouse, by delta-spark in the other):
    both engines read the same protocol from its log, the one each engine creates, within what
    either engine reads and writes; the other engine then wrote to it (test above)."""
    from delta.tables import DeltaTable

    for (creator, _second), store in warehouses.continued.items():
        for table in store.tables():
            path = store.path(table)
            detail = DeltaTable.forPath(spark, path).detail().first()
            protocol = RsTable(path).protocol()
            versions = (detail.minReaderVersion, detail.minWriterVersion)
            assert versions == (protocol.min_reader_version, protocol.min_writer_version), (creator, table)
            assert versions == CREATED_PROTOCOL[table.split(".")[0]], (creator, table)
            assert set(detail.tableFeatures) == LEGACY_FEATURES[versions[1]], (creator, table)
            assert not protocol.reader_features and not protocol.writer_features, (creator, table)
            for engine, (reader, writer) in SUPPORTED.items():
                assert versions[0] <= reader and versions[1] <= writer, (creator, table, engine)
