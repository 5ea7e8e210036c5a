"""Evidence packs on a small warehouse: a few hand-written DataHub and OpenMetadata records run
through bronze, silver and `gold.change_history` once for the module (tests only read it; one
that adds data works on a copy)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from pipelines.cli import main
from pipelines.core.config import load_config
from pipelines.core.graph import load_graph
from pipelines.evidence.pack import FILES, build_pack
from pipelines.evidence.provenance import code_version, rules_in_force
from pipelines.evidence.scope import Scope
from pipelines.orchestration.runner import run_pipeline
from pipelines.store import open_store
from tests.support.engines import engine_store, skip_without_delta_spark, with_engine

DATASET = "urn:li:dataset:(urn:li:dataPlatform:snowflake,evidence.orders,PROD)"
OTHER = "urn:li:dataset:(urn:li:dataPlatform:snowflake,evidence.customers,PROD)"
FIELD = f"urn:li:schemaField:({DATASET},email)"
OM_TABLE = "svc.shop.sales.orders"


def _millis(text: str) -> int:
    return int(dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc).timestamp() * 1000)


def _datahub(urn: str, kind: str, category: str, operation: str, actor: str, at: str, **extra) -> dict:
    record = {"entityUrn": urn, "entityType": kind, "category": category, "operation": operation}
    record.update(extra)
    record["auditStamp"] = {"actor": actor, "time": _millis(at)}
    record["version"] = 0
    return record


DATAHUB = [
    _datahub(DATASET, "dataset", "LIFECYCLE", "CREATE", "urn:li:corpuser:asmith", "2024-03-01T08:00:00"),
    _datahub(
        DATASET,
        "dataset",
        "TAG",
        "ADD",
        "urn:li:corpuser:bchen",
        "2024-03-01T09:00:00",
        modifier="urn:li:tag:pii",
        parameters={"tagUrn": "urn:li:tag:pii"},
    ),
    _datahub(
        FIELD,
        "schemaField",
        "TAG",
        "ADD",
        "urn:li:corpuser:bchen",
        "2024-03-02T10:00:00",
        modifier="urn:li:tag:pii",
        parameters={"tagUrn": "urn:li:tag:pii"},
    ),
    _datahub(
        OTHER,
        "dataset",
        "OWNERSHIP",
        "ADD",
        "urn:li:corpuser:asmith",
        "2024-03-05T00:00:00",
        modifier="urn:li:corpuser:jdoe",
        parameters={"ownerUrn": "urn:li:corpuser:jdoe", "ownerType": "TECHNICAL_OWNER"},
    ),
    # after the scope's end (exclusive): never in the March packs
    _datahub(
        DATASET,
        "dataset",
        "TAG",
        "REMOVE",
        "urn:li:corpuser:bchen",
        "2024-04-01T00:00:00",
        modifier="urn:li:tag:pii",
        parameters={"tagUrn": "urn:li:tag:pii"},
    ),
]
_TAGS = '[{"tagFQN":"PII.Sensitive","source":"Classification","labelType":"Manual","state":"Confirmed"}]'
OPENMETADATA = [
    {
        "id": "5f0c1d2e-0000-4000-8000-000000000001",
        "eventType": "entityCreated",
        "entityType": "table",
        "entityId": "6a1b2c3d-0000-4000-8000-00000000000a",
        "entityFullyQualifiedName": OM_TABLE,
        "previousVersion": 0.1,
        "currentVersion": 0.1,
        "userName": "aaron",
        "timestamp": _millis("2024-03-04T08:00:00"),
        "changeDescription": None,
    },
    {
        "id": "5f0c1d2e-0000-4000-8000-000000000002",
        "eventType": "entityUpdated",
        "entityType": "table",
        "entityId": "6a1b2c3d-0000-4000-8000-00000000000a",
        "entityFullyQualifiedName": OM_TABLE,
        "previousVersion": 0.1,
        "currentVersion": 0.2,
        "userName": "aaron",
        "timestamp": _millis("2024-03-04T08:10:00"),
        "changeDescription": {
            "fieldsAdded": [{"name": "tags", "newValue": _TAGS}],
            "fieldsUpdated": [],
            "fieldsDeleted": [],
            "previousVersion": 0.1,
        },
    },
]
DATAWORKS = [  # a node created in July, in the shape EventBridge delivers
    {
        "datacontenttype": "application/json;charset=utf-8",
        "data": {
            "nodeName": "ods_orders_daily",
            "operator": "1904567812345735",
            "eventCode": "node-change-created",
            "modifyTime": 1720753680000,
            "createTime": 1720753680000,
            "tenantId": 283789910656,
            "nodeId": 700012003,
            "projectId": 91234,
            "blockBusiness": False,
        },
        "id": "539fd8f4-4ea1-4625-aa8b-6c9066740001",
        "source": "acs.dataworks",
        "specversion": "1.0",
        "subject": "",
        "time": "2024-07-12T11:08:00+08:00",
        "type": "dataworks:NodeChange:NodeChangeCreated",
    }
]
MARCH = ("2024-03-01", "2024-04-01")


@pytest.fixture(scope="module")
def built(spark, tmp_path_factory):
    """(config, delta-rs store) of the module's warehouse."""
    root = tmp_path_factory.mktemp("evidence")
    landing = root / "landing"
    for folder, name, records in (
        ("datahub_ece/2024-03", "changes.jsonl", DATAHUB),
        ("openmetadata/2024-03", "change_events.jsonl", OPENMETADATA),
        ("dataworks/2024-07", "eventbridge_events.jsonl", DATAWORKS),
    ):
        (landing / folder).mkdir(parents=True)
        (landing / folder / name).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    config = with_engine(
        load_config().with_overrides(landing=str(landing), warehouse=str(root / "warehouse")), "delta-rs"
    )
    run_pipeline(config, graph=load_graph().up_to(["gold_change_history"]), spark=spark)
    return config, open_store(spark, config.warehouse, "delta-rs")


def _pack(store, config, folder: Path, versions=None, **scope) -> Path:
    start, end = scope.pop("span", MARCH)
    build_pack(
        store, Scope.parse(start, end, **scope), folder, rules_in_force(config), code_version(), versions
    )
    return folder


def _lines(folder: Path, key: str) -> list[dict]:
    return [json.loads(line) for line in (folder / FILES[key]).read_text(encoding="utf-8").splitlines()]


def _changed(folder: Path) -> set[tuple]:
    return {
        (c["source"], c["entity_urn"], c["operation"], c["actor"], c["event_time"])
        for c in _lines(folder, "changes")
    }


def _expected_datahub(*records: dict) -> set[tuple]:
    def at(record):
        return dt.datetime.fromtimestamp(record["auditStamp"]["time"] / 1000, dt.timezone.utc)

    return {
        (
            "datahub",
            r["entityUrn"],
            r["operation"],
            r["auditStamp"]["actor"],
            at(r).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        )
        for r in records
    }


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_pack_holds_exactly_the_changes_in_scope_and_the_raw_records_they_came_from(built, tmp_path):
    config, store = built
    pack = _pack(store, config, tmp_path / "pack")
    changes = _lines(pack, "changes")
    datahub = {c for c in _changed(pack) if c[0] == "datahub"}
    assert datahub == _expected_datahub(*DATAHUB[:4])  # the April removal is out of scope
    om = [c for c in changes if c["source"] == "openmetadata"]
    assert sorted(c["operation"] for c in om) == ["ADD", "CREATE"]  # the tag added, the table created
    assert [(c["event_time"], c["change_id"]) for c in changes] == sorted(
        (c["event_time"], c["change_id"]) for c in changes
    )

    trace = {t["change_id"]: t for t in _lines(pack, "trace")}
    assert set(trace) == {c["change_id"] for c in changes}
    assert all(t["record_found"] for t in trace.values())
    records = _lines(pack, "records")
    by_position = {(r["table"], r["source_file"], r["record_index"]): r for r in records}
    assert len(by_position) == len(records) == 6  # four DataHub records, both OpenMetadata events
    landed = {
        "bronze.datahub_entity_change_events": DATAHUB,
        "bronze.openmetadata_change_events": OPENMETADATA,
    }
    for change in changes:
        link = trace[change["change_id"]]
        record = by_position[(link["bronze_table"], link["source_file"], link["record_index"])]
        assert json.loads(record["raw"]) == landed[link["bronze_table"]][link["record_index"]]
        assert record["ingested_at"] == link["ingested_at"]
    assert {t["silver_table"] for t in trace.values()} == {
        "silver.datahub_entity_changes",
        "silver.openmetadata_change_events",
        "silver.openmetadata_field_changes",
    }

    versions = json.loads((pack / FILES["versions"]).read_text())["tables"]
    assert versions["gold.change_history"] == store.version("gold.change_history")
    assert versions["bronze.openmetadata_change_events"] == store.version("bronze.openmetadata_change_events")
    code = json.loads((pack / FILES["code"]).read_text())
    assert code["version"] and len(code["source_sha256"]) == 64 and code["source_files"] > 100
    rules = json.loads((pack / FILES["rules"]).read_text())
    assert "lakehouse.yaml" in rules["conf_files"] and rules["governance"] == config.section("governance")
    readme = (pack / FILES["readme"]).read_text()
    assert "lakehouse evidence verify" in readme and "6 changes and 6 raw records" in readme


def test_filters_by_actor_entity_with_its_fields_and_catalog(built, tmp_path):
    config, store = built
    by_actor = _pack(store, config, tmp_path / "actor", actor="urn:li:corpuser:bchen")
    assert _changed(by_actor) == _expected_datahub(DATAHUB[1], DATAHUB[2])
    by_entity = _pack(store, config, tmp_path / "entity", entity=DATASET)
    assert _changed(by_entity) == _expected_datahub(*DATAHUB[:3])  # the dataset and its field
    by_catalog = _pack(store, config, tmp_path / "catalog", catalog="openmetadata")
    assert {c[0] for c in _changed(by_catalog)} == {"openmetadata"} and len(_changed(by_catalog)) == 2
    assert {r["table"] for r in _lines(by_catalog, "records")} == {"bronze.openmetadata_change_events"}
    dataworks = _pack(
        store, config, tmp_path / "dataworks", span=("2024-01-01", "2025-01-01"), catalog="dataworks"
    )
    (change,) = _lines(dataworks, "changes")
    (record,) = _lines(dataworks, "records")
    assert (change["actor"], change["entity_urn"]) == ("1904567812345735", "dataworks:node:700012003")
    assert json.loads(record["raw"]) == DATAWORKS[0] and record["table"] == "bronze.dataworks_events"
    april = _pack(store, config, tmp_path / "april", span=("2024-04-01", "2024-05-01"))
    assert _changed(april) == _expected_datahub(DATAHUB[4])


def test_a_pack_built_again_is_byte_identical_and_pinned_versions_rebuild_it_after_new_data(
    built, spark, tmp_path
):
    config, store = built
    first = _files(_pack(store, config, tmp_path / "first"))
    assert _files(_pack(store, config, tmp_path / "again")) == first

    # new data arrives in a copy of the warehouse: a change in scope, committed to the history
    copy = tmp_path / "later"
    shutil.copytree(config.warehouse, copy)
    later = open_store(spark, copy, "delta-rs")
    one = later.read("gold.change_history").where("source = 'datahub'").limit(1)
    later.append(one.withColumn("change_id", one.change_id.substr(1, 8)), "gold.change_history")
    unpinned = _files(_pack(later, config, tmp_path / "unpinned"))
    assert unpinned[FILES["changes"]].count(b"\n") == first[FILES["changes"]].count(b"\n") + 1
    assert _files(_pack(later, config, tmp_path / "pinned", versions=_versions(tmp_path / "first"))) == first


def _versions(pack: Path) -> dict[str, int]:
    return json.loads((pack / FILES["versions"]).read_text())["tables"]


def _verify(pack: Path, capsys) -> tuple[int, list[str]]:
    code = main(["evidence", "verify", str(pack)])
    return code, capsys.readouterr().out.splitlines()


def test_verify_passes_on_a_pack_and_names_each_changed_missing_or_extra_file(built, tmp_path, capsys):
    config, store = built
    overlay = tmp_path / "delta-rs.yaml"
    overlay.write_text("storage:\n  engine: delta-rs\n")
    pack = tmp_path / "pack"
    assert (
        main(
            [
                "evidence",
                "--conf",
                str(overlay),
                "--warehouse",
                str(config.warehouse),
                "--from",
                MARCH[0],
                "--to",
                MARCH[1],
                "--catalog",
                "datahub",
                "--out",
                str(pack),
            ]
        )
        == 0
    )
    assert "4 changes, 4 raw records" in capsys.readouterr().out
    assert (
        main(["evidence", "--conf", str(overlay), "--from", MARCH[0], "--to", MARCH[1], "--out", str(pack)])
        == 1
    )
    capsys.readouterr()  # a pack is never written over

    code, out = _verify(pack, capsys)
    assert code == 0 and out == [f"pack {pack} verified: {len(FILES)} files match the manifest"]

    changes = pack / FILES["changes"]
    original = changes.read_bytes()
    changes.write_bytes(original[:10] + bytes([original[10] ^ 1]) + original[11:])  # one byte changed
    code, out = _verify(pack, capsys)
    assert code == 1 and [line.split(" (")[0] for line in out] == [f"changed: {FILES['changes']}"]
    changes.write_bytes(original)
    assert _verify(pack, capsys)[0] == 0

    readme = pack / FILES["readme"]
    text = readme.read_bytes()
    readme.unlink()
    code, out = _verify(pack, capsys)
    assert code == 1 and out == [f"missing: {FILES['readme']}"]
    readme.write_bytes(text)

    (pack / "notes.txt").write_text("added later\n")
    code, out = _verify(pack, capsys)
    assert code == 1 and out == ["extra: notes.txt (not in the manifest)"]


@pytest.mark.slow
def test_delta_spark_reads_the_same_versions_into_the_same_bytes(built, spark, tmp_path):
    """Delta's own engine, reading the tables by name at the pinned versions, writes the pack
    delta-rs writes, byte for byte."""
    skip_without_delta_spark("delta-spark")
    config, store = built
    expected = _files(_pack(store, config, tmp_path / "delta-rs"))
    named = engine_store(spark, config.warehouse, "delta-spark")  # each table registered as it is read
    assert _files(_pack(named, config, tmp_path / "delta-spark")) == expected
