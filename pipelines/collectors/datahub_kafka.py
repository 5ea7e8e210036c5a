"""`lakehouse collect datahub-kafka`: DataHub's platform events from Kafka into `<landing>/datahub_ece/`.

DataHub publishes entity change events on `PlatformEvent_v1` as Confluent-framed Avro
(`platform_event`). This consumer (confluent-kafka, in a consumer group) decodes each record
with its writer schema, fetched by id from the schema registry (`GET /schemas/ids/{id}`, cached;
without a registry, DataHub's own PlatformEvent schema), and keeps the `entityChangeEvent`
ones. Records are landed in batches (`batch_max_events` or `batch_max_seconds`) as JSON Lines
files, durably (`landing_writer`: fsync, rename, fsync the folder), and only then are the
batch's offsets committed. A collector killed at any point therefore resumes from the last
committed offsets: no event is lost, and a batch landed but not committed is landed again,
a duplicate that silver removes by `event_id`.

An unreachable registry is retried with backoff (`max_attempts`), then the collect stops
without committing; a schema id the registry does not know, or a value that is not a framed
PlatformEvent, lands as an undecodable record that silver quarantines. SIGTERM or Ctrl-C lands
and commits what is pending, prints what was collected and exits 0. A collect that stops is
counted in the collectors' loss log (`ops.collector_losses`, status `stopped`).
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import fastavro
import requests

from pipelines.collectors.landing_writer import BatchFileWriter
from pipelines.collectors.loss_log import LossLog
from pipelines.collectors.platform_event import PLATFORM_EVENT_SCHEMA, Undecodable, landing_line
from pipelines.runtime import faults

FAULT_AFTER_LANDING = "kafka_after_landing"  # crash tests: a batch landed, its offsets not committed


class KafkaCollectError(Exception):
    """The collect stopped; the message is one line."""


@dataclass(frozen=True)
class KafkaSettings:
    """`collectors.datahub_kafka` in conf/lakehouse.yaml (see there for meanings)."""

    topic: str = "PlatformEvent_v1"
    group_id: str = "catalog-lakehouse"
    start_from: str = "earliest"
    batch_max_events: int = 5000
    batch_max_seconds: float = 1.0
    poll_seconds: float = 0.5
    registry_timeout_seconds: float = 10.0
    max_attempts: int = 8
    backoff_seconds: float = 0.5
    max_backoff_seconds: float = 60.0
    consumer: dict = field(default_factory=dict)

    @classmethod
    def from_section(cls, section: dict) -> KafkaSettings:
        return cls(**{name: section[name] for name in cls.__dataclass_fields__ if name in section})


@dataclass
class KafkaSummary:
    records: int = 0
    entity_changes: int = 0
    undecodable: int = 0
    files: int = 0
    skipped: Counter = field(default_factory=Counter)  # other platform events by name, tombstones

    def line(self) -> str:
        skipped = ",".join(f"{name}:{n}" for name, n in sorted(self.skipped.items())) or "-"
        return (
            f"collected  records={self.records}  entity_changes={self.entity_changes}  "
            f"undecodable={self.undecodable}  skipped={skipped}  files={self.files}"
        )


class SchemaRegistry:
    """Writer schemas by id from a Confluent-compatible registry, parsed and cached."""

    def __init__(self, url: str | None, settings: KafkaSettings, report: Callable[[str], object]) -> None:
        self.url = url.rstrip("/") if url else None
        self.settings = settings
        self.report = report
        self.session = requests.Session()
        self._schemas: dict[int, dict] = {}
        self._unknown: set[int] = set()

    def schema(self, schema_id: int) -> dict:
        if schema_id in self._unknown:
            raise Undecodable(f"schema id {schema_id} is unknown to the registry")
        if schema_id not in self._schemas:
            raw = PLATFORM_EVENT_SCHEMA if self.url is None else self._fetch(schema_id)
            self._schemas[schema_id] = fastavro.parse_schema(raw)
        return self._schemas[schema_id]

    def _fetch(self, schema_id: int) -> dict:
        url = f"{self.url}/schemas/ids/{schema_id}"
        last = ""
        for attempt in range(1, self.settings.max_attempts + 1):
            try:
                response = self.session.get(url, timeout=self.settings.registry_timeout_seconds)
            except requests.RequestException as exc:
                last = f"{type(exc).__name__} reaching {url}"
            else:
                if response.status_code == 200:
                    try:
                        return json.loads(response.json()["schema"])
                    except (ValueError, KeyError, TypeError):
                        raise KafkaCollectError(
                            f"the registry's answer for schema {schema_id} is no schema"
                        ) from None
                if response.status_code == 404:
                    self._unknown.add(schema_id)
                    raise Undecodable(f"schema id {schema_id} is unknown to the registry")
                last = f"{response.status_code} {response.reason} from {url}"
            if attempt < self.settings.max_attempts:
                wait = min(
                    self.settings.max_backoff_seconds, self.settings.backoff_seconds * 2 ** (attempt - 1)
                )
                self.report(f"schema registry: retry {attempt} in {wait:.1f}s after {last}")
                time.sleep(wait * (0.5 + random.random() / 2))
        raise KafkaCollectError(
            f"schema registry gave up after {self.settings.max_attempts} attempts, last: {last}"
        )

    def close(self) -> None:
        self.session.close()


class DataHubKafkaCollector:
    """`run(stop)` consumes until `stop(summary)` says so, landing and committing in batches."""

    def __init__(
        self,
        bootstrap_servers: str,
        landing: Path,
        folder_name: str,
        settings: KafkaSettings,
        schema_registry: str | None,
        report: Callable[[str], object],
    ) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.folder = landing / folder_name
        self.settings = settings
        self.registry = SchemaRegistry(schema_registry, settings, report)
        self.report = report
        self.losses = LossLog(landing, "collect-datahub-kafka")
        self.summary = KafkaSummary()
        self._lines: list[bytes] = []
        self._offsets: dict[tuple[str, int], int] = {}
        self._batch_started: float | None = None

    def _consumer(self):
        from confluent_kafka import Consumer

        config = {
            "bootstrap.servers": self.bootstrap_servers,
            "group.id": self.settings.group_id,
            "enable.auto.commit": False,
            "auto.offset.reset": self.settings.start_from,
            **self.settings.consumer,
        }
        return Consumer(config)

    def run(self, stop: Callable[[KafkaSummary], bool]) -> KafkaSummary:
        """Consume until `stop(summary)`; a stop on an error is counted in the loss log, then raised."""
        try:
            return self._run(stop)
        except KafkaCollectError as exc:
            self.losses.record("datahub_ece", "stopped", str(exc).splitlines()[0])
            raise
        finally:
            self.losses.flush()

    def _run(self, stop: Callable[[KafkaSummary], bool]) -> KafkaSummary:
        from confluent_kafka import KafkaException

        self.folder.mkdir(parents=True, exist_ok=True)
        writer = BatchFileWriter(self.folder, prefix="kafka")
        try:
            consumer = self._consumer()
        except KafkaException as exc:
            raise KafkaCollectError(f"cannot create the consumer: {exc}") from None
        try:
            consumer.subscribe([self.settings.topic], on_revoke=lambda c, partitions: self._flush(c, writer))
            while not stop(self.summary):
                room = max(1, self.settings.batch_max_events - len(self._lines))
                for message in consumer.consume(num_messages=room, timeout=self.settings.poll_seconds):
                    self._take(message)
                if self._due():
                    self._flush(consumer, writer)
            self._flush(consumer, writer)
        except KafkaException as exc:
            raise KafkaCollectError(f"Kafka: {exc}") from None
        finally:
            consumer.close()
            self.registry.close()
        return self.summary

    def _take(self, message) -> None:
        error = message.error()
        if error is not None:
            if error.fatal():
                raise KafkaCollectError(f"Kafka: {error.str()}")
            self.report(f"Kafka: {error.str()}")
            return
        topic, partition, offset = message.topic(), message.partition(), message.offset()
        decoded = landing_line(topic, partition, offset, message.value(), self.registry.schema)
        self.summary.records += 1
        if decoded.kind == "entity_change":
            self.summary.entity_changes += 1
        elif decoded.kind == "undecodable":
            self.summary.undecodable += 1
        else:
            self.summary.skipped[decoded.kind] += 1
        if decoded.line is not None:
            self._lines.append(decoded.line)
        self._offsets[(topic, partition)] = offset + 1
        if self._batch_started is None:
            self._batch_started = time.monotonic()

    def _due(self) -> bool:
        if self._batch_started is None:
            return False
        full = len(self._lines) >= self.settings.batch_max_events
        return full or time.monotonic() - self._batch_started >= self.settings.batch_max_seconds

    def _flush(self, consumer, writer: BatchFileWriter) -> None:
        """Land the pending lines durably, then commit the offsets after them."""
        from confluent_kafka import TopicPartition

        if self._lines:
            self.summary.files += len(writer.write([(line, True) for line in self._lines]))
            faults.checkpoint(FAULT_AFTER_LANDING)
        if self._offsets:
            positions = [TopicPartition(t, p, o) for (t, p), o in sorted(self._offsets.items())]
            consumer.commit(offsets=positions, asynchronous=False)
        self._lines, self._offsets, self._batch_started = [], {}, None
