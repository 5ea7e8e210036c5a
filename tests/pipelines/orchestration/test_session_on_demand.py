"""A run with nothing in sight starts no Spark session; when a task reaches for Spark after all (new
rows arrived after the weighing), that attempt leaves no trace and the run starts again with one."""

from __future__ import annotations

import pytest

from pipelines.core.graph import Task, TaskGraph
from pipelines.orchestration.runner import run_pipeline
from pipelines.orchestration.session_on_demand import NO_SESSION, SessionNeeded, may_run_without_session
from pipelines.quality.validation_documents import FOLDER
from silver import datahub_entity_changes
from tests.support.tables import bronze_frame

pytestmark = pytest.mark.slow  # three runs of a task on real tables

BRONZE = "bronze.datahub_entity_change_events"
GRAPH = TaskGraph(
    name="one task",
    tasks=(Task("silver_datahub_entity_changes", "silver.datahub_entity_changes"),),
    schedule={},
    retries=0,
)
LAYERS = ("silver",)


def _ece(n: int) -> dict:
    return {
        "entityUrn": f"urn:li:dataset:(urn:li:dataPlatform:hive,db.t{n},PROD)",
        "entityType": "dataset",
        "category": "TAG",
        "operation": "ADD",
        "modifier": "urn:li:tag:pii",
        "auditStamp": {"actor": "urn:li:corpuser:a", "time": 1_700_000_000_000 + n},
    }


def _land(spark, store, first: int, count: int, name: str) -> None:
    records = [_ece(n) for n in range(first, first + count)]
    store.append(bronze_frame(spark, records, source_file=f"/landing/{name}.jsonl"), BRONZE)


def _documents(warehouse) -> list:
    return sorted((warehouse / FOLDER).rglob("*.json"))


def test_the_session_stands_in_for_spark_and_refuses_every_use():
    with pytest.raises(SessionNeeded, match="createDataFrame"):
        NO_SESSION.createDataFrame([], "a int")
    assert not isinstance(SessionNeeded("x"), Exception)  # no task's error handling takes it for a failure


def test_a_run_without_a_session_starts_again_with_one_when_a_task_needs_spark(
    spark, store, config, warehouse
):
    settings = config.with_overrides(warehouse=str(warehouse))
    _land(spark, store, 0, 3, "first")
    first = run_pipeline(settings, LAYERS, graph=GRAPH, spark=spark)
    asked = []

    def session():
        asked.append("a session")
        return spark

    assert may_run_without_session(settings, LAYERS, GRAPH)
    idle = run_pipeline(settings, LAYERS, graph=GRAPH, session=session)
    assert asked == [] and idle.results["silver_datahub_entity_changes"].status == "SKIPPED"
    documents = _documents(warehouse)

    _land(spark, store, 3, 2, "second")  # lands after the (stale) weighing below said nothing is new
    summary = run_pipeline(settings, LAYERS, graph=GRAPH, session=session, in_sight=lambda: 0)

    assert asked == ["a session"]
    assert summary.results["silver_datahub_entity_changes"].rows_out == 2
    runs = [r for r in store.read("ops.runs").collect() if r.run_id == summary.run_id]
    assert [(r.job, r.status) for r in runs] == [("silver_datahub_entity_changes", "SUCCESS")]
    recorded = {r.run_id for r in store.read("ops.runs").collect()}
    assert recorded == {first.run_id, idle.run_id, summary.run_id}  # the abandoned attempt recorded no run
    assert len(_documents(warehouse)) == len(documents) + 1  # the run's own document, none of the attempt's
    assert store.read(datahub_entity_changes.SPEC.table).count() == 5
