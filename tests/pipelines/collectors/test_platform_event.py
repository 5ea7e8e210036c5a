"""DataHub's PlatformEvent records decoded from Confluent-framed Avro into landing lines (no broker)."""

from __future__ import annotations

import json

import fastavro
import pytest

from pipelines.collectors.datahub_kafka import KafkaSettings
from pipelines.collectors.platform_event import PLATFORM_EVENT_SCHEMA, frame, landing_line, split_frame
from pipelines.core.config import load_config

PARSED = fastavro.parse_schema(PLATFORM_EVENT_SCHEMA)
EVENT = {"entityUrn": "urn:li:dataset:(urn:li:dataPlatform:hive,db.订单,PROD)", "category": "TAG"}


def record(name: str, value: bytes) -> dict:
    return {
        "header": {"timestampMillis": 1649953100653},
        "name": name,
        "payload": {"value": value, "contentType": "application/json"},
    }


def line(value: bytes | None) -> tuple[dict | None, str]:
    decoded = landing_line("PlatformEvent_v1", 2, 41, value, lambda schema_id: PARSED)
    return (json.loads(decoded.line) if decoded.line else None), decoded.kind


def test_the_wire_format_is_a_zero_byte_the_schema_id_and_the_avro_body():
    value = frame(7, record("entityChangeEvent", b"{}"), PLATFORM_EVENT_SCHEMA)
    assert value[:5] == b"\x00\x00\x00\x00\x07"
    assert split_frame(value)[0] == 7


def test_an_entity_change_lands_as_the_platform_event_with_its_payload_as_json_text():
    value = frame(
        7, record("entityChangeEvent", json.dumps(EVENT, ensure_ascii=False).encode()), PLATFORM_EVENT_SCHEMA
    )
    landed, kind = line(value)
    assert kind == "entity_change"
    assert landed["name"] == "entityChangeEvent" and landed["header"] == {"timestampMillis": 1649953100653}
    assert json.loads(landed["payload"]["value"]) == EVENT
    assert landed["payload"]["contentType"] == "application/json"


@pytest.mark.parametrize(
    ("value", "kind", "reason"),
    [
        (None, "tombstone", None),
        (b'{"name": "entityChangeEvent"}', "undecodable", "not Confluent wire format"),
        (b"\x00\x00\x00\x00\x07\xff", "undecodable", "Avro body does not match schema 7"),
    ],
    ids=["tombstone", "json-not-avro", "truncated-avro"],
)
def test_what_is_no_entity_change_is_skipped_or_landed_for_the_quarantine(value, kind, reason):
    landed, got = line(value)
    assert got == kind
    if reason is None:
        assert landed is None
    else:
        problem = landed["undecodable_platform_event"]
        assert problem["reason"].startswith(reason)
        assert (problem["topic"], problem["partition"], problem["offset"]) == ("PlatformEvent_v1", 2, 41)


def test_other_platform_events_are_counted_by_name_and_not_landed():
    value = frame(7, record("notificationRequestEvent", b"{}"), PLATFORM_EVENT_SCHEMA)
    assert line(value) == (None, "notificationRequestEvent")


def test_kafka_client_settings_pass_through_the_configuration(tmp_path):
    conf = tmp_path / "kafka.yaml"
    conf.write_text("collectors:\n  datahub_kafka:\n    consumer: {security.protocol: SASL_SSL}\n")
    section = load_config(str(conf)).section("collectors")["datahub_kafka"]
    settings = KafkaSettings.from_section(section)
    assert settings.consumer == {"security.protocol": "SASL_SSL"}
    assert (settings.topic, settings.group_id) == ("PlatformEvent_v1", "catalog-lakehouse")
