"""Gold semantics read from the event catalogs: each rule as the catalog states it, on small fixtures."""

from __future__ import annotations

import pytest

from gold import ownership_timeline
from tests.gold import assert_extended_equals_full, assert_incremental_equals_full, build_all, rows, source

DH = "silver.datahub_entity_changes"
OM_FIELDS = "silver.openmetadata_field_changes"
OM_EVENTS = "silver.openmetadata_change_events"
DS = "urn:li:dataset:(urn:li:dataPlatform:hive,shop.orders,PROD)"
ANN = "urn:li:corpuser:ann"


def dh(event_id, time, category, operation, entity=DS, actor="urn:li:corpuser:admin", **params):
    return dict(
        event_id=event_id,
        event_time=time,
        entity_urn=entity,
        category=category,
        operation=operation,
        actor=actor,
        **params,
    )


@pytest.fixture
def sources(spark):
    def make(datahub=(), fields=(), events=()):
        return {
            DH: source(spark, DH, *datahub),
            OM_FIELDS: source(spark, OM_FIELDS, *fields),
            OM_EVENTS: source(spark, OM_EVENTS, *events),
        }

    return make


# "OWNER/OWNERSHIP ADD/REMOVE/MODIFY: ownerUrn, ownerType ...; MODIFY means the ownership type
# changed (modifier = the type)."
def test_ownership_modify_closes_the_previous_type_and_opens_the_new_one(sources):
    batch = sources(
        datahub=[
            dh("o1", "10:00", "OWNERSHIP", "ADD", ownerUrn=ANN, ownerType="TECHNICAL_OWNER"),
            dh("o2", "11:00", "OWNERSHIP", "MODIFY", modifier="BUSINESS_OWNER", ownerUrn=ANN),
            dh("o3", "12:00", "OWNER", "MODIFY", ownerUrn=ANN, ownerType="DATA_STEWARD", actor="bob"),
        ]
    )
    built = build_all(ownership_timeline.JOB, batch)
    assert rows(built, "owner_urn", "owner_type", "valid_from", "valid_to", "removed_by", "end_reason") == [
        (ANN, "BUSINESS_OWNER", "11:00", "12:00", "bob", "REMOVED"),
        (ANN, "DATA_STEWARD", "12:00", None, None, None),
        (ANN, "TECHNICAL_OWNER", "10:00", "11:00", "urn:li:corpuser:admin", "REMOVED"),
    ]


def test_ownership_modify_late_or_later_equals_a_full_rebuild(sources):
    first = sources(datahub=[dh("o1", "10:00", "OWNERSHIP", "ADD", ownerUrn=ANN, ownerType="TECHNICAL_OWNER")])
    later = sources(datahub=[dh("o2", "11:00", "OWNERSHIP", "MODIFY", ownerUrn=ANN, ownerType="BUSINESS_OWNER")])
    assert_extended_equals_full(ownership_timeline.JOB, first, later)
    late = sources(datahub=[dh("o0", "09:00", "OWNERSHIP", "MODIFY", ownerUrn=ANN, ownerType="BUSINESS_OWNER")])
    assert_incremental_equals_full(ownership_timeline.JOB, first, late)
