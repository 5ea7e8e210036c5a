"""The bare Entity Change Event inside each way DataHub delivers one.

- bare: the EntityChangeEvent_v1 object itself (DataHub's webhook-style sinks, our samples);
- DataHub Actions: an event envelope `{"event_type": "EntityChangeEvent_v1", "event": {...},
  "meta": {...}}` (what an Actions pipeline's action receives and forwards);
- Kafka: a `PlatformEvent_v1` record `{"header": {"timestampMillis": ...}, "name":
  "entityChangeEvent", "payload": {"value": "<the event as JSON text>", "contentType":
  "application/json"}}`.

Bronze keeps the record as delivered (`raw`, lossless); silver types the bare event found here,
so the three forms give the same silver row (the same `event_id`). A record that is none of
them is typed as it is and fails the same checks a malformed bare event fails.

The same feeds carry other events: an Actions pipeline also delivers `MetadataChangeLogEvent_v1`
(and other types) envelopes, and `PlatformEvent_v1` carries platform events of other names.
Only `EntityChangeEvent_v1` envelopes and `entityChangeEvent` platform events are entity
changes; `other_event_type_text` names the type of the others, which go to
`silver.datahub_ignored_events` instead of being typed (and quarantined) as broken changes.
"""

from __future__ import annotations

from pipelines.runtime.sql_expressions import literal

ACTIONS_MARKER = '"event_type"'
PLATFORM_EVENT_MARKER = '"payload"'
ENTITY_CHANGE_ENVELOPE = "EntityChangeEvent_v1"  # an Actions envelope's `event_type`
ENTITY_CHANGE_PLATFORM_EVENT = "entityChangeEvent"  # a PlatformEvent's `name`


def _maybe_wrapped(raw: str) -> str:
    """SQL: whether `raw` may be an envelope. Records mentioning neither envelope's member name
    (nor any `\\u` escape, which could spell one) skip the JSON look-ups."""
    return " OR ".join(
        f"instr({raw}, {literal(marker)}) > 0" for marker in (ACTIONS_MARKER, PLATFORM_EVENT_MARKER, "\\u")
    )


def other_event_type_text(raw: str) -> str:
    """SQL text: the delivered type of a record that wraps something other than an entity change
    event (an Actions envelope's `event_type`, a PlatformEvent's `name`), else null."""
    event_type = f"get_json_object({raw}, '$.event_type')"
    platform_name = f"get_json_object({raw}, '$.name')"
    return (
        f"CASE WHEN NOT ({_maybe_wrapped(raw)}) THEN NULL "
        f"WHEN {event_type} IS NOT NULL THEN nullif({event_type}, {literal(ENTITY_CHANGE_ENVELOPE)}) "
        f"WHEN get_json_object({raw}, '$.payload') IS NOT NULL AND {platform_name} IS NOT NULL "
        f"THEN nullif({platform_name}, {literal(ENTITY_CHANGE_PLATFORM_EVENT)}) END"
    )


def bare_event_text(raw: str) -> str:
    """SQL text: the bare event's JSON text of the record `raw` (SQL text of a string column).

    Records that cannot be envelopes skip the JSON look-ups: the usual bare feed pays three
    substring searches.
    """
    maybe_wrapped = _maybe_wrapped(raw)
    actions_event = f"get_json_object({raw}, '$.event')"
    platform_value = f"get_json_object({raw}, '$.payload.value')"
    return (
        f"CASE WHEN NOT ({maybe_wrapped}) THEN {raw} "
        f"WHEN get_json_object({raw}, '$.event_type') IS NOT NULL AND ltrim({actions_event}) LIKE '{{%' "
        f"THEN {actions_event} "
        f"WHEN ltrim({platform_value}) LIKE '{{%' THEN {platform_value} "
        f"ELSE {raw} END"
    )
