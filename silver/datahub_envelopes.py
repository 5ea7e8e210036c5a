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
"""

from __future__ import annotations

from pipelines.runtime.sql_expressions import literal

ACTIONS_MARKER = '"event_type"'
PLATFORM_EVENT_MARKER = '"payload"'


def bare_event_text(raw: str) -> str:
    """SQL text: the bare event's JSON text of the record `raw` (SQL text of a string column).

    Records mentioning neither envelope's member name (nor any `\\u` escape, which could spell
    one) skip the JSON look-ups: the usual bare feed pays two substring searches.
    """
    maybe_wrapped = " OR ".join(
        f"instr({raw}, {literal(marker)}) > 0" for marker in (ACTIONS_MARKER, PLATFORM_EVENT_MARKER, "\\u")
    )
    actions_event = f"get_json_object({raw}, '$.event')"
    platform_value = f"get_json_object({raw}, '$.payload.value')"
    return (
        f"CASE WHEN NOT ({maybe_wrapped}) THEN {raw} "
        f"WHEN get_json_object({raw}, '$.event_type') IS NOT NULL AND ltrim({actions_event}) LIKE '{{%' "
        f"THEN {actions_event} "
        f"WHEN ltrim({platform_value}) LIKE '{{%' THEN {platform_value} "
        f"ELSE {raw} END"
    )
