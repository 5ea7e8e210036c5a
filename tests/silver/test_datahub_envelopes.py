"""DataHub entity change events give the same silver rows bare, in a DataHub Actions envelope, or
as a Kafka PlatformEvent (fixtures in tests/support/fixtures/envelopes, built from the bundled samples)."""

from __future__ import annotations

import json

import pytest

from silver import datahub_action_requests, datahub_entity_changes, datahub_ignored_events
from tests.support import FIXTURES
from tests.support.tables import RUN_SPECIFIC, bronze_frame, table_differences

ENVELOPES = FIXTURES / "envelopes"
LINEAGE = RUN_SPECIFIC | {"raw"}  # the delivered record differs by form; the typed event must not


def fixture_lines(name: str) -> list[str]:
    return (ENVELOPES / name).read_text(encoding="utf-8").splitlines()


def test_the_fixtures_wrap_the_same_bare_events():
    bare = [json.loads(line) for line in fixture_lines("datahub_bare.jsonl")]
    actions = [json.loads(line) for line in fixture_lines("datahub_actions_envelope.jsonl")]
    platform = [json.loads(line) for line in fixture_lines("datahub_platform_event.jsonl")]
    assert [a["event"] for a in actions] == bare
    assert {a["event_type"] for a in actions} == {"EntityChangeEvent_v1"}
    assert [json.loads(p["payload"]["value"]) for p in platform] == bare
    assert {(p["name"], p["payload"]["contentType"]) for p in platform} == {
        ("entityChangeEvent", "application/json")
    }


@pytest.mark.parametrize("wrapped", ["datahub_actions_envelope.jsonl", "datahub_platform_event.jsonl"])
@pytest.mark.parametrize("module", [datahub_entity_changes, datahub_action_requests], ids=lambda m: m.TABLE)
def test_wrapped_events_give_the_rows_bare_events_give(spark, wrapped, module):
    bare = module.transform(bronze_frame(spark, fixture_lines("datahub_bare.jsonl")))
    enveloped = module.transform(bronze_frame(spark, fixture_lines(wrapped)))
    assert bare.count() > 0
    assert table_differences(bare, enveloped, exclude=LINEAGE) is None
    assert enveloped.where("size(_errors) > 0").count() == bare.where("size(_errors) > 0").count()


def test_an_envelope_without_an_event_object_is_typed_as_is_and_fails_its_checks(spark):
    broken = [
        json.dumps({"event_type": "EntityChangeEvent_v1", "event": "not an object", "meta": {}}),
        json.dumps(
            {
                "name": "entityChangeEvent",
                "payload": {"value": "{not json", "contentType": "application/json"},
            }
        ),
    ]
    rows = datahub_entity_changes.transform(bronze_frame(spark, broken)).collect()
    assert len(rows) == 2
    assert all(row["entity_urn"] is None and row["category"] is None for row in rows)


def _change_log_envelope() -> dict:
    """A DataHub Actions `MetadataChangeLogEvent_v1` envelope, as the Actions Kafka source emits it."""
    return {
        "event_type": "MetadataChangeLogEvent_v1",
        "event": {
            "entityType": "dataset",
            "entityUrn": "urn:li:dataset:(urn:li:dataPlatform:hive,db.orders,PROD)",
            "changeType": "UPSERT",
            "aspectName": "globalTags",
            "aspect": {"value": '{"tags":[{"tag":"urn:li:tag:PII"}]}', "contentType": "application/json"},
            "created": {"time": 1649953100653, "actor": "urn:li:corpuser:jdoe"},
        },
        "meta": {"kafka": {"topic": "MetadataChangeLog_Versioned_v1", "offset": 7, "partition": 0}},
    }


def _other_platform_event() -> dict:
    return {
        "header": {"timestampMillis": 1649953100999},
        "name": "notificationRequestEvent",
        "payload": {"value": '{"message": {"template": "CUSTOM"}}', "contentType": "application/json"},
    }


def test_only_entity_change_envelopes_are_entity_changes_the_others_are_ignored_with_their_type(spark):
    actions = fixture_lines("datahub_actions_envelope.jsonl")
    records = [
        actions[0],
        json.dumps(_change_log_envelope()),
        fixture_lines("datahub_platform_event.jsonl")[1],
        json.dumps(_other_platform_event()),
        json.dumps({**_change_log_envelope(), "event_type": "RelationshipChangeEvent_v1"}),
    ]
    bronze = bronze_frame(spark, records)
    changes = datahub_entity_changes.transform(bronze).select("record_index", "category", "_errors")
    proposals = datahub_action_requests.transform(bronze)
    ignored = datahub_ignored_events.transform(bronze).orderBy("record_index").collect()
    assert sorted((r.record_index, r.category, r._errors) for r in changes.collect()) == [
        (0, "TAG", []),
        (2, "TAG", []),
    ]
    assert proposals.count() == 0
    assert [(r.record_index, r.event_type, r.delivery) for r in ignored] == [
        (1, "MetadataChangeLogEvent_v1", "actions"),
        (3, "notificationRequestEvent", "platform_event"),
        (4, "RelationshipChangeEvent_v1", "actions"),
    ]
    assert [r.event_time.isoformat() for r in ignored][:2] == [
        "2022-04-14T16:18:20.653000",
        "2022-04-14T16:18:20.999000",
    ]
    assert ignored[0].entity_urn == "urn:li:dataset:(urn:li:dataPlatform:hive,db.orders,PROD)"
    assert all(r._errors == [] and r.event_id for r in ignored)


def test_every_record_of_the_feed_is_in_exactly_one_of_its_tables(spark):
    records = fixture_lines("datahub_bare.jsonl") + [json.dumps(_change_log_envelope()), "{not json"]
    bronze = bronze_frame(spark, records)
    modules = (datahub_entity_changes, datahub_action_requests, datahub_ignored_events)
    indexes = [r.record_index for m in modules for r in m.transform(bronze).select("record_index").collect()]
    assert sorted(indexes) == list(range(len(records)))
    assert {m.SPEC.reconciles for m in modules} == {"datahub_ece"}
