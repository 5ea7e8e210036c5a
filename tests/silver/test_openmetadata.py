"""silver.openmetadata_change_events and silver.openmetadata_field_changes on small ChangeEvents.

An entity is keyed by its name in every form an event comes in: with `entityFullyQualifiedName`,
or as the server stores and sends it (no FQN, `entity` as JSON text), or from a client that sends
`entity` as an object without the FQN; only an event naming it nowhere is keyed by its id.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from pipelines.core.table_specs import ERRORS_COLUMN
from silver import openmetadata_change_events, openmetadata_field_changes
from tests.support.openmetadata_forms import full_form, stored_form, table_entity
from tests.support.tables import bronze_frame


def utc(value: dt.datetime) -> dt.datetime:
    """A collected timestamp (naive, Python's local zone) as an aware UTC datetime."""
    return value.astimezone(dt.timezone.utc)


def tag(fqn: str, source: str = "Classification") -> dict:
    return {"tagFQN": fqn, "source": source, "labelType": "Manual", "state": "Confirmed"}


def user(name: str) -> dict:
    return {"id": f"id-{name}", "type": "user", "name": name, "fullyQualifiedName": name, "deleted": False}


# Values are JSON text inside JSON, as OpenMetadata sends them.
TAGGED_AND_REOWNED = {
    "id": "5f0c6e1a-0000-4000-8000-000000000001",
    "eventType": "entityUpdated",
    "entityType": "table",
    "entityId": "e5b1c2d3-0000-4000-8000-0000000000aa",
    "entityFullyQualifiedName": "mysql.shop.public.orders",
    "previousVersion": 0.2,
    "currentVersion": 0.3,
    "userName": "alice",
    "timestamp": 1717243200000,
    "domains": [{"id": "d-1", "type": "domain", "name": "Sales", "fullyQualifiedName": "Sales"}],
    "changeDescription": {
        "fieldsAdded": [{"name": "description", "newValue": "merged from an earlier edit"}],
        "fieldsUpdated": [],
        "fieldsDeleted": [],
        "previousVersion": 0.1,
    },
    "incrementalChangeDescription": {
        "fieldsAdded": [
            {"name": "tags", "newValue": json.dumps([tag("PII.Sensitive")])},
            {
                "name": "columns.customer_email.tags",
                "newValue": json.dumps([tag("Glossary.Email", "Glossary")]),
            },
        ],
        "fieldsUpdated": [
            {"name": "owners", "oldValue": json.dumps([user("bob")]), "newValue": json.dumps([user("alice")])}
        ],
        "fieldsDeleted": [{"name": "tags", "oldValue": json.dumps([tag("Tier.Tier2")])}],
        "previousVersion": 0.2,
    },
}

# An older server (single `owner`) and a producer that sends the values themselves, not JSON text.
OLDER_SERVER = {
    "eventType": "entityUpdated",
    "entityType": "dashboard",
    "entityId": "a0000000-0000-4000-8000-0000000000bb",
    "currentVersion": "1.1",
    "previousVersion": "1.0",
    "userName": "bob",
    "timestamp": "1717243260000",
    "domain": "Marketing",
    "changeDescription": {
        "fieldsUpdated": [{"name": "owner", "oldValue": user("carol"), "newValue": user("bob")}],
        "fieldsAdded": [{"name": "tags", "newValue": [tag("Tier.Tier1")]}],
        "fieldsDeleted": [{"name": 'columns."a.b".tags', "oldValue": "not a tag list"}],
    },
}


@pytest.fixture(scope="module")
def events(spark):
    bronze = bronze_frame(spark, [TAGGED_AND_REOWNED, OLDER_SERVER, "{not json"])
    return openmetadata_change_events.transform(bronze).cache()


@pytest.fixture(scope="module")
def field_changes(events):
    # The job reads the stored silver table, which has no `_errors` column.
    stored = events.where("size(_errors) = 0").drop(ERRORS_COLUMN)
    return {
        (row.entity_type, row.change_kind, row.field_name): row
        for row in openmetadata_field_changes.transform(stored).collect()
    }


def by_entity(events) -> dict:
    return {row.entity_type: row for row in events.collect()}


def test_change_event_is_typed(events):
    table = by_entity(events)["table"]
    assert table.om_event_id == TAGGED_AND_REOWNED["id"]
    assert table.event_type == "entityUpdated"
    assert table.entity_key == "openmetadata:table:mysql.shop.public.orders"
    assert utc(table.event_time) == dt.datetime(2024, 6, 1, 12, 0, 0, tzinfo=dt.timezone.utc)
    assert table.event_date == dt.date(2024, 6, 1)
    assert (table.previous_version, table.current_version) == (0.2, 0.3)
    assert table.actor == "alice"
    assert table.entity_name_source == "event"
    assert table.domains == ["Sales"]
    assert table[ERRORS_COLUMN] == []
    assert (table.raw, table.record_index) == (json.dumps(TAGGED_AND_REOWNED), 0)


def test_incremental_change_description_is_preferred(events):
    description = json.loads(by_entity(events)["table"].change_description)
    assert [item["name"] for item in description["fieldsDeleted"]] == ["tags"]
    assert "merged from an earlier edit" not in by_entity(events)["table"].change_description


def test_entity_key_falls_back_to_entity_id_and_versions_accept_strings(events):
    dashboard = by_entity(events)["dashboard"]
    assert dashboard.entity_key == "openmetadata:dashboard:a0000000-0000-4000-8000-0000000000bb"
    assert (dashboard.entity_fqn, dashboard.entity_name_source) == (None, "id")
    assert (dashboard.previous_version, dashboard.current_version) == (1.0, 1.1)
    assert dashboard.domains == ["Marketing"]
    assert json.loads(dashboard.change_description)["fieldsUpdated"][0]["name"] == "owner"


def test_missing_id_falls_back_to_a_stable_deterministic_id(spark, events):
    first = by_entity(events)["dashboard"].event_id
    again = openmetadata_change_events.transform(
        bronze_frame(spark, [OLDER_SERVER], source_file="/landing/other.json")
    ).collect()[0]
    later = openmetadata_change_events.transform(
        bronze_frame(spark, [{**OLDER_SERVER, "timestamp": 1717243320000}])
    ).collect()[0]
    assert first is not None and len(first) == 64
    assert again.event_id == first
    assert later.event_id != first
    assert by_entity(events)["table"].event_id not in (first, later.event_id)


def test_corrupt_rows_are_kept_with_errors(events):
    corrupt = [row for row in events.collect() if row.entity_type is None]
    assert len(corrupt) == 1
    assert corrupt[0][ERRORS_COLUMN] == ["bronze_corrupt:malformed JSON"]
    assert corrupt[0].event_id is not None and corrupt[0].raw == "{not json"


def test_uncastable_values_are_named_in_errors(spark):
    bad = {**OLDER_SERVER, "currentVersion": "v2", "timestamp": "yesterday"}
    row = openmetadata_change_events.transform(bronze_frame(spark, [bad])).collect()[0]
    assert row.current_version is None and row.event_time is None
    assert sorted(row[ERRORS_COLUMN]) == ["cast:currentVersion", "cast:timestamp"]


def test_tag_changes_are_typed(field_changes):
    added = field_changes[("table", "added", "tags")]
    deleted = field_changes[("table", "deleted", "tags")]
    assert [t.tagFQN for t in added.new_tags] == ["PII.Sensitive"]
    assert added.new_tags[0].asDict() == tag("PII.Sensitive")
    assert added.old_tags is None and added.column_name is None and added.field_base == "tags"
    assert [t.tagFQN for t in deleted.old_tags] == ["Tier.Tier2"]
    assert json.loads(deleted.old_value) == [tag("Tier.Tier2")]


def test_column_level_tags_carry_the_column_name(field_changes):
    column = field_changes[("table", "added", "columns.customer_email.tags")]
    assert column.column_name == "customer_email"
    assert column.field_base == "tags"
    assert [(t.tagFQN, t.source) for t in column.new_tags] == [("Glossary.Email", "Glossary")]


def test_owner_changes_are_typed(field_changes):
    owners = field_changes[("table", "updated", "owners")]
    assert [o.name for o in owners.old_owners] == ["bob"]
    assert [o.name for o in owners.new_owners] == ["alice"]
    assert owners.new_owners[0].deleted is False and owners.new_owners[0].type == "user"
    single = field_changes[("dashboard", "updated", "owner")]
    assert [o.name for o in single.old_owners] == ["carol"]
    assert [o.fullyQualifiedName for o in single.new_owners] == ["bob"]


def test_values_sent_as_lists_parse_like_json_text(field_changes):
    added = field_changes[("dashboard", "added", "tags")]
    assert [t.tagFQN for t in added.new_tags] == ["Tier.Tier1"]
    assert added[ERRORS_COLUMN] == []


def test_unparseable_tag_values_are_errors(field_changes):
    bad = field_changes[("dashboard", "deleted", 'columns."a.b".tags')]
    assert bad.old_tags is None
    assert bad.column_name == "a.b"
    assert bad[ERRORS_COLUMN] == ["cast:tags"]


def test_field_changes_carry_the_parent_event(events, field_changes):
    table = by_entity(events)["table"]
    owners = field_changes[("table", "updated", "owners")]
    assert owners.change_event_id == table.event_id
    assert (owners.entity_key, owners.entity_fqn, owners.actor) == (
        table.entity_key,
        table.entity_fqn,
        "alice",
    )
    assert (owners.event_time, owners.event_date) == (table.event_time, table.event_date)
    assert (owners.raw, owners.source_file, owners.record_index) == (table.raw, table.source_file, 0)
    assert owners.old_tags is None and owners.new_tags is None


def test_field_change_ids_are_unique_and_deterministic(events, field_changes):
    ids = [row.event_id for row in field_changes.values()]
    assert len(field_changes) == 7
    assert len(set(ids)) == len(ids)
    stored = events.where("size(_errors) = 0").drop(ERRORS_COLUMN)
    again = sorted(row.event_id for row in openmetadata_field_changes.transform(stored).collect())
    assert again == sorted(ids)


CUSTOMERS_ID = "c0000000-0000-4000-8000-0000000000cc"
CUSTOMERS = table_entity(
    CUSTOMERS_ID,
    "pg.crm.public.customers",
    ["email"],
    domains=[{"id": "d-7", "type": "domain", "name": "Sales", "fullyQualifiedName": "Commercial.Sales"}],
)
EMAIL_TAGGED = {
    "id": "5f0c6e1a-0000-4000-8000-000000000007",
    "eventType": "entityUpdated",
    "entityType": "table",
    "entityId": CUSTOMERS_ID,
    "entityFullyQualifiedName": "pg.crm.public.customers",
    "previousVersion": 0.1,
    "currentVersion": 0.2,
    "userName": "alice",
    "timestamp": 1717243200000,
    "domains": ["d-7", "d-unknown"],
    "changeDescription": {
        "fieldsAdded": [{"name": "columns.email.tags", "newValue": json.dumps([tag("PII.Sensitive")])}],
        "fieldsUpdated": [],
        "fieldsDeleted": [],
    },
}


def _typed_one(spark, record: dict):
    return openmetadata_change_events.transform(bronze_frame(spark, [record])).collect()[0]


def test_the_servers_stored_form_is_keyed_by_the_entitys_name(spark):
    stored = stored_form(EMAIL_TAGGED, CUSTOMERS)
    assert "entityFullyQualifiedName" not in stored and isinstance(stored["entity"], str)

    row = _typed_one(spark, stored)

    assert row.entity_key == "openmetadata:table:pg.crm.public.customers"
    assert (row.entity_fqn, row.entity_name_source) == ("pg.crm.public.customers", "entity")
    assert row.entity_id == CUSTOMERS_ID
    assert json.loads(row.entity) == CUSTOMERS
    assert row.previous_version is None and row.current_version == 0.2
    assert row[ERRORS_COLUMN] == []


def test_an_entity_sent_as_an_object_without_the_fqn_names_the_key(spark):
    event = {k: v for k, v in EMAIL_TAGGED.items() if k != "entityFullyQualifiedName"}

    row = _typed_one(spark, full_form(event, CUSTOMERS))

    assert row.entity_key == "openmetadata:table:pg.crm.public.customers"
    assert row.entity_name_source == "entity"
    assert json.loads(row.entity) == CUSTOMERS


def test_every_form_of_one_event_gets_the_same_key_and_fields(spark):
    forms = [
        full_form(EMAIL_TAGGED, None),
        full_form(EMAIL_TAGGED, CUSTOMERS),
        stored_form(EMAIL_TAGGED, CUSTOMERS),
    ]
    rows = openmetadata_change_events.transform(bronze_frame(spark, forms)).where("size(_errors) = 0")
    changes = openmetadata_field_changes.transform(rows.drop(ERRORS_COLUMN)).collect()

    assert {(c.entity_key, c.entity_fqn, c.column_name, c.field_name) for c in changes} == {
        (
            "openmetadata:table:pg.crm.public.customers",
            "pg.crm.public.customers",
            "email",
            "columns.email.tags",
        )
    }
    assert len(changes) == len(forms)


def test_the_events_domain_ids_become_the_names_the_entity_gives_them(spark):
    row = _typed_one(spark, full_form(EMAIL_TAGGED, CUSTOMERS))
    assert row.domains == ["Commercial.Sales", "d-unknown"]  # an id the entity does not name stays

    older = {**CUSTOMERS, "domain": CUSTOMERS["domains"][0]}  # before 1.9: one `domain` reference
    del older["domains"]
    assert _typed_one(spark, full_form(EMAIL_TAGGED, older)).domains == ["Commercial.Sales", "d-unknown"]
    assert _typed_one(spark, full_form(EMAIL_TAGGED, None)).domains == ["d-7", "d-unknown"]


def test_blank_names_are_no_names(spark):
    event = {**EMAIL_TAGGED, "entityFullyQualifiedName": ""}
    row = _typed_one(spark, full_form(event, {**CUSTOMERS, "fullyQualifiedName": None}))
    assert row.entity_key == f"openmetadata:table:{CUSTOMERS_ID}"
    assert (row.entity_fqn, row.entity_name_source) == (None, "id")
