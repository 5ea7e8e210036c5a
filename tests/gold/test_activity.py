"""Actor activity per day and failed logins with salted IP hashes."""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest

from gold import actor_activity_daily, failed_logins
from tests.support.gold import assert_incremental_equals_full, build_accumulated, build_all, rows, source

AUDIT = "silver.datahub_audit_events"
DH = "silver.datahub_entity_changes"
OM = "silver.openmetadata_change_events"
DW = "silver.dataworks_events"
ANN = "urn:li:corpuser:ann"


def batch(spark, audit=(), changes=(), om=(), dataworks=(), requests=()):
    return {
        AUDIT: source(spark, AUDIT, *audit),
        DH: source(spark, DH, *changes),
        "silver.datahub_action_requests": source(spark, "silver.datahub_action_requests", *requests),
        OM: source(spark, OM, *om),
        DW: source(spark, DW, *dataworks),
    }


def change(event_id, time, category, actor=ANN, operation="ADD"):
    """A DataHub entity change row (silver columns the activity table reads)."""
    return dict(event_id=event_id, event_time=time, actor=actor, category=category, operation=operation)


@pytest.mark.parametrize("check", ["built", pytest.param("incremental", marks=pytest.mark.slow)])
def test_activity_counts_per_day_actor_source_and_type(spark, check):
    first = batch(
        spark,
        audit=[dict(event_id="a1", event_time="09:00", event_type="CreateAccessTokenEvent", actor=ANN)],
        changes=[
            change("c1", "10:00", "OWNER"),
            change("c2", "11:00", "OWNERSHIP"),
        ],
        om=[dict(event_id="o1", event_time="10:00", actor="bob", event_type="entityCreated")],
    )
    second = batch(
        spark,
        changes=[
            change("c3", "12:00", "OWNERSHIP"),
            change("c1", "10:00", "OWNER"),  # duplicate
            change("c4", "2026-01-02 08:00", "TAG"),
        ],
        dataworks=[dict(event_id="w1", event_time="10:00", operator="19735", event_code="commit-file")],
        requests=[dict(event_id="r1", event_time="10:00", actor="bob", operation="CREATE")],
    )
    if check == "incremental":
        return assert_incremental_equals_full(actor_activity_daily.SPEC, first, second)
    full = build_all(
        actor_activity_daily.SPEC, {name: first[name].unionByName(second[name]) for name in first}
    )
    assert rows(full, "event_date", "actor", "source", "event_type", "events") == [
        (dt.date(2026, 1, 1), "19735", "dataworks", "commit-file", 1),
        (dt.date(2026, 1, 1), "bob", "datahub", "PROPOSAL_CREATE", 1),
        (dt.date(2026, 1, 1), "bob", "openmetadata", "entityCreated", 1),
        (dt.date(2026, 1, 1), ANN, "datahub", "CreateAccessTokenEvent", 1),
        (dt.date(2026, 1, 1), ANN, "datahub", "OWNERSHIP_ADD", 3),
        (dt.date(2026, 1, 2), ANN, "datahub", "TAG_ADD", 1),
    ]


@pytest.mark.slow  # builds three times
def test_adding_a_batch_s_counts_equals_counting_both_batches(spark):
    """Silver delivers each event once, so a later batch's counts add to the rows it touches."""
    first = batch(
        spark,
        audit=[dict(event_id="a1", event_time="09:00", event_type="LogInEvent", actor=ANN)],
        changes=[
            change("c1", "10:00", "OWNER"),
            change("c2", "2026-01-03 10:00", "TAG", actor=None),
        ],
        dataworks=[dict(event_id="w1", event_time="10:00", operator="19735", event_code="commit-file")],
    )
    second = batch(
        spark,
        audit=[dict(event_id="a2", event_time="23:59", event_type="LogInEvent", actor=ANN)],
        changes=[
            change("c3", "08:00", "OWNERSHIP"),
            change("c4", "2026-01-03 11:00", "TAG", actor=None),
            change("c5", "2026-01-02 08:00", "TAG"),
        ],
        # the same event id as an entity change, in another silver table: another event
        om=[dict(event_id="c1", event_time="10:00", actor=ANN, event_type="entityCreated")],
    )
    full = build_all(
        actor_activity_daily.SPEC, {name: first[name].unionByName(second[name]) for name in first}
    )
    accumulated = build_accumulated(actor_activity_daily.SPEC, first, second)
    columns = full.columns
    assert rows(accumulated, *columns) == rows(full, *columns)
    assert rows(accumulated, "event_date", "actor", "event_type", "events") == [
        (dt.date(2026, 1, 1), "19735", "commit-file", 1),
        (dt.date(2026, 1, 1), ANN, "LogInEvent", 2),
        (dt.date(2026, 1, 1), ANN, "OWNERSHIP_ADD", 2),
        (dt.date(2026, 1, 1), ANN, "entityCreated", 1),
        (dt.date(2026, 1, 2), ANN, "TAG_ADD", 1),
        (dt.date(2026, 1, 3), None, "TAG_ADD", 2),
    ]


def test_failed_logins_hash_the_ip_with_the_salt(spark):
    audit = source(
        spark,
        AUDIT,
        dict(
            event_id="f1", event_time="09:00", event_type="FailedLogInEvent", actor=ANN, source_ip="10.0.0.1"
        ),
        dict(
            event_id="f2", event_time="09:05", event_type="FailedLogInEvent", actor=ANN, source_ip="10.0.0.1"
        ),
        dict(
            event_id="f3", event_time="09:10", event_type="FailedLogInEvent", actor=ANN, source_ip="10.0.0.2"
        ),
        dict(event_id="l1", event_time="09:15", event_type="LogInEvent", actor=ANN, source_ip="10.0.0.1"),
    )
    built = failed_logins.build_failed_logins(failed_logins.relevant(AUDIT, audit), salt="pepper")
    expected = hashlib.sha256(b"pepper10.0.0.1").hexdigest()
    assert rows(
        built.filter(f"source_ip_hash = '{expected}'"), "actor", "failed_logins", "first_failed_at"
    ) == [(ANN, 2, "09:00")]
    assert built.count() == 2
    assert "10.0.0.1" not in str(rows(built, *built.columns))


def test_failed_logins_job_reads_the_salt_from_the_environment(spark, monkeypatch):
    monkeypatch.setenv("TEST_GOLD_SALT", "s3")
    audit = source(
        spark,
        AUDIT,
        dict(
            event_id="f1", event_time="09:00", event_type="FailedLogInEvent", actor=ANN, source_ip="10.0.0.1"
        ),
    )
    built = build_all(failed_logins.spec_for("TEST_GOLD_SALT"), {AUDIT: audit})
    assert rows(built, "source_ip_hash") == [(hashlib.sha256(b"s310.0.0.1").hexdigest(),)]


def test_raw_ip_only_when_configured_otherwise(spark, config):
    audit = source(
        spark,
        AUDIT,
        dict(
            event_id="f1", event_time="09:00", event_type="FailedLogInEvent", actor=ANN, source_ip="10.0.0.9"
        ),
    )
    hidden = build_all(failed_logins.configured_spec(config), {AUDIT: audit})
    assert rows(hidden, "source_ip") == [(None,)]
    opened = config.with_overrides()
    opened.raw["privacy"]["hash_ip_in_gold"] = False
    shown = build_all(failed_logins.configured_spec(opened), {AUDIT: audit})
    assert rows(shown, "source_ip") == [("10.0.0.9",)]
