"""Gold semantics read from the event catalogs: each rule as the catalog states it, on small fixtures."""

from __future__ import annotations

from functools import partial

import pytest

from gold import ownership_timeline
from tests.support.gold import (
    assert_extended_equals_full,
    assert_incremental_equals_full,
    build_all,
    entity_change,
    rows,
    source,
)

DH = "silver.datahub_entity_changes"
OM_FIELDS = "silver.openmetadata_field_changes"
OM_EVENTS = "silver.openmetadata_change_events"
DS = "urn:li:dataset:(urn:li:dataPlatform:hive,shop.orders,PROD)"
ANN = "urn:li:corpuser:ann"


dh = partial(entity_change, entity=DS, actor="urn:li:corpuser:admin")


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
    built = build_all(ownership_timeline.SPEC, batch)
    assert rows(built, "owner_urn", "owner_type", "valid_from", "valid_to", "removed_by", "end_reason") == [
        (ANN, "BUSINESS_OWNER", "11:00", "12:00", "bob", "REMOVED"),
        (ANN, "DATA_STEWARD", "12:00", None, None, None),
        (ANN, "TECHNICAL_OWNER", "10:00", "11:00", "urn:li:corpuser:admin", "REMOVED"),
    ]


@pytest.mark.slow  # builds five times
def test_ownership_modify_late_or_later_equals_a_full_rebuild(sources):
    first = sources(
        datahub=[dh("o1", "10:00", "OWNERSHIP", "ADD", ownerUrn=ANN, ownerType="TECHNICAL_OWNER")]
    )
    later = sources(
        datahub=[dh("o2", "11:00", "OWNERSHIP", "MODIFY", ownerUrn=ANN, ownerType="BUSINESS_OWNER")]
    )
    assert_extended_equals_full(ownership_timeline.SPEC, first, later)
    late = sources(
        datahub=[dh("o0", "09:00", "OWNERSHIP", "MODIFY", ownerUrn=ANN, ownerType="BUSINESS_OWNER")]
    )
    assert_incremental_equals_full(ownership_timeline.SPEC, first, late)


TABLE = "openmetadata:table:shop.db.orders"
CREATED_ENTITY = {
    "id": "t-1",
    "name": "orders",
    "fullyQualifiedName": "shop.db.orders",
    "tags": [
        {"tagFQN": "PII.Sensitive", "source": "Classification", "labelType": "Manual", "state": "Confirmed"},
        {"tagFQN": "Sales.Revenue", "source": "Glossary", "labelType": "Manual", "state": "Confirmed"},
    ],
    "columns": [
        {
            "name": "email",
            "dataType": "VARCHAR",
            "tags": [{"tagFQN": "PII.Email", "source": "Classification"}],
        },
        {"name": "id", "dataType": "INT"},
    ],
    "owners": [{"id": "u-1", "type": "user", "name": "ann"}, {"id": "g-1", "type": "team", "name": "data"}],
    "domains": [{"id": "d-1", "type": "domain", "name": "Sales", "fullyQualifiedName": "Sales"}],
}


def om_event(event_id, time, event_type, actor="ann", **extra):
    return dict(
        event_id=event_id,
        event_time=time,
        event_type=event_type,
        entity_type="table",
        entity_fqn="shop.db.orders",
        entity_key=TABLE,
        actor=actor,
        **extra,
    )


# "entity: For eventType entityCreated, this field captures JSON coded string of the entity."
def test_entity_created_opens_its_tags_column_tags_owners_and_domains(sources):
    import json

    from gold import domain_timeline, glossary_term_timeline, tag_timeline

    batch = sources(
        events=[
            om_event("c1", "10:00", "entityCreated", entity=json.dumps(CREATED_ENTITY)),
            om_event("c2", "12:00", "entityDeleted", actor="ops"),
        ]
    )
    interval = ("entity_urn", "parent_urn", "valid_from", "valid_to", "added_by", "end_reason")
    column = "openmetadata:column:shop.db.orders.email"
    assert rows(build_all(tag_timeline.SPEC, batch), "tag_urn", *interval) == [
        ("PII.Email", column, TABLE, "10:00", "12:00", "ann", "ENTITY_DELETED"),
        ("PII.Sensitive", TABLE, None, "10:00", "12:00", "ann", "ENTITY_DELETED"),
    ]
    assert rows(build_all(glossary_term_timeline.SPEC, batch), "term_urn", "entity_urn") == [
        ("Sales.Revenue", TABLE)
    ]
    assert rows(build_all(ownership_timeline.SPEC, batch), "owner_urn", "owner_type", "valid_to") == [
        ("ann", "user", "12:00"),
        ("data", "team", "12:00"),
    ]
    assert rows(build_all(domain_timeline.SPEC, batch), "domain_urn", "entity_urn", "is_current") == [
        ("Sales", TABLE, False)
    ]


@pytest.mark.parametrize("check", ["built", pytest.param("incremental", marks=pytest.mark.slow)])
def test_openmetadata_domains_reach_the_domain_timeline(sources, check):
    from gold import domain_timeline

    def change(event_id, time, kind, old=None, new=None):
        return dict(event_id=event_id, event_time=time, entity_key=TABLE, actor="ann", change_kind=kind,
                    field_name="domains", field_base="domains", old_value=old, new_value=new)  # fmt: skip

    batch = sources(
        fields=[
            change(
                "f1", "10:00", "added", new='[{"id": "d-1", "type": "domain", "fullyQualifiedName": "Sales"}]'
            ),
            change(
                "f2", "11:00", "updated", old='[{"fullyQualifiedName": "Sales"}]', new='[{"name": "Finance"}]'
            ),
        ],
        events=[om_event("c1", "09:00", "entityCreated", entity="{}", domains=["Marketing"])],
    )
    if check == "incremental":
        later = sources(fields=[change("f3", "12:00", "deleted", old='[{"name": "Finance"}]')])
        return assert_extended_equals_full(domain_timeline.SPEC, batch, later)
    built = build_all(domain_timeline.SPEC, batch)
    assert rows(built, "source", "domain_urn", "valid_from", "valid_to") == [
        ("openmetadata", "Finance", "11:00", None),
        ("openmetadata", "Marketing", "09:00", None),
        ("openmetadata", "Sales", "10:00", "11:00"),
    ]


def test_field_changes_carry_the_entity_versions_into_change_history(spark):
    from gold import change_history

    batch = {
        OM_FIELDS: source(
            spark,
            OM_FIELDS,
            dict(
                event_id="f1",
                event_time="10:00",
                entity_key=TABLE,
                actor="ann",
                change_kind="updated",
                field_name="description",
                field_base="description",
                previous_version=0.1,
                current_version=0.2,
            ),
        )  # fmt: skip
    }
    details = build_all(change_history.SPEC, batch).select("details").first()["details"]
    assert (details["previous_version"], details["current_version"]) == ("0.1", "0.2")
