"""`lakehouse collect datahub-kafka` against a real Kafka broker on loopback (KRaft, started by the
tests) carrying DataHub's `PlatformEvent_v1` records exactly as DataHub writes them: Avro in
Confluent's wire format, the schema served by a schema registry stand-in, the entity change
event as JSON bytes in `payload.value`. Every test here starts or uses the broker's JVM: slow."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from pipelines.collectors.datahub_kafka import DataHubKafkaCollector, KafkaSettings
from pipelines.collectors.platform_event import PLATFORM_EVENT_SCHEMA, frame
from pipelines.orchestration.runner import run_pipeline
from pipelines.store import open_store
from tests.support.engines import with_engine
from tests.support.receiver import landed_files
from tests.support.schema_registry import StandInSchemaRegistry
from tests.support.tables import reconciliation

pytestmark = pytest.mark.slow
LAKEHOUSE = str(Path(sys.executable).with_name("lakehouse"))
T0_MS = 1_760_000_000_000
TOPICS = itertools.count()


def entity_change(n: int) -> dict:
    """The n-th distinct entity change event (its own dataset, tag and time)."""
    return {
        "entityUrn": f"urn:li:dataset:(urn:li:dataPlatform:hive,db.表_{n},PROD)",
        "entityType": "dataset",
        "category": "TAG",
        "operation": "ADD",
        "modifier": f"urn:li:tag:tag_{n % 97}",
        "parameters": {"tagUrn": f"urn:li:tag:tag_{n % 97}"},
        "auditStamp": {"actor": "urn:li:corpuser:jdoe", "time": T0_MS + n},
        "version": 0,
    }


def platform_event(name: str, value: dict | bytes, millis: int = T0_MS) -> dict:
    """A PlatformEvent record as DataHub's producer builds it: the payload is the JSON bytes."""
    payload = value if isinstance(value, bytes) else json.dumps(value, ensure_ascii=False).encode("utf-8")
    return {
        "header": {"timestampMillis": millis},
        "name": name,
        "payload": {"value": payload, "contentType": "application/json"},
    }


def produce(broker, topic: str, values: list[bytes | None]) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 20})
    for n, value in enumerate(values):
        producer.produce(topic, key=f"key-{n}".encode(), value=value)
        if n % 1_000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0


def fresh_topic(broker, partitions: int) -> str:
    topic = f"PlatformEvent_v1_test{next(TOPICS)}"
    broker.create_topic(topic, partitions)
    return topic


def landed_records(landing: Path) -> list[dict]:
    lines = [line for p in landed_files(landing, "datahub_ece") for line in p.read_bytes().splitlines()]
    return [json.loads(line) for line in lines if line.strip()]


def landed_urns(landing: Path) -> Counter:
    return Counter(
        json.loads(r["payload"]["value"])["entityUrn"] for r in landed_records(landing) if "payload" in r
    )


def test_platform_events_are_decoded_and_only_entity_changes_are_landed(kafka_broker, tmp_path):
    topic = fresh_topic(kafka_broker, partitions=2)
    with StandInSchemaRegistry() as registry:
        schema_id = registry.register(PLATFORM_EVENT_SCHEMA)
        values = [
            frame(schema_id, platform_event("entityChangeEvent", entity_change(n)), PLATFORM_EVENT_SCHEMA)
            for n in range(3)
        ]
        values += [
            frame(
                schema_id, platform_event("notificationRequestEvent", {"message": {}}), PLATFORM_EVENT_SCHEMA
            ),
            frame(999, platform_event("entityChangeEvent", entity_change(3)), PLATFORM_EVENT_SCHEMA),
            b'{"plain": "json, not Avro"}',
            frame(
                schema_id, platform_event("entityChangeEvent", b"\xff\xfe not utf-8"), PLATFORM_EVENT_SCHEMA
            ),
            None,
        ]
        produce(kafka_broker, topic, values)
        lines: list[str] = []
        collector = DataHubKafkaCollector(
            bootstrap_servers=kafka_broker.bootstrap,
            landing=tmp_path,
            folder_name="datahub_ece",
            settings=KafkaSettings(topic=topic, group_id=topic, batch_max_seconds=0.2),
            schema_registry=registry.url,
            report=lines.append,
        )
        deadline = time.monotonic() + 60
        summary = collector.run(stop=lambda s: s.records >= len(values) or time.monotonic() > deadline)
        lookups = registry.requests
    assert (summary.records, summary.entity_changes, summary.undecodable) == (8, 3, 3)
    assert summary.skipped == Counter({"notificationRequestEvent": 1, "tombstone": 1})
    records = landed_records(tmp_path)
    changes = [r for r in records if "payload" in r]
    assert sorted(json.loads(r["payload"]["value"])["entityUrn"] for r in changes) == sorted(
        entity_change(n)["entityUrn"] for n in range(3)
    )
    assert {(r["name"], r["header"]["timestampMillis"]) for r in changes} == {("entityChangeEvent", T0_MS)}
    reasons = sorted(r["undecodable_platform_event"]["reason"] for r in records if "payload" not in r)
    assert reasons == [
        "not Confluent wire format (no zero magic byte and schema id)",
        "payload.value is not UTF-8 text",
        "schema id 999 is unknown to the registry",
    ]
    assert lookups == 2  # each schema id asked once


def _collect(broker, topic: str, landing: Path, registry: str, conf: Path, env: dict | None = None):
    return subprocess.Popen(
        [LAKEHOUSE, "collect", "datahub-kafka", "--bootstrap-servers", broker.bootstrap, "--topic", topic,
         "--schema-registry", registry, "--landing", str(landing), "--group-id", f"{topic}-group",
         "--conf", str(conf)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})},
    )  # fmt: skip


def test_ten_thousand_events_survive_a_kill_between_landing_and_commit_each_once_in_silver(
    kafka_broker, tmp_path, config, spark
):
    landing, warehouse = tmp_path / "landing", tmp_path / "warehouse"
    conf = tmp_path / "kafka.yaml"
    # the killed collector's group membership lapses after 6 s, not librdkafka's 45 s: the restarted
    # one waits that long for its partitions
    conf.write_text(
        "collectors:\n  datahub_kafka:\n    batch_max_events: 1000\n    batch_max_seconds: 0.5\n"
        "    consumer: {session.timeout.ms: 6000, heartbeat.interval.ms: 2000}\n"
    )
    topic = fresh_topic(kafka_broker, partitions=3)
    events = [entity_change(n) for n in range(10_000)]
    with StandInSchemaRegistry() as registry:
        schema_id = registry.register(PLATFORM_EVENT_SCHEMA)
        produce(
            kafka_broker,
            topic,
            [frame(schema_id, platform_event("entityChangeEvent", e), PLATFORM_EVENT_SCHEMA) for e in events],
        )
        killed = _collect(
            kafka_broker, topic, landing, registry.url, conf, {"LAKEHOUSE_FAULT": "kafka_after_landing#3"}
        )
        out, err = killed.communicate(timeout=120)
        assert killed.returncode == -signal.SIGKILL, err
        landed_before_restart = sum(landed_urns(landing).values())
        assert 0 < landed_before_restart < 10_000

        resumed = _collect(kafka_broker, topic, landing, registry.url, conf)
        deadline = time.monotonic() + 120
        while set(landed_urns(landing)) != {e["entityUrn"] for e in events} and time.monotonic() < deadline:
            time.sleep(0.2)
        resumed.send_signal(signal.SIGTERM)
        out, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    landed = landed_urns(landing)
    assert set(landed) == {e["entityUrn"] for e in events}
    duplicates = sum(landed.values()) - len(events)
    assert 0 < duplicates <= 3_000  # the killed run's last batch(es), landed but never committed
    assert "entity_changes=" in out and "undecodable=0" in out

    settings = with_engine(config.with_overrides(landing=str(landing), warehouse=str(warehouse)), "delta-rs")
    run_pipeline(settings, ("bronze", "silver"), spark=spark)
    store = open_store(spark, settings.warehouse, "delta-rs")
    silver = store.read("silver.datahub_entity_changes")
    assert silver.count() == silver.select("event_id").distinct().count() == 10_000
    assert silver.select("entity_urn").distinct().count() == 10_000
    counts = reconciliation(store)["datahub_ece"]
    assert counts["rows_in"] == 10_000 + duplicates and counts["rows_duplicate"] == duplicates
    assert counts["rows_quarantined"] == 0


def test_a_collect_that_stops_is_counted_in_the_loss_log(tmp_path):
    from pipelines.collectors.datahub_kafka import DataHubKafkaCollector, KafkaCollectError, KafkaSettings
    from tests.support.receiver import logged_losses

    collector = DataHubKafkaCollector(
        bootstrap_servers="127.0.0.1:1",
        landing=tmp_path,
        folder_name="datahub_ece",
        settings=KafkaSettings(consumer={"no.such.property": "1"}),
        schema_registry=None,
        report=lambda line: None,
    )
    with pytest.raises(KafkaCollectError, match="cannot create the consumer"):
        collector.run(stop=lambda summary: True)
    ((source, status, reason),) = logged_losses(tmp_path)
    assert (source, status) == ("datahub_ece", "stopped") and reason.startswith("cannot create the consumer")
