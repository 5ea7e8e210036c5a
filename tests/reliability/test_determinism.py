"""Same landing data, same answers: two warehouses agree byte for byte (one built interpreted with one
task at a time, one with Spark's generated code and tasks side by side), and compaction changes nothing.

Each silver and gold table is read with one ordered query (every column but the run-specific
ones, ORDER BY all of them) and the answers are compared as bytes. Compacting a table (the
engine's own: delta-rs' `optimize.compact`, Delta's `OPTIMIZE`) must leave every answer as it
was when read through the store, and a later run must see no new data in it.

The first warehouse is always built by delta-rs; the second by each engine in turn: by delta-rs
with generated code and three tasks at a time, by delta-spark with the engine's own settings
(tasks side by side), so the delta-spark variant shows both engines giving byte-identical
answers. How Spark evaluates a plan does not depend on the table engine that stores its result.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, DataType, MapType, StructType

from pipelines.core.config import Config
from pipelines.ops.compaction import compact_tables
from pipelines.orchestration.runner import RunSummary, run_pipeline
from pipelines.store import TableStore, open_store
from tests.support.engines import engine_store, skip_without_delta_spark, with_engine
from tests.support.runs import SAMPLES
from tests.support.tables import RUN_SPECIFIC

# Two builds of the samples and a compaction (ten minutes on 2 cores): `make test-exhaustive`. In
# `make test-all`, that a compaction changes no answer and that a later run reads none of its rows
# as new is checked on tables (tests/pipelines/store/test_table_store.py, test_compaction.py).
pytestmark = [pytest.mark.slow, pytest.mark.heavy, pytest.mark.exhaustive]


def _has_map(data_type: DataType) -> bool:
    if isinstance(data_type, MapType):
        return True
    if isinstance(data_type, ArrayType):
        return _has_map(data_type.elementType)
    if isinstance(data_type, StructType):
        return any(_has_map(f.dataType) for f in data_type.fields)
    return False


def ordered_answer(store: TableStore, table: str) -> bytes:
    """`SELECT <columns> FROM table ORDER BY <columns>` as bytes (maps ordered by their JSON text)."""
    frame = store.read(table)
    fields = sorted((f for f in frame.schema.fields if f.name not in RUN_SPECIFIC), key=lambda f: f.name)
    view = f"det_{table.replace('.', '_')}"
    frame.createOrReplaceTempView(view)
    columns = ", ".join(f"`{f.name}`" for f in fields)
    order = ", ".join(f"to_json(`{f.name}`)" if _has_map(f.dataType) else f"`{f.name}`" for f in fields)
    rows = store.spark.sql(f"SELECT to_json(struct({columns})) AS j FROM {view} ORDER BY {order}").collect()
    return "\n".join(r.j for r in rows).encode()


def answers(store: TableStore) -> dict[str, bytes]:
    return {t: ordered_answer(store, t) for t in store.tables() if t.split(".")[0] in ("silver", "gold")}


# A Function Compute message with no time anywhere (no envelope, no payload time field).
TIMELESS_FC = {
    "messageId": "det-timeless-fc",
    "eventType": "delete-project",
    "eventCategoryType": "project",
    "blockBusiness": False,
    "extensionBizId": "job_det",
    "messageBody": {"eventCode": "delete-project", "tenantId": 1, "projectId": 7, "operator": "1"},
}
TIMELESS_MTIME = dt.datetime(2024, 7, 1, 8, 30, tzinfo=dt.timezone.utc)


@dataclass
class Twins:
    landing: Path
    stores: list[TableStore]
    answers: list[dict[str, bytes]]  # per warehouse, taken right after its run


def _one_task_at_a_time(settings: Config) -> Config:
    raw = copy.deepcopy(settings.raw)
    raw["run"]["parallel_tasks"] = 1
    return Config(raw)


def _with_generated_code_and_parallel_tasks(settings: Config) -> Config:
    """`settings` with code generation for every task (the samples are small enough to be
    evaluated interpreted under the default `small_input_rows`) and three tasks at a time."""
    raw = copy.deepcopy(settings.raw)
    raw["profiles"][raw["profile"]]["small_input_rows"] = 0
    raw["run"]["parallel_tasks"] = 3
    return Config(raw)


@dataclass
class First:
    landing: Path
    store: TableStore
    answers: dict[str, bytes]


@pytest.fixture(scope="module")
def first(config, spark, tmp_path_factory) -> First:
    """The bundled samples (plus a timeless FC message) run by delta-rs, interpreted, one task at a time."""
    root = tmp_path_factory.mktemp("determinism")
    landing = root / "landing"
    shutil.copytree(SAMPLES, landing)  # copy2: modification times kept
    timeless = landing / "dataworks" / "function_compute" / "timeless.json"
    timeless.write_text(json.dumps(TIMELESS_FC))
    os.utime(timeless, (TIMELESS_MTIME.timestamp(), TIMELESS_MTIME.timestamp()))
    settings = _one_task_at_a_time(
        with_engine(config.with_overrides(landing=str(landing), warehouse=str(root / "first")), "delta-rs")
    )
    run_pipeline(settings, spark=spark)
    store = open_store(spark, settings.warehouse, "delta-rs")
    return First(landing, store, answers(store))


# delta-spark builds the samples in about three times delta-rs' time; that both engines build the
# same rows is checked in `make test-all` by delta-spark continuing delta-rs' warehouse
# (test_cross_engine.py), byte for byte here
SECOND_ENGINES = ["delta-rs", "delta-spark"]


@pytest.fixture(scope="module", params=SECOND_ENGINES)
def twins(request, config, spark, first: First) -> Twins:
    """The first warehouse and a second one built after it (so their run times differ) by the
    engine of the parameter, from the same landing folder (so paths agree); delta-rs' with
    generated code and three tasks at a time, delta-spark's with the default settings."""
    engine = request.param
    skip_without_delta_spark(engine)
    warehouse = first.landing.parent / f"second-{engine}"
    settings = with_engine(
        config.with_overrides(landing=str(first.landing), warehouse=str(warehouse)), engine
    )
    # whether Spark generates code or interprets, and the order tasks run in, change nothing
    run_pipeline(
        _with_generated_code_and_parallel_tasks(settings) if engine == "delta-rs" else settings, spark=spark
    )
    second = engine_store(spark, settings.warehouse, engine)
    return Twins(first.landing, [first.store, second], [first.answers, answers(second)])


@dataclass
class Compacted:
    tables: list[str]  # tables whose files the engine's compaction rewrote
    before: dict[str, bytes]
    after_compaction: dict[str, bytes]
    after_next_run: dict[str, bytes]
    next_run: RunSummary


COMPACTED_FILE_BYTES = 128 * 1024 * 1024  # every sample table's files fit in one


@pytest.fixture(scope="module")
def compacted(config, spark, twins: Twins) -> Compacted:
    """The second warehouse compacted table by table by its own engine, then run again (by the
    same engine) on the same landing data."""
    store = twins.stores[1]
    done = compact_tables(store, store.tables(), COMPACTED_FILE_BYTES)
    tables = [c.table for c in done if c.files_removed]
    after_compaction = answers(store)
    settings = with_engine(
        config.with_overrides(landing=str(twins.landing), warehouse=str(store.warehouse)), store.engine.name
    )
    summary = run_pipeline(settings, spark=spark)
    return Compacted(tables, twins.answers[1], after_compaction, answers(store), summary)


def test_two_warehouses_give_byte_identical_answers(twins: Twins):
    first, second = twins.answers
    assert sorted(first) == sorted(second)
    assert {t.split(".")[0] for t in first} == {"silver", "gold"}
    assert not [t for t in first if first[t] != second[t]]
    assert all(first[t] for t in first if twins.stores[0].read(t).count()), "an answer came back empty"


def test_a_message_without_any_time_gets_its_file_time_in_every_warehouse(twins: Twins):
    """Not the run's time: the twins ran minutes apart and still agree (previous test)."""
    for store in twins.stores:
        (row,) = (
            store.read("silver.dataworks_events")
            .where(F.col("cloud_event_id") == TIMELESS_FC["messageId"])
            .select("event_time_source", F.date_format("event_time", "yyyy-MM-dd HH:mm").alias("at"))
            .collect()
        )
        assert (row.event_time_source, row.at) == ("source_modified_at", "2024-07-01 08:30")


def test_compaction_changes_no_answer(compacted: Compacted):
    assert any(t.startswith("bronze.") for t in compacted.tables)
    assert any(t.startswith("silver.") for t in compacted.tables)
    assert compacted.after_compaction == compacted.before


def test_a_run_after_compaction_changes_no_answer(compacted: Compacted):
    failed = {k: r.message for k, r in compacted.next_run.results.items() if r.status == "FAILED"}
    assert not failed
    assert compacted.after_next_run == compacted.before


def test_a_run_after_compaction_reads_no_old_row_as_new(compacted: Compacted):
    """Compaction rewrites files without changing data: no task may count their rows as new input."""
    reread = {
        key: result.source_rows for key, result in compacted.next_run.results.items() if result.source_rows
    }
    assert not reread
