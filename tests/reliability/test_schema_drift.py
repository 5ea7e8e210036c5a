"""Schema drift: newer servers send keys, fields and event kinds the catalogs do not know.

None of it may fail the run or be lost: unknown parameter keys stay in `parameters_extra`,
unknown DataWorks payload fields in the family table's `data_extra`, records of unknown
categories / event types / event codes stay in silver, and a `warn` expectation reports
them in ops.dq_results (success false, one unexpected row per drifted record).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest
from pyspark.sql import functions as F

from pipelines.orchestration.runner import RunSummary, run_pipeline
from pipelines.quality.report import write_report
from pipelines.store import TableStore, open_store
from tests.support.runs import SOURCES

pytestmark = pytest.mark.slow

MS = 1709280000000
DATASET = "urn:li:dataset:(urn:li:dataPlatform:hive,drift.t,PROD)"


def _ece(n: int, **fields) -> dict:
    record = {
        "entityUrn": DATASET,
        "entityType": "dataset",
        "category": "TAG",
        "operation": "ADD",
        "modifier": "urn:li:tag:t",
        "parameters": {"tagUrn": "urn:li:tag:t"},
        "auditStamp": {"actor": "urn:li:corpuser:tester", "time": MS + n},
        "version": 0,
    }
    return {**record, **fields}


DRIFT = {
    "datahub_ece": [
        _ece(1),
        _ece(2, parameters={"tagUrn": "urn:li:tag:t2", "attributionSource": "urn:li:dataHubAction:x"}),
        _ece(
            3, category="DATA_CONTRACT", operation="ADD", parameters={"contractUrn": "urn:li:dataContract:c"}
        ),
        _ece(4, operation="PROPOSE"),
        _ece(5, schemaVersion="2"),  # a new top-level field: silver keeps the raw text
    ],
    "datahub_audit": [
        {
            "eventType": "LogInEvent",
            "timestamp": MS,
            "actorUrn": "urn:li:corpuser:a",
            "loginSource": "SSO_LOGIN",
        },
        {"eventType": "ExportAssetsEvent", "timestamp": MS + 1, "actorUrn": "urn:li:corpuser:a"},
    ],
    "openmetadata": [
        {
            "id": f"d0000000-0000-4000-8000-00000000000{n}",
            "eventType": event_type,
            "entityType": "table",
            "entityFullyQualifiedName": "svc.db.s.drift",
            "userName": "tester",
            "timestamp": MS + n,
            "currentVersion": 0.1,
        }
        for n, event_type in ((1, "entityCreated"), (2, "entityArchived"))
    ],
    "dataworks": [
        {
            "id": f"drift-{n}",
            "source": "acs.dataworks",
            "specversion": "1.0",
            "type": event_type,
            "time": "2024-07-12T11:08:00+08:00",
            "data": {"eventCode": code, "tenantId": 1, "projectId": 2, "nodeId": 700 + n, **extra},
        }
        for n, event_type, code, extra in (
            (1, "dataworks:NodeChange:NodeChangeCreated", "node-change-created", {}),
            (
                2,
                "dataworks:NodeChange:NodeChangeCreated",
                "node-change-created",
                {"nodeTags": "etl", "lineage": {"inputs": [1, 2]}},
            ),
            (3, "dataworks:NodeChange:NodeChangeTeleported", "node-change-teleported", {}),
        )
    ],
}


@dataclass
class Drifted:
    store: TableStore
    summary: RunSummary


@pytest.fixture(scope="module")
def drifted(config, spark, tmp_path_factory) -> Drifted:
    root = tmp_path_factory.mktemp("drift")
    for source in SOURCES:
        folder = root / "landing" / source
        folder.mkdir(parents=True)
        (folder / "drift.jsonl").write_text("".join(json.dumps(r) + "\n" for r in DRIFT[source]))
    settings = config.with_overrides(landing=str(root / "landing"), warehouse=str(root / "warehouse"))
    summary = run_pipeline(settings, spark=spark)
    return Drifted(open_store(spark, settings.warehouse, "delta-rs"), summary)


def _dq(store: TableStore, table: str, expectation: str):
    rows = store.read("ops.dq_results").where(
        (F.col("table") == table) & (F.col("expectation") == expectation)
    )
    found = rows.collect()
    assert len(found) == 1, f"{table}: expected one {expectation} result, got {found}"
    return found[0]


def test_the_run_does_not_fail(drifted: Drifted):
    failed = {k: r.message for k, r in drifted.summary.results.items() if r.status == "FAILED"}
    assert not failed
    store = drifted.store
    assert not store.exists("silver.quarantine") or store.read("silver.quarantine").count() == 0


def test_new_parameter_key_is_kept_in_parameters_extra(drifted: Drifted):
    row = (
        drifted.store.read("silver.datahub_entity_changes").where(F.col("tagUrn") == "urn:li:tag:t2").first()
    )
    assert row.parameters_extra == {"attributionSource": "urn:li:dataHubAction:x"}
    assert row.parameters["tagUrn"] == "urn:li:tag:t2"


def test_unknown_category_and_operation_are_kept_and_reported(drifted: Drifted):
    changes = drifted.store.read("silver.datahub_entity_changes")
    contract = changes.where(F.col("category") == "DATA_CONTRACT").first()
    assert contract.parameters_extra == {"contractUrn": "urn:li:dataContract:c"}
    assert changes.where(F.col("operation") == "PROPOSE").count() == 1
    assert changes.where(F.col("raw").contains('"schemaVersion"')).count() == 1
    result = _dq(drifted.store, "silver.datahub_entity_changes", "category_operation_known")
    assert (result.severity, result.success, result.unexpected_count) == ("warn", False, 2)


def test_new_dataworks_payload_fields_are_kept_in_data_extra(drifted: Drifted):
    nodes = drifted.store.read("silver.dataworks_node_changes")
    row = nodes.where(F.col("node_id") == 702).first()
    assert {k: json.loads(v) if v.startswith("{") else v for k, v in row.data_extra.items()} == {
        "nodeTags": "etl",
        "lineage": {"inputs": [1, 2]},
    }
    assert nodes.where(F.col("node_id") == 701).first().data_extra is None


def test_unknown_dataworks_event_code_is_kept_and_reported(drifted: Drifted):
    events = drifted.store.read("silver.dataworks_events")
    teleported = events.where(F.col("event_code") == "node-change-teleported").collect()
    assert len(teleported) == 1 and teleported[0].family is None
    assert drifted.store.read("silver.dataworks_node_changes").count() == 2  # not forced into a family
    result = _dq(drifted.store, "silver.dataworks_events", "event_code_in_catalog")
    assert (result.severity, result.success, result.unexpected_count) == ("warn", False, 1)


@pytest.mark.parametrize(
    ("table", "new_type"),
    [
        ("silver.openmetadata_change_events", "entityArchived"),
        ("silver.datahub_audit_events", "ExportAssetsEvent"),
    ],
)
def test_unknown_event_type_is_kept_and_reported(drifted: Drifted, table: str, new_type: str):
    assert drifted.store.read(table).where(F.col("event_type") == new_type).count() == 1
    result = _dq(drifted.store, table, "event_type_known")
    assert (result.severity, result.success, result.unexpected_count) == ("warn", False, 1)


def test_drifted_records_reach_gold_change_history(drifted: Drifted):
    if not drifted.store.exists("gold.change_history"):
        pytest.skip("gold.change_history is not built by the task graph")
    history = drifted.store.read("gold.change_history")
    assert history.where(F.col("category") == "DATA_CONTRACT").count() == 1
    assert history.where(F.col("source") == "dataworks").count() == 3


UNLISTED_KEYS = [  # table, column holding the unlisted keys, its warn rule, drifted records
    ("silver.datahub_entity_changes", "parameters_extra", "parameter_keys_in_catalog", 2),
    ("silver.dataworks_node_changes", "data_extra", "payload_fields_in_schema", 1),
]


@pytest.mark.parametrize(("table", "column", "expectation", "drifted_records"), UNLISTED_KEYS)
def test_unlisted_keys_are_reported(
    drifted: Drifted, table: str, column: str, expectation: str, drifted_records: int
):
    results = (
        drifted.store.read("ops.dq_results")
        .where((F.col("table") == table) & (F.col("column") == column) & (F.col("severity") == "warn"))
        .collect()
    )
    assert [(r.expectation, r.success, r.unexpected_count) for r in results] == [
        (expectation, False, drifted_records)
    ]
    # warn only: every record is in the table, none quarantined (see test_the_run_does_not_fail)
    assert drifted.store.read(table).where(F.size(column) > 0).count() == drifted_records


def test_drift_shows_in_the_dq_report(drifted: Drifted, tmp_path):
    page = write_report(drifted.store, tmp_path / "report.html").read_text(encoding="utf-8")
    for table, _column, expectation, _count in UNLISTED_KEYS:
        assert f'id="dq-{table}"' in page
        row = re.search(f'<tr class="fail" data-expectation="{expectation}"[^>]*>.*?</tr>', page)
        assert row and "FAIL" in row.group(0), f"{table}: {expectation} not shown as failing"
