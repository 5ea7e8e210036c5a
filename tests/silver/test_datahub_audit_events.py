"""silver.datahub_audit_events on the spec's samples (datahub-audit-events-search-api-v1.md)."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import functions as F

from silver import datahub_audit_events
from tests.support.tables import bronze_frame

SUITE = Path(__file__).resolve().parents[2] / "expectations" / "silver.datahub_audit_events.json"
COMMON = {
    "timestamp": 1649953100653,
    "actorUrn": "urn:li:corpuser:jdoe",
    "sourceIP": "192.168.1.1",
    "eventSource": "GRAPHQL",
    "userAgent": "Mozilla/5.0...",
    "telemetryTraceId": "abc123",
}
ENTITY_EVENT = {
    "eventType": "EntityEvent",
    **COMMON,
    "entityUrn": "urn:li:dataset:abc",
    "entityType": "dataset",
    "aspectName": "ownership",
}
LOGIN_EVENT = {"eventType": "LogInEvent", **COMMON, "loginSource": "PASSWORD_LOGIN"}
TOKEN_EVENT = {**ENTITY_EVENT, "eventType": "CreateAccessTokenEvent", "rawUsageEvent": {"type": "x", "n": 1}}


def audit_bronze(spark, records: list):
    """Bronze audit rows as the bronze job writes them: with the search page's columns."""
    return bronze_frame(spark, records).select(
        "*", F.lit("scroll-2").alias("next_scroll_id"), F.lit(3).cast("long").alias("page_total")
    )


def test_spec_samples_come_out_typed(spark):
    output = datahub_audit_events.transform(audit_bronze(spark, [ENTITY_EVENT, LOGIN_EVENT, TOKEN_EVENT]))
    entity, login, token = output.orderBy("record_index").collect()
    assert [r["_errors"] for r in (entity, login, token)] == [[], [], []]
    assert (entity["event_type"], entity["aspect_name"], entity["entity_urn"], entity["entity_type"]) == (
        "EntityEvent",
        "ownership",
        "urn:li:dataset:abc",
        "dataset",
    )
    assert (entity["actor"], entity["source_ip"], entity["event_source"]) == (
        "urn:li:corpuser:jdoe",
        "192.168.1.1",
        "GRAPHQL",
    )
    assert (entity["user_agent"], entity["telemetry_trace_id"]) == ("Mozilla/5.0...", "abc123")
    assert str(entity["event_time"]) == "2022-04-14 16:18:20.653000"
    assert str(entity["event_date"]) == "2022-04-14"
    assert (login["login_source"], login["entity_urn"]) == ("PASSWORD_LOGIN", None)
    assert json.loads(token["raw_usage_event"]) == {"type": "x", "n": 1}
    assert (token["next_scroll_id"], token["page_total"]) == ("scroll-2", 3)
    assert len({entity["event_id"], login["event_id"], token["event_id"]}) == 3


def test_event_id_is_stable_and_ignores_field_order(spark):
    reordered = dict(reversed(list(ENTITY_EVENT.items())))
    frame = audit_bronze(spark, [ENTITY_EVENT, reordered])
    ids = [r["event_id"] for r in datahub_audit_events.transform(frame).orderBy("record_index").collect()]
    again = [r["event_id"] for r in datahub_audit_events.transform(frame).orderBy("record_index").collect()]
    assert ids[0] == ids[1] and ids == again


def test_bad_timestamp_and_corrupt_rows_are_kept_with_errors(spark):
    records = [{**LOGIN_EVENT, "timestamp": "yesterday"}, "{not json", LOGIN_EVENT]
    rows = datahub_audit_events.transform(audit_bronze(spark, records)).orderBy("record_index").collect()
    assert len(rows) == 3
    assert rows[0]["_errors"] == ["cast:timestamp"] and rows[0]["event_time"] is None
    assert rows[1]["_errors"] == ["bronze_corrupt:malformed JSON"] and rows[1]["event_id"]
    assert rows[2]["_errors"] == []


def test_job_spec():
    spec = datahub_audit_events.SPEC
    assert (spec.table, spec.source, spec.reconciles) == (
        "silver.datahub_audit_events",
        "bronze.datahub_audit_events",
        "datahub_audit",
    )


def test_suite_is_well_formed_and_names_real_columns(spark):
    suite = json.loads(SUITE.read_text(encoding="utf-8"))
    columns = set(datahub_audit_events.transform(audit_bronze(spark, [LOGIN_EVENT])).columns)
    names = [e["meta"]["name"] for e in suite["expectations"]]
    assert suite["name"] == suite["meta"]["table"] == "silver.datahub_audit_events"
    assert len(names) == len(set(names))
    for expectation in suite["expectations"]:
        assert expectation["meta"]["severity"] in ("warn", "drop", "fail")
        assert expectation["kwargs"]["column"] in columns
    event_types = next(e for e in suite["expectations"] if e["meta"]["name"] == "event_type_known")
    assert {"EntityEvent", "LogInEvent", "FailedLogInEvent", "UpdateAspectEvent"} <= set(
        event_types["kwargs"]["value_set"]
    )
