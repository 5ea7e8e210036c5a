"""DataHub's `PlatformEvent_v1` Kafka records: Confluent-framed Avro, decoded into landing lines.

A record value is Confluent's wire format: a zero magic byte, the writer schema's registry id
(4 bytes, big-endian), then the Avro binary body. The schema is DataHub's `PlatformEvent`
(`com.linkedin.pegasus2avro.mxe`, generated from its PDL): a header with `timestampMillis`,
the event's `name`, and a `GenericPayload` whose `value` is bytes holding the event as JSON
(`contentType` `application/json`). Only `entityChangeEvent` payloads are entity change events.

An entity change event lands as the PlatformEvent with `payload.value` as JSON text, the form
bronze and silver already read (`silver/datahub_envelopes.py`). A record that cannot be decoded
lands as `{"undecodable_platform_event": {topic, partition, offset, reason, value_base64}}`:
silver quarantines it with its raw text, so nothing read from the topic is lost unseen.
"""

from __future__ import annotations

import base64
import io
import json
import struct
from collections.abc import Callable
from dataclasses import dataclass

import fastavro

MAGIC_BYTE = 0
ENTITY_CHANGE_EVENT = "entityChangeEvent"

# DataHub's PlatformEvent Avro schema (metadata-models: PlatformEvent, PlatformEventHeader,
# GenericPayload), as its registry serves it; used when no registry is given.
PLATFORM_EVENT_SCHEMA: dict = {
    "type": "record",
    "name": "PlatformEvent",
    "namespace": "com.linkedin.pegasus2avro.mxe",
    "doc": "A DataHub Platform Event.",
    "fields": [
        {
            "name": "header",
            "doc": "Header information stored with the event.",
            "type": {
                "type": "record",
                "name": "PlatformEventHeader",
                "doc": "A header included with each DataHub platform event.",
                "fields": [
                    {
                        "name": "timestampMillis",
                        "type": "long",
                        "doc": "The event timestamp field as epoch at UTC in milli seconds.",
                    }
                ],
            },
        },
        {"name": "name", "type": "string", "doc": "The name of the event, e.g. the type of event."},
        {
            "name": "payload",
            "doc": "The event payload.",
            "type": {
                "type": "record",
                "name": "GenericPayload",
                "doc": "Generic payload record structure for serializing a Platform Event.",
                "fields": [
                    {"name": "value", "type": "bytes", "doc": "The value of the event, serialized as bytes."},
                    {"name": "contentType", "type": "string", "doc": "The content type (application/json)."},
                ],
            },
        },
    ],
}


class Undecodable(ValueError):
    """A record value that is no Confluent-framed PlatformEvent; the message says why."""


@dataclass(frozen=True)
class Decoded:
    """What one record becomes: a landing line (None: nothing to land) and what kind it was."""

    line: bytes | None
    kind: str  # "entity_change", "undecodable", "tombstone" or the name of another platform event


def split_frame(value: bytes) -> tuple[int, bytes]:
    """(schema id, Avro body) of a Confluent-framed value."""
    if len(value) < 5 or value[0] != MAGIC_BYTE:
        raise Undecodable("not Confluent wire format (no zero magic byte and schema id)")
    return struct.unpack(">I", value[1:5])[0], value[5:]


def frame(schema_id: int, record: dict, schema: dict) -> bytes:
    """`record` in Confluent's wire format under `schema` (registered as `schema_id`)."""
    body = io.BytesIO()
    fastavro.schemaless_writer(body, fastavro.parse_schema(schema), record)
    return bytes([MAGIC_BYTE]) + struct.pack(">I", schema_id) + body.getvalue()


def decode(value: bytes | None, writer_schema: Callable[[int], dict]) -> dict:
    """The PlatformEvent record of a framed value; `writer_schema(id)` gives the parsed schema."""
    schema_id, body = split_frame(value or b"")
    schema = writer_schema(schema_id)
    try:
        record = fastavro.schemaless_reader(io.BytesIO(body), schema, None)
    except (EOFError, ValueError, TypeError, IndexError, UnicodeDecodeError, struct.error) as exc:
        raise Undecodable(f"Avro body does not match schema {schema_id}: {type(exc).__name__}") from None
    if not isinstance(record, dict) or not isinstance(record.get("payload"), dict):
        raise Undecodable(f"schema {schema_id} is not a PlatformEvent (no payload record)")
    return record


def undecodable_line(topic: str, partition: int, offset: int, reason: str, value: bytes | None) -> bytes:
    problem = {
        "topic": topic,
        "partition": partition,
        "offset": offset,
        "reason": reason,
        "value_base64": base64.b64encode(value or b"").decode("ascii"),
    }
    return json.dumps({"undecodable_platform_event": problem}).encode("utf-8")


def landing_line(
    topic: str, partition: int, offset: int, value: bytes | None, writer_schema: Callable[[int], dict]
) -> Decoded:
    """The landing line of one `PlatformEvent_v1` record (see the module docstring)."""
    if value is None:
        return Decoded(None, "tombstone")
    try:
        record = decode(value, writer_schema)
    except Undecodable as exc:
        return Decoded(undecodable_line(topic, partition, offset, str(exc), value), "undecodable")
    name = record.get("name")
    if name != ENTITY_CHANGE_EVENT:
        return Decoded(None, str(name))
    payload = record["payload"]
    try:
        text = bytes(payload.get("value") or b"").decode("utf-8")
    except UnicodeDecodeError:
        reason = "payload.value is not UTF-8 text"
        return Decoded(undecodable_line(topic, partition, offset, reason, value), "undecodable")
    event = {
        "header": record.get("header"),
        "name": name,
        "payload": {"value": text, "contentType": payload.get("contentType")},
    }
    return Decoded(
        json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), "entity_change"
    )
