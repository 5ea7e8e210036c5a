"""DataHub entity change events give the same silver rows bare, in a DataHub Actions envelope, or
as a Kafka PlatformEvent (fixtures in tests/fixtures/envelopes, built from the bundled samples)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from silver import datahub_action_requests, datahub_entity_changes
from tests.support.tables import RUN_SPECIFIC, bronze_frame, table_differences

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "envelopes"
LINEAGE = RUN_SPECIFIC | {"raw"}  # the delivered record differs by form; the typed event must not


def fixture_lines(name: str) -> list[str]:
    return (FIXTURES / name).read_text(encoding="utf-8").splitlines()


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
