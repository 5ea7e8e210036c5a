"""`lakehouse timeline`: an entity's history from gold.change_history as change transactions."""

from __future__ import annotations

from gold import change_history
from pipelines.query import timeline as timeline_api
from pipelines.query import timeline_spark
from tests.support.gold import build_all, source

DH = "silver.datahub_entity_changes"
DS = "urn:li:dataset:abc"
FIELD = f"urn:li:schemaField:({DS},email)"


def test_history_of_a_dataset_and_its_fields_as_timeline_transactions(spark):
    def change(event_id, time, category, operation, entity=DS, actor="urn:li:corpuser:jdoe", **params):
        parent = DS if entity.startswith("urn:li:schemaField:") else None
        return dict(event_id=event_id, event_time=time, entity_urn=entity, parent_urn=parent, entity_type="dataset",
                    category=category, operation=operation, actor=actor, modifier=params.pop("modifier", None),
                    parameters=params or None)  # fmt: skip

    history = build_all(
        change_history.SPEC,
        {
            DH: source(
                spark,
                DH,
                change("c1", "10:00", "LIFECYCLE", "CREATE"),
                change("c2", "10:00", "TECHNICAL_SCHEMA", "ADD", modifier=FIELD, fieldPath="email"),
                change("c3", "11:00", "TAG", "ADD", entity=FIELD, modifier="urn:li:tag:PII", actor="bob"),
                change("c4", "12:00", "TECHNICAL_SCHEMA", "REMOVE", modifier=FIELD, fieldPath="email"),
                change("c5", "13:00", "OWNER", "ADD", modifier="urn:li:corpuser:ann"),
                change("x1", "10:30", "TAG", "ADD", entity="urn:li:dataset:other", modifier="urn:li:tag:PII"),
            )
        },
    )
    result = timeline_api.transactions(timeline_spark.entity_changes(history, DS).collect())
    assert [(t["semVer"], t["semVerChange"], t["actor"], len(t["changeEvents"])) for t in result] == [
        ("0.1.0", "MINOR", "urn:li:corpuser:jdoe", 2),
        ("0.1.1", "PATCH", "bob", 1),
        ("1.0.0", "MAJOR", "urn:li:corpuser:jdoe", 1),
        ("1.0.1", "PATCH", "urn:li:corpuser:jdoe", 1),
    ]
    first = result[0]
    assert first["timestamp"] == 1767261600000  # 2026-01-01T10:00Z in epoch milliseconds
    assert {e["category"] for e in first["changeEvents"]} == {"LIFECYCLE", "TECHNICAL_SCHEMA"}
    assert result[1]["changeEvents"][0]["entityUrn"] == FIELD  # the field's change, under its dataset
    assert result[1]["changeEvents"][0]["auditStamp"] == {"actor": "bob", "time": 1767265200000}

    owners = timeline_spark.entity_changes(
        history, DS, ["OWNERSHIP"]
    ).collect()  # OWNER and OWNERSHIP are one
    assert [r["change_id"] for r in owners] == ["c5"]
    window = timeline_spark.entity_changes(
        history,
        DS,
        start=timeline_api.parse_time("2026-01-01T11:00"),
        end=timeline_api.parse_time("2026-01-01T13:00"),
    ).collect()
    assert [r["change_id"] for r in window] == ["c3", "c4"]
