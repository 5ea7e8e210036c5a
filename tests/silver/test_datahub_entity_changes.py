"""silver.datahub_entity_changes on the spec's sample events (datahub-entity-change-event-v1.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from silver import datahub_action_requests, datahub_entity_changes
from silver.datahub_catalog import load_catalog
from tests.support.tables import bronze_frame

SUITE = Path(__file__).resolve().parents[2] / "expectations" / "silver.datahub_entity_changes.json"
STAMP = {"actor": "urn:li:corpuser:jdoe", "time": 1649953100653}
DATASET = "urn:li:dataset:abc"
FIELD = "urn:li:schemaField:(urn:li:dataset:abc,newFieldName)"


def ece(category: str, operation: str, modifier: str | None = None, parameters: dict | None = None, **extra):
    record = {"entityUrn": DATASET, "entityType": "dataset", "category": category, "operation": operation}
    if modifier is not None:
        record["modifier"] = modifier
    if parameters is not None:
        record["parameters"] = parameters
    return {**record, "auditStamp": dict(STAMP), **extra}


SPEC_SAMPLES = {
    "tag_add": ece("TAG", "ADD", "urn:li:tag:PII", {"tagUrn": "urn:li:tag:PII"}),
    "tag_remove": ece("TAG", "REMOVE", "urn:li:tag:PII", {"tagUrn": "urn:li:tag:PII"}),
    "term_add": ece(
        "GLOSSARY_TERM",
        "ADD",
        "urn:li:glossaryTerm:ExampleNode.ExampleTerm",
        {"termUrn": "urn:li:glossaryTerm:ExampleNode.ExampleTerm"},
    ),
    "term_remove": ece(
        "GLOSSARY_TERM",
        "REMOVE",
        "urn:li:glossaryTerm:ExampleNode.ExampleTerm",
        {"termUrn": "urn:li:glossaryTerm:ExampleNode.ExampleTerm"},
    ),
    "domain_add": ece(
        "DOMAIN", "ADD", "urn:li:domain:ExampleDomain", {"domainUrn": "urn:li:domain:ExampleDomain"}
    ),
    "domain_remove": ece(
        "DOMAIN", "REMOVE", "urn:li:domain:ExampleDomain", {"domainUrn": "urn:li:domain:ExampleDomain"}
    ),
    "owner_add": ece(
        "OWNER",
        "ADD",
        "urn:li:corpuser:jdoe",
        {"ownerUrn": "urn:li:corpuser:jdoe", "ownerType": "BUSINESS_OWNER"},
    ),
    "owner_remove": ece(
        "OWNER",
        "REMOVE",
        "urn:li:corpuser:jdoe",
        {"ownerUrn": "urn:li:corpuser:jdoe", "ownerType": "BUSINESS_OWNER"},
    ),
    "property_add": ece(
        "STRUCTURED_PROPERTY",
        "ADD",
        "urn:li:structuredProperty:prop1",
        {"propertyUrn": "urn:li:structuredProperty:prop1", "propertyValues": '["value1"]'},
        version=0,
    ),
    "property_remove": ece("STRUCTURED_PROPERTY", "REMOVE", "urn:li:structuredProperty:prop1", version=0),
    "property_modify": ece(
        "STRUCTURED_PROPERTY",
        "MODIFY",
        "urn:li:structuredProperty:prop1",
        {"propertyUrn": "urn:li:structuredProperty:prop1", "propertyValues": '["value1","value2"]'},
        version=0,
    ),
    "deprecation": ece("DEPRECATION", "MODIFY", "DEPRECATED", {"status": "DEPRECATED"}),
    "field_add": ece(
        "TECHNICAL_SCHEMA", "ADD", FIELD, {"fieldUrn": FIELD, "fieldPath": "newFieldName", "nullable": False}
    ),
    "field_remove": ece(
        "TECHNICAL_SCHEMA",
        "REMOVE",
        FIELD,
        {"fieldUrn": FIELD, "fieldPath": "newFieldName", "nullable": False},
    ),
    "create": ece("LIFECYCLE", "CREATE"),
    "soft_delete": ece("LIFECYCLE", "SOFT_DELETE"),
    "hard_delete": ece("LIFECYCLE", "HARD_DELETE"),
}

# Shapes from event-catalog-facts.md that the spec samples do not show.
FIELD_TAG = {
    **ece(
        "TAG",
        "ADD",
        "urn:li:tag:PII",
        {
            "tagUrn": "urn:li:tag:PII",
            "context": "{}",
            "fieldPath": "user.email",
            "parentUrn": "urn:li:dataset:(urn:li:dataPlatform:hive,db.users,PROD)",
        },
    ),
    "entityUrn": "urn:li:schemaField:(urn:li:dataset:(urn:li:dataPlatform:hive,db.users,PROD),user.email)",
    "entityType": "schemaField",
}
FACT_SAMPLES = {
    "field_tag": FIELD_TAG,
    "run": {
        **ece(
            "RUN", "COMPLETED", None, {"runResult": "SUCCESS", "attempt": 2, "dataJobUrn": "urn:li:dataJob:x"}
        ),
        "entityType": "dataProcessInstance",
    },
    "incident": {
        **ece("INCIDENT", "ACTIVE", None, {"entities": '["urn:li:dataset:abc","urn:li:dataset:def"]'}),
        "entityType": "incident",
    },
    "ownership_modify": ece(
        "OWNERSHIP",
        "MODIFY",
        "TECHNICAL_OWNER",
        {
            "ownerUrn": "urn:li:corpuser:jdoe",
            "ownerType": "TECHNICAL_OWNER",
            "ownerTypeUrn": "urn:li:ownershipType:t",
        },
    ),
}

# The column contract (silver/COLUMNS.md) gold is written against.
CONTRACT_TYPES = {
    "event_id": "string",
    "event_time": "timestamp",
    "event_date": "date",
    "entity_urn": "string",
    "entity_type": "string",
    "category": "string",
    "operation": "string",
    "modifier": "string",
    "actor": "string",
    "impersonator": "string",
    "event_version": "int",
    "parameters": "map<string,string>",
    "parameters_extra": "map<string,string>",
    "parent_urn": "string",
    "propertyValues": "array<string>",
    "nullable": "boolean",
    "attempt": "int",
    "entities": "array<string>",
    "raw": "string",
    "source_file": "string",
    "record_index": "bigint",
    "ingested_at": "timestamp",
    "_errors": "array<string>",
    **{
        name: "string"
        for name in (
            "tagUrn termUrn domainUrn ownerUrn ownerType ownerTypeUrn propertyUrn status fieldUrn fieldPath "
            "modificationCategory description documentation context sourceDetails runResult "
            "parentInstanceUrn dataFlowUrn dataJobUrn runId asserteeUrn assertionResult businessAttributeUrn"
        ).split()
    },
}


@pytest.fixture(scope="module")
def typed(spark):
    """name -> output row of every spec and fact sample (one Spark job for the module)."""
    samples = {**SPEC_SAMPLES, **FACT_SAMPLES}
    rows = datahub_entity_changes.transform(bronze_frame(spark, list(samples.values()))).collect()
    by_index = {row["record_index"]: row for row in rows}
    return {name: by_index[i] for i, name in enumerate(samples)}


def test_output_columns_follow_the_contract(spark):
    schema = datahub_entity_changes.transform(bronze_frame(spark, [SPEC_SAMPLES["tag_add"]])).schema
    types = {f.name: f.dataType.simpleString() for f in schema.fields}
    assert {name: types.get(name) for name in CONTRACT_TYPES} == CONTRACT_TYPES


def test_every_spec_sample_comes_out_typed_without_errors(typed):
    for name, row in typed.items():
        assert row["_errors"] == [], name
        assert row["entity_urn"].startswith("urn:li:"), name
        assert row["actor"] == "urn:li:corpuser:jdoe", name
        assert str(row["event_time"]) == "2022-04-14 16:18:20.653000", name
        assert str(row["event_date"]) == "2022-04-14", name
        assert row["parameters_extra"] in ({}, None), name


def test_spec_samples_fill_their_typed_columns(typed):
    assert typed["tag_add"]["tagUrn"] == "urn:li:tag:PII"
    assert typed["term_remove"]["termUrn"] == "urn:li:glossaryTerm:ExampleNode.ExampleTerm"
    assert typed["domain_add"]["domainUrn"] == "urn:li:domain:ExampleDomain"
    assert typed["owner_add"]["ownerType"] == "BUSINESS_OWNER"
    assert typed["owner_add"]["ownerUrn"] == "urn:li:corpuser:jdoe"
    assert typed["property_add"]["propertyValues"] == ["value1"]
    assert typed["property_modify"]["propertyValues"] == ["value1", "value2"]
    assert typed["property_modify"]["event_version"] == 0
    assert typed["property_remove"]["propertyValues"] is None
    assert typed["deprecation"]["status"] == "DEPRECATED"
    assert typed["field_add"]["nullable"] is False
    assert typed["field_add"]["fieldPath"] == "newFieldName"
    assert typed["field_add"]["fieldUrn"] == FIELD
    assert typed["field_add"]["parameters"]["nullable"] == "false"
    assert typed["hard_delete"]["operation"] == "HARD_DELETE"
    assert typed["hard_delete"]["parameters"] is None


def test_catalog_facts_shapes_are_typed(typed):
    field_tag = typed["field_tag"]
    assert field_tag["parent_urn"] == "urn:li:dataset:(urn:li:dataPlatform:hive,db.users,PROD)"
    assert field_tag["fieldPath"] == "user.email"
    assert field_tag["context"] == "{}"
    assert typed["run"]["attempt"] == 2
    assert typed["run"]["runResult"] == "SUCCESS"
    assert typed["incident"]["entities"] == ["urn:li:dataset:abc", "urn:li:dataset:def"]
    assert typed["ownership_modify"]["ownerTypeUrn"] == "urn:li:ownershipType:t"
    assert typed["tag_add"]["parent_urn"] is None


def test_parent_urn_comes_from_the_parent_urn_parameter_too(spark):
    record = ece("GLOSSARY_TERM", "ADD", "urn:li:glossaryTerm:t", {"termUrn": "t", "parentUrn": DATASET})
    row = datahub_entity_changes.transform(bronze_frame(spark, [record])).first()
    assert row["parent_urn"] == DATASET
    assert row["parameters_extra"] == {}


def test_unlisted_keys_go_to_parameters_extra_and_stay_in_parameters(spark):
    tag = ece(
        "TAG", "ADD", "urn:li:tag:PII", {"tagUrn": "urn:li:tag:PII", "newKey": "x", "nullable": "maybe"}
    )
    unknown = ece("NEW_CATEGORY", "ADD", "m", {"tagUrn": "urn:li:tag:PII"})
    rows = (
        datahub_entity_changes.transform(bronze_frame(spark, [tag, unknown]))
        .orderBy("record_index")
        .collect()
    )
    assert rows[0]["parameters_extra"] == {"newKey": "x", "nullable": "maybe"}
    assert rows[0]["parameters"] == {"tagUrn": "urn:li:tag:PII", "newKey": "x", "nullable": "maybe"}
    assert rows[0]["tagUrn"] == "urn:li:tag:PII"
    assert rows[0]["nullable"] is None  # not a TAG key: kept untyped, no cast error
    assert rows[0]["_errors"] == []
    assert rows[1]["parameters_extra"] == {"tagUrn": "urn:li:tag:PII"}
    assert rows[1]["tagUrn"] is None


def test_event_id_ignores_parameter_key_order_and_is_stable(spark):
    first = ece("OWNER", "ADD", "u", {"ownerUrn": "urn:li:corpuser:jdoe", "ownerType": "BUSINESS_OWNER"})
    reordered = ece("OWNER", "ADD", "u", {"ownerType": "BUSINESS_OWNER", "ownerUrn": "urn:li:corpuser:jdoe"})
    other_actor = {**first, "auditStamp": {"actor": "urn:li:corpuser:other", "time": STAMP["time"]}}
    frame = bronze_frame(spark, [first, reordered, other_actor])
    ids = [r["event_id"] for r in datahub_entity_changes.transform(frame).orderBy("record_index").collect()]
    again = [r["event_id"] for r in datahub_entity_changes.transform(frame).orderBy("record_index").collect()]
    assert ids[0] == ids[1] != ids[2]
    assert ids == again
    assert all(len(i) == 64 for i in ids)


def test_untypable_values_become_null_with_a_cast_error(spark):
    records = [
        {**SPEC_SAMPLES["tag_add"], "auditStamp": {"actor": "urn:li:corpuser:jdoe", "time": "yesterday"}},
        ece("TECHNICAL_SCHEMA", "ADD", FIELD, {"fieldUrn": FIELD, "nullable": "maybe"}),
        ece("STRUCTURED_PROPERTY", "MODIFY", "p", {"propertyUrn": "p", "propertyValues": "value1"}),
        ece("RUN", "STARTED", None, {"attempt": "second"}),
        {**SPEC_SAMPLES["tag_add"], "auditStamp": {"actor": "urn:li:corpuser:jdoe", "time": 10**17}},
        {**SPEC_SAMPLES["tag_add"], "parameters": "tagUrn=urn:li:tag:PII", "version": "v1"},
        {**SPEC_SAMPLES["tag_add"], "auditStamp": "jdoe"},
    ]
    rows = datahub_entity_changes.transform(bronze_frame(spark, records)).orderBy("record_index").collect()
    assert rows[0]["_errors"] == ["cast:auditStamp.time"]
    assert rows[0]["event_time"] is None and rows[0]["event_date"] is None
    assert rows[1]["_errors"] == ["cast:parameters.nullable"] and rows[1]["nullable"] is None
    assert rows[2]["_errors"] == ["cast:parameters.propertyValues"] and rows[2]["propertyValues"] is None
    assert rows[3]["_errors"] == ["cast:parameters.attempt"] and rows[3]["attempt"] is None
    assert rows[4]["_errors"] == ["cast:auditStamp.time"] and rows[4]["event_time"] is None
    assert rows[5]["_errors"] == ["cast:version", "cast:parameters"]
    assert rows[6]["_errors"] == ["cast:auditStamp"] and rows[6]["actor"] is None


def test_a_misfit_parameters_or_audit_stamp_keeps_the_rest_and_json_encoded_objects_are_read(spark):
    """One parse types the envelope: a parameters or auditStamp of the wrong JSON type nulls only
    itself (the other fields and the id stay), and one sent as JSON-encoded text reads as the
    object it encodes, with the same id."""
    tag_add = SPEC_SAMPLES["tag_add"]
    records = [
        tag_add,
        {**tag_add, "parameters": json.dumps(tag_add["parameters"]), "auditStamp": json.dumps(STAMP)},
        {**tag_add, "parameters": ["tagUrn"], "auditStamp": 5},
        {**tag_add, "parameters": None, "auditStamp": None},
    ]
    rows = datahub_entity_changes.transform(bronze_frame(spark, records)).orderBy("record_index").collect()
    plain, encoded, misfit, absent = rows
    assert encoded["_errors"] == [] and encoded["event_id"] == plain["event_id"]
    assert encoded["parameters"] == {"tagUrn": "urn:li:tag:PII"} and encoded["actor"] == STAMP["actor"]
    assert misfit["_errors"] == ["cast:auditStamp", "cast:parameters"]
    assert misfit["parameters"] is None and misfit["actor"] is None and misfit["event_time"] is None
    assert (misfit["entity_urn"], misfit["category"], misfit["modifier"]) == (
        DATASET,
        "TAG",
        "urn:li:tag:PII",
    )
    assert absent["_errors"] == [] and absent["parameters"] is None and absent["actor"] is None


def test_corrupt_rows_are_kept_with_a_bronze_corrupt_error(spark):
    rows = datahub_entity_changes.transform(
        bronze_frame(spark, ['{"entityUrn": "urn:li:dataset:abc", ', "[1, 2]", SPEC_SAMPLES["tag_add"]])
    ).orderBy("record_index")
    corrupt = rows.collect()[:2]
    assert [r["_errors"] for r in corrupt] == [["bronze_corrupt:malformed JSON"]] * 2
    assert all(r["event_id"] and r["entity_urn"] is None for r in corrupt)
    assert corrupt[0]["raw"] == '{"entityUrn": "urn:li:dataset:abc", '
    assert corrupt[0]["event_id"] != corrupt[1]["event_id"]


def test_every_bronze_row_lands_in_exactly_one_table(spark):
    proposal = {
        "entityType": "actionRequest",
        "entityUrn": "urn:li:actionRequest:abc-123",
        "category": "LIFECYCLE",
        "operation": "CREATE",
        "auditStamp": dict(STAMP),
        "parameters": {"actionRequestType": "TAG_ASSOCIATION", "tagUrn": "urn:li:tag:pii"},
    }
    records = [*SPEC_SAMPLES.values(), proposal, proposal, "not json", '{"entityType": "actionRequest"']
    bronze = bronze_frame(spark, records)
    changes = datahub_entity_changes.transform(bronze).count()
    proposals = datahub_action_requests.transform(bronze).count()
    assert (changes, proposals) == (len(SPEC_SAMPLES) + 2, 2)
    assert changes + proposals == bronze.count()


def test_job_spec():
    spec = datahub_entity_changes.SPEC
    assert (spec.table, spec.source, spec.reconciles) == (
        "silver.datahub_entity_changes",
        "bronze.datahub_entity_change_events",
        "datahub_ece",
    )


def test_catalog_covers_every_category_of_the_facts():
    facts = (
        "TAG GLOSSARY_TERM DOMAIN OWNER OWNERSHIP DOCUMENTATION DEPRECATION TECHNICAL_SCHEMA LIFECYCLE "
        "STRUCTURED_PROPERTY RUN INCIDENT BUSINESS_ATTRIBUTE APPLICATION PARENT RELATED_ENTITIES "
        "ASSET_MEMBERSHIP VERSIONING"
    ).split()
    catalog = load_catalog()
    assert set(facts) <= set(catalog.categories())
    assert catalog.known_keys("TAG") >= {"tagUrn", "context", "sourceDetails", "fieldPath", "parentUrn"}
    assert catalog.operations["OWNER"] == catalog.operations["OWNERSHIP"]


def _suite() -> dict:
    return json.loads(SUITE.read_text(encoding="utf-8"))


def test_suite_pair_set_equals_the_catalog():
    pairs = [
        e["kwargs"]["value_pairs_set"]
        for e in _suite()["expectations"]
        if e["type"] == "expect_column_pair_values_to_be_in_set"
    ]
    assert len(pairs) == 1
    assert sorted(map(tuple, pairs[0])) == load_catalog().category_operation_pairs()


def test_suite_is_well_formed_and_names_real_columns(spark):
    suite = _suite()
    columns = set(datahub_entity_changes.transform(bronze_frame(spark, [SPEC_SAMPLES["tag_add"]])).columns)
    names = [e["meta"]["name"] for e in suite["expectations"]]
    assert suite["name"] == suite["meta"]["table"] == "silver.datahub_entity_changes"
    assert len(names) == len(set(names))
    for expectation in suite["expectations"]:
        assert expectation["meta"]["severity"] in ("warn", "drop", "fail")
        kwargs = expectation["kwargs"]
        assert {kwargs.get(k) for k in ("column", "column_A", "column_B")} - {None} <= columns
