"""silver.datahub_action_requests on the spec's proposal samples (datahub-entity-change-event-v1.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from silver import datahub_action_requests, datahub_entity_changes
from silver.datahub_catalog import load_catalog
from tests.support.tables import bronze_frame
from tests.support.workflow_form_requests import FORM_REQUEST, FORM_RESOURCE, WORKFLOW, form_events

SUITE = Path(__file__).resolve().parents[2] / "expectations" / "silver.datahub_action_requests.json"
RESOURCE = "urn:li:dataset:(urn:li:dataPlatform:snowflake,example.table,PROD)"


def proposal(urn: str, parameters: dict, operation: str = "CREATE") -> dict:
    return {
        "entityType": "actionRequest",
        "entityUrn": urn,
        "category": "LIFECYCLE",
        "operation": operation,
        "auditStamp": {"actor": "urn:li:corpuser:jdoe", "time": 1234567890},
        "version": 0,
        "parameters": parameters,
    }


SPEC_SAMPLES = {
    "domain": proposal(
        "urn:li:actionRequest:abc-123",
        {
            "domains": '["urn:li:domain:marketing"]',
            "actionRequestType": "DOMAIN_ASSOCIATION",
            "resourceUrn": RESOURCE,
            "resourceType": "dataset",
        },
    ),
    "owner": proposal(
        "urn:li:actionRequest:def-456",
        {
            "owners": '[{"type":"TECHNICAL_OWNER","typeUrn":"urn:li:ownershipType:technical_owner",'
            '"ownerUrn":"urn:li:corpuser:jdoe"}]',
            "actionRequestType": "OWNER_ASSOCIATION",
            "resourceUrn": RESOURCE,
            "resourceType": "dataset",
        },
    ),
    "tag": proposal(
        "urn:li:actionRequest:ghi-789",
        {
            "actionRequestType": "TAG_ASSOCIATION",
            "resourceUrn": RESOURCE,
            "tagUrn": "urn:li:tag:pii",
            "resourceType": "dataset",
        },
    ),
    "glossary_term": proposal(
        "urn:li:actionRequest:jkl-101",
        {
            "parentNodeUrn": "urn:li:glossaryNode:123",
            "glossaryEntityName": "ExampleTerm",
            "actionRequestType": "CREATE_GLOSSARY_TERM",
            "resourceType": "glossaryTerm",
        },
    ),
    "term": proposal(
        "urn:li:actionRequest:mno-102",
        {
            "glossaryTermUrn": "urn:li:glossaryTerm:123",
            "actionRequestType": "TERM_ASSOCIATION",
            "resourceUrn": RESOURCE,
            "resourceType": "dataset",
        },
    ),
    "description": proposal(
        "urn:li:actionRequest:pqr-103",
        {
            "description": "Example description for a dataset.",
            "actionRequestType": "UPDATE_DESCRIPTION",
            "resourceUrn": RESOURCE,
            "resourceType": "dataset",
        },
    ),
    "structured_property": proposal(
        "urn:li:actionRequest:stu-104",
        {
            "structuredProperties": '[{"propertyUrn":"urn:li:structuredProperty:123","values":["value1","value2"]}]',
            "actionRequestType": "STRUCTURED_PROPERTY_ASSOCIATION",
            "resourceUrn": RESOURCE,
            "resourceType": "dataset",
        },
    ),
}
FACT_SAMPLES = {
    "term_by_term_urn": proposal(
        "urn:li:actionRequest:vwx-105",
        {
            "termUrn": "urn:li:glossaryTerm:456",
            "actionRequestType": "TERM_ASSOCIATION",
            "resourceUrn": RESOURCE,
        },
        operation="CREATED",
    ),
    "accepted": proposal(
        "urn:li:actionRequest:ghi-789",
        {
            "actionRequestStatus": "COMPLETED",
            "actionRequestResult": "ACCEPTED",
            "actionRequestType": "TAG_ASSOCIATION",
        },
        operation="COMPLETED",
    ),
}
CONTRACT_TYPES = {
    "event_id": "string",
    "event_time": "timestamp",
    "event_date": "date",
    "proposal_urn": "string",
    "operation": "string",
    "actor": "string",
    "domains": "array<string>",
    "owners": "array<struct<type:string,typeUrn:string,ownerUrn:string>>",
    "structuredProperties": "array<struct<propertyUrn:string,values:array<string>>>",
    "parameters": "map<string,string>",
    "parameters_extra": "map<string,string>",
    "raw": "string",
    "source_file": "string",
    "record_index": "bigint",
    "ingested_at": "timestamp",
    "_errors": "array<string>",
    **{
        name: "string"
        for name in (
            "action_request_type resource_urn resource_type sub_resource_type sub_resource "
            "action_request_status action_request_result tagUrn glossaryTermUrn description "
            "parentNodeUrn glossaryEntityName"
        ).split()
    },
}


@pytest.fixture(scope="module")
def output(spark):
    samples = {**SPEC_SAMPLES, **FACT_SAMPLES}
    return datahub_action_requests.transform(bronze_frame(spark, list(samples.values()))).cache()


@pytest.fixture(scope="module")
def typed(output):
    names = [*SPEC_SAMPLES, *FACT_SAMPLES]
    return {names[row["record_index"]]: row for row in output.collect()}


def test_output_columns_follow_the_contract(output):
    types = {f.name: f.dataType.simpleString() for f in output.schema.fields}
    assert {name: types.get(name) for name in CONTRACT_TYPES} == CONTRACT_TYPES


def test_every_proposal_sample_comes_out_typed_without_errors(typed):
    for name, row in typed.items():
        assert row["_errors"] == [], name
        assert row["parameters_extra"] == {}, name
        assert row["actor"] == "urn:li:corpuser:jdoe", name
        assert row["category"] == "LIFECYCLE", name
        assert row["event_version"] == 0, name
    # The spec's proposal samples give auditStamp.time 1234567890: seconds, not ms.
    assert str(typed["tag"]["event_time"]) == "2009-02-13 23:31:30"
    assert typed["tag"]["event_time_unit"] == "seconds"


def test_proposal_types_fill_their_columns(typed):
    owner = typed["owner"]["owners"][0]
    assert owner["ownerUrn"] == "urn:li:corpuser:jdoe"
    assert owner["type"] == "TECHNICAL_OWNER"
    assert owner["typeUrn"] == "urn:li:ownershipType:technical_owner"
    assert typed["domain"]["domains"] == ["urn:li:domain:marketing"]
    prop = typed["structured_property"]["structuredProperties"][0]
    assert (prop["propertyUrn"], prop["values"]) == ("urn:li:structuredProperty:123", ["value1", "value2"])
    assert typed["tag"]["tagUrn"] == "urn:li:tag:pii"
    assert typed["tag"]["proposal_urn"] == "urn:li:actionRequest:ghi-789"
    assert typed["tag"]["resource_urn"] == RESOURCE
    assert typed["tag"]["resource_type"] == "dataset"
    assert typed["tag"]["action_request_type"] == "TAG_ASSOCIATION"
    assert typed["term"]["glossaryTermUrn"] == "urn:li:glossaryTerm:123"
    assert typed["term_by_term_urn"]["glossaryTermUrn"] == "urn:li:glossaryTerm:456"
    assert typed["glossary_term"]["glossaryEntityName"] == "ExampleTerm"
    assert typed["glossary_term"]["parentNodeUrn"] == "urn:li:glossaryNode:123"
    assert typed["glossary_term"]["resource_urn"] is None
    assert typed["description"]["description"] == "Example description for a dataset."


def test_status_change_is_a_row_with_status_columns(typed):
    accepted = typed["accepted"]
    assert (accepted["operation"], accepted["action_request_status"], accepted["action_request_result"]) == (
        "COMPLETED",
        "COMPLETED",
        "ACCEPTED",
    )
    assert typed["tag"]["action_request_status"] is None
    assert accepted["event_id"] != typed["tag"]["event_id"]


def test_bad_json_parameters_and_unlisted_keys(spark):
    records = [
        proposal(
            "urn:li:actionRequest:x", {"actionRequestType": "DOMAIN_ASSOCIATION", "domains": "marketing"}
        ),
        proposal("urn:li:actionRequest:y", {"actionRequestType": "OWNER_ASSOCIATION", "owners": "[1,"}),
        proposal(
            "urn:li:actionRequest:z", {"actionRequestType": "TAG_ASSOCIATION", "tagUrn": "t", "note": "n"}
        ),
        proposal("urn:li:actionRequest:w", {"actionRequestType": "NEW_TYPE", "tagUrn": "t"}),
    ]
    rows = datahub_action_requests.transform(bronze_frame(spark, records)).orderBy("record_index").collect()
    assert rows[0]["_errors"] == ["cast:parameters.domains"] and rows[0]["domains"] is None
    assert rows[1]["_errors"] == ["cast:parameters.owners"] and rows[1]["owners"] is None
    assert rows[2]["parameters_extra"] == {"note": "n"} and rows[2]["tagUrn"] == "t"
    assert rows[3]["parameters_extra"] == {"tagUrn": "t"} and rows[3]["tagUrn"] is None
    assert rows[3]["action_request_type"] == "NEW_TYPE"


def test_corrupt_and_non_proposal_rows_are_not_here(spark):
    dataset_change = {**SPEC_SAMPLES["tag"], "entityType": "dataset"}
    bronze = bronze_frame(spark, ['{"entityType": "actionRequest"', dataset_change, SPEC_SAMPLES["tag"]])
    assert [r["record_index"] for r in datahub_action_requests.transform(bronze).collect()] == [2]


def test_each_bronze_row_is_a_proposal_or_an_entity_change_even_with_escaped_letters(spark):
    escaped = json.dumps(SPEC_SAMPLES["tag"]).replace('"actionRequest"', '"action\\u0052equest"')
    mentions = {**SPEC_SAMPLES["tag"], "entityType": "dataset", "entityUrn": "urn:li:dataset:actionRequest"}
    records = [escaped, mentions, SPEC_SAMPLES["domain"], "not json at all"]
    bronze = bronze_frame(spark, records)
    proposals = datahub_action_requests.transform(bronze)
    changes = datahub_entity_changes.transform(bronze)
    assert sorted(r["record_index"] for r in proposals.collect()) == [0, 2]
    assert sorted(r["record_index"] for r in changes.collect()) == [1, 3]
    assert proposals.where("record_index = 0").first()["action_request_type"] == "TAG_ASSOCIATION"


def test_job_spec():
    spec = datahub_action_requests.SPEC
    assert (spec.table, spec.source, spec.reconciles) == (
        "silver.datahub_action_requests",
        "bronze.datahub_entity_change_events",
        "datahub_ece",
    )


def _suite() -> dict:
    return json.loads(SUITE.read_text(encoding="utf-8"))


def _expectation(name: str) -> dict:
    return next(e for e in _suite()["expectations"] if e["meta"]["name"] == name)


def test_suite_sets_equal_the_catalog():
    catalog = load_catalog()
    pairs = _expectation("category_operation_known")["kwargs"]["value_pairs_set"]
    assert sorted(map(tuple, pairs)) == catalog.proposal_operation_pairs()
    types = _expectation("action_request_type_known")["kwargs"]["value_set"]
    assert sorted(types) == sorted(catalog.proposal_types)
    results = _expectation("action_request_result_known")["kwargs"]["value_set"]
    assert sorted(results) == sorted(catalog.proposal_results)


def test_resource_urn_rule_applies_to_exactly_the_association_types(output):
    condition = _expectation("association_resource_urn_present")["kwargs"]["row_condition"]
    selected = output.where(F.expr(condition)).select("action_request_type").distinct().collect()
    in_sample = {r["action_request_type"] for r in output.select("action_request_type").collect()}
    assert {r["action_request_type"] for r in selected} == set(load_catalog().association_types()) & in_sample
    assert set(load_catalog().association_types()) <= in_sample


def test_suite_is_well_formed_and_names_real_columns(output):
    suite = _suite()
    names = [e["meta"]["name"] for e in suite["expectations"]]
    assert suite["name"] == suite["meta"]["table"] == "silver.datahub_action_requests"
    assert len(names) == len(set(names))
    for expectation in suite["expectations"]:
        assert expectation["meta"]["severity"] in ("warn", "drop", "fail")
        kwargs = expectation["kwargs"]
        assert {kwargs.get(k) for k in ("column", "column_A", "column_B")} - {None} <= set(output.columns)


def test_workflow_form_requests_are_typed_with_their_resource_and_result(spark):
    rows = (
        datahub_action_requests.transform(bronze_frame(spark, form_events()))
        .orderBy("record_index")
        .collect()
    )
    created, step, done = rows

    for row in rows:
        assert (row["_errors"], row["parameters_extra"]) == ([], {}), row["operation"]
        assert (row["proposal_urn"], row["action_request_type"]) == (FORM_REQUEST, "WORKFLOW_FORM_REQUEST")
        assert (row["workflowUrn"], row["workflowId"]) == (WORKFLOW, "data-access-request")
        assert row["fields"] == {"dataset": [FORM_RESOURCE], "justification": ["a new dashboard"]}
        assert (row["actorUrn"], row["actorEmail"], row["expiresAtMs"]) == (
            "urn:li:corpuser:jdoe",
            "jdoe@example.com",
            1767225600000,
        )
    assert created["resource_urn"] is None and created["action_request_result"] is None
    assert (step["operation"], step["stepId"], step["stepResult"]) == ("MODIFY", "owner_approval", "ACCEPTED")
    assert (done["resource_urn"], done["resource_type"]) == (FORM_RESOURCE, "dataset")
    assert (done["action_request_result"], done["workflow_operation"]) == ("ACCEPTED", "COMPLETE")
    assert (done["entityName"], done["qualifiedEntityName"], done["entityPlatformName"]) == (
        "table",
        "example.table",
        "snowflake",
    )


def test_a_form_requests_keys_are_typed_only_on_form_requests(spark):
    other = proposal(
        "urn:li:actionRequest:t", {"actionRequestType": "TAG_ASSOCIATION", "tagUrn": "t", "result": "x"}
    )
    row = datahub_action_requests.transform(bronze_frame(spark, [other])).first()
    assert row["action_request_result"] is None and row["parameters_extra"] == {"result": "x"}
