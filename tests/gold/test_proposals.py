"""Proposals: status from a status event, else APPLIED inferred from a later change, else PENDING."""

from __future__ import annotations

import json

import pytest

from gold import proposal_events, proposals
from pipelines.core.table_specs import ERRORS_COLUMN
from silver import datahub_action_requests
from tests.support import workflow_form_requests as forms
from tests.support.gold import assert_incremental_equals_full, build_all, rows, source
from tests.support.tables import bronze_frame

AR = "silver.datahub_action_requests"
DH = "silver.datahub_entity_changes"
DS = "urn:li:dataset:(urn:li:dataPlatform:snowflake,shop.orders,PROD)"
PII = "urn:li:tag:pii"
MARKETING = "urn:li:domain:marketing"
STATUS = ("proposal_urn", "status", "status_rule", "resolved_at", "resolved_by")


def create(urn, time, kind, **params):
    return dict(
        event_id=f"c-{urn}",
        event_time=time,
        proposal_urn=urn,
        operation="CREATE",
        actor="urn:li:corpuser:ann",
        action_request_type=kind,
        resource_urn=DS,
        resource_type="dataset",
        **params,
    )


def completed(urn, time, result, actor="urn:li:corpuser:lead"):
    return dict(
        event_id=f"s-{urn}-{time}",
        event_time=time,
        proposal_urn=urn,
        operation="COMPLETED",
        actor=actor,
        action_request_type="TAG_ASSOCIATION",
        resource_urn=DS,
        action_request_status="COMPLETED",
        action_request_result=result,
    )


def change(event_id, time, category, entity=DS, actor="urn:li:corpuser:bob", **params):
    return dict(
        event_id=event_id,
        event_time=time,
        entity_urn=entity,
        category=category,
        operation=params.pop("operation", "ADD"),
        actor=actor,
        **params,
    )


@pytest.fixture
def batch(spark):
    def make(requests=(), changes=()):
        return {AR: source(spark, AR, *requests), DH: source(spark, DH, *changes)}

    return make


def test_status_event_beats_inference_and_pending_otherwise(batch):
    built = build_all(
        proposals.SPEC,
        batch(
            requests=[
                create("urn:li:actionRequest:a", "10:00", "TAG_ASSOCIATION", tagUrn=PII),
                completed("urn:li:actionRequest:a", "12:00", "REJECTED"),
                create(
                    "urn:li:actionRequest:p",
                    "10:00",
                    "TERM_ASSOCIATION",
                    glossaryTermUrn="urn:li:glossaryTerm:x",
                ),
            ],
            changes=[change("t1", "11:00", "TAG", tagUrn=PII)],
        ),
    )
    assert rows(built, *STATUS) == [
        ("urn:li:actionRequest:a", "REJECTED", "STATUS_EVENT", "12:00", "urn:li:corpuser:lead"),
        ("urn:li:actionRequest:p", "PENDING", None, None, None),
    ]
    assert rows(built.filter("proposal_urn like '%:a'"), "created_by", "created_at", "proposed") == [
        ("urn:li:corpuser:ann", "10:00", {"tagUrn": PII})
    ]


def test_applied_is_inferred_from_the_first_later_change(batch):
    built = build_all(
        proposals.SPEC,
        batch(
            requests=[
                create("urn:li:actionRequest:d", "10:00", "DOMAIN_ASSOCIATION", domains=[MARKETING]),
                create(
                    "urn:li:actionRequest:o",
                    "10:00",
                    "OWNER_ASSOCIATION",
                    owners=[dict(type="TECHNICAL_OWNER", typeUrn=None, ownerUrn="urn:li:corpuser:cy")],
                ),
                create("urn:li:actionRequest:u", "10:00", "UPDATE_DESCRIPTION", description="Orders."),
            ],
            changes=[
                change("m0", "09:00", "DOMAIN", domainUrn=MARKETING),  # before the proposal: not its effect
                change("m1", "11:00", "DOMAIN", domainUrn=MARKETING),
                change("m2", "12:00", "DOMAIN", domainUrn=MARKETING, actor="urn:li:corpuser:zed"),
                change("w1", "11:30", "OWNER", modifier="urn:li:corpuser:cy"),
                change(
                    "x0", "11:45", "DOCUMENTATION", description="Something else."
                ),  # not the proposed text
                change("x1", "12:30", "DOCUMENTATION", operation="MODIFY", documentation="Orders."),
            ],
        ),
    )
    assert rows(built, *STATUS) == [
        ("urn:li:actionRequest:d", "APPLIED", "INFERRED_FROM_CHANGE", "11:00", "urn:li:corpuser:bob"),
        ("urn:li:actionRequest:o", "APPLIED", "INFERRED_FROM_CHANGE", "11:30", "urn:li:corpuser:bob"),
        ("urn:li:actionRequest:u", "APPLIED", "INFERRED_FROM_CHANGE", "12:30", "urn:li:corpuser:bob"),
    ]
    assert rows(built.filter("proposal_urn like '%:d'"), "proposed") == [({"domains": f'["{MARKETING}"]'},)]


@pytest.mark.parametrize("check", ["built", pytest.param("incremental", marks=pytest.mark.slow)])
def test_lifecycle_events_and_incremental_equals_full(batch, check):
    tag_proposal = create("urn:li:actionRequest:t", "10:00", "TAG_ASSOCIATION", tagUrn=PII)
    accepted = create("urn:li:actionRequest:k", "10:00", "TAG_ASSOCIATION", tagUrn="urn:li:tag:gold")
    first = batch(requests=[tag_proposal, accepted])
    second = batch(
        requests=[completed("urn:li:actionRequest:k", "10:30", "ACCEPTED")],
        changes=[change("t1", "11:00", "TAG", tagUrn=PII)],  # applies the first proposal in a later run
    )
    if check == "incremental":
        assert_incremental_equals_full(proposals.SPEC, first, second)
        return assert_incremental_equals_full(proposal_events.SPEC, first, second)
    steps = build_all(proposal_events.SPEC, {name: first[name].unionByName(second[name]) for name in first})
    assert rows(steps, "proposal_urn", "event", "status_rule", "event_time", "source_event_id") == [
        ("urn:li:actionRequest:k", "ACCEPTED", "STATUS_EVENT", "10:30", "s-urn:li:actionRequest:k-10:30"),
        ("urn:li:actionRequest:k", "CREATED", None, "10:00", "c-urn:li:actionRequest:k"),
        ("urn:li:actionRequest:t", "APPLIED", "INFERRED_FROM_CHANGE", "11:00", "t1"),
        ("urn:li:actionRequest:t", "CREATED", None, "10:00", "c-urn:li:actionRequest:t"),
    ]


@pytest.mark.slow  # builds three times
def test_decision_without_resource_keeps_sibling_decisions_incrementally(batch):
    """A late status event that names no resource rebuilds its proposal's resource; the other
    proposals of that resource keep their own resource-less decisions (two hops of linking)."""

    def decided(urn, time, result):
        return {**completed(urn, time, result), "resource_urn": None}

    first = batch(
        requests=[
            create("urn:li:actionRequest:a", "10:00", "TAG_ASSOCIATION", tagUrn=PII),
            create("urn:li:actionRequest:b", "10:00", "TAG_ASSOCIATION", tagUrn="urn:li:tag:gold"),
            decided("urn:li:actionRequest:b", "10:30", "REJECTED"),
        ]
    )
    second = batch(requests=[decided("urn:li:actionRequest:a", "11:00", "ACCEPTED")])
    assert_incremental_equals_full(proposals.SPEC, first, second)
    assert_incremental_equals_full(proposal_events.SPEC, first, second)


@pytest.mark.parametrize("check", ["built", pytest.param("incremental", marks=pytest.mark.slow)])
def test_structured_property_and_glossary_term_proposals_are_inferred(batch, check):
    """STRUCTURED_PROPERTY_ASSOCIATION (`structuredProperties`) is applied by a STRUCTURED_PROPERTY
    ADD/MODIFY of the property on the resource; CREATE_GLOSSARY_TERM (`glossaryEntityName`,
    `parentNodeUrn`) by the creation of that glossary term."""
    tier = "urn:li:structuredProperty:io.acryl.tier"
    term = "urn:li:glossaryTerm:Revenue"

    def term_proposal(urn, name):
        return {**create(urn, "10:00", "CREATE_GLOSSARY_TERM", glossaryEntityName=name,
                         parentNodeUrn="urn:li:glossaryNode:Finance"), "resource_urn": None, "resource_type": None}  # fmt: skip

    first = batch(
        requests=[
            create("urn:li:actionRequest:p", "10:00", "STRUCTURED_PROPERTY_ASSOCIATION",
                   structuredProperties=[dict(propertyUrn=tier, values=["gold"])]),
            term_proposal("urn:li:actionRequest:g", "Revenue"),
            term_proposal("urn:li:actionRequest:n", "Margin"),
        ],
        changes=[change("s0", "09:00", "STRUCTURED_PROPERTY", propertyUrn=tier)],  # before: not its effect
    )  # fmt: skip
    second = batch(
        changes=[
            change("s1", "11:00", "STRUCTURED_PROPERTY", operation="MODIFY", propertyUrn=tier,
                   propertyValues=["gold"]),
            change("g1", "11:30", "LIFECYCLE", entity=term, operation="CREATE"),
        ]
    )  # fmt: skip
    if check == "incremental":
        assert_incremental_equals_full(proposals.SPEC, first, second)
        return assert_incremental_equals_full(proposal_events.SPEC, first, second)
    built = build_all(proposals.SPEC, {name: first[name].unionByName(second[name]) for name in first})
    assert rows(built, *STATUS) == [
        ("urn:li:actionRequest:g", "APPLIED", "INFERRED_FROM_CHANGE", "11:30", "urn:li:corpuser:bob"),
        ("urn:li:actionRequest:n", "PENDING", None, None, None),
        ("urn:li:actionRequest:p", "APPLIED", "INFERRED_FROM_CHANGE", "11:00", "urn:li:corpuser:bob"),
    ]


def test_a_workflow_form_request_is_a_proposal_with_its_result_resource_and_times(spark):
    """From the events as DataHub Cloud emits them, typed by silver: created without its
    resource, a step accepted, completed five hours later with its result and the resource."""
    hour = 3_600_000
    created = 1_767_222_000_000
    events = forms.form_events((created, created + hour, created + 5 * hour))
    typed = datahub_action_requests.transform(bronze_frame(spark, events)).drop(ERRORS_COLUMN)
    batch = {AR: typed, DH: source(spark, DH)}

    built = build_all(proposals.SPEC, batch)

    assert built.count() == 1
    row = built.first()
    assert (row.proposal_urn, row.action_request_type, row.source) == (
        forms.FORM_REQUEST,
        "WORKFLOW_FORM_REQUEST",
        "datahub",
    )
    assert (row.resource_urn, row.resource_type) == (forms.FORM_RESOURCE, "dataset")
    assert (row.status, row.status_rule) == ("ACCEPTED", "STATUS_EVENT")
    assert (row.created_by, row.resolved_by) == (forms.REQUESTER, forms.APPROVER)
    assert row.hours_to_resolution == 5.0
    assert row.proposed == {
        "workflowUrn": forms.WORKFLOW,
        "fields": json.dumps(json.loads(forms.FORM_FIELDS), separators=(",", ":")),
        "expiresAtMs": str(forms.EXPIRES_AT_MS),
    }
    steps = build_all(proposal_events.SPEC, batch).orderBy("event_time").collect()
    assert [(r.event, r.actor) for r in steps] == [
        ("CREATED", forms.REQUESTER),
        ("STEP_COMPLETED", forms.APPROVER),
        ("ACCEPTED", forms.APPROVER),
    ]
    assert_incremental_equals_full(
        proposals.SPEC,
        {AR: typed.where("operation = 'CREATE'"), DH: source(spark, DH)},
        {AR: typed.where("operation <> 'CREATE'"), DH: source(spark, DH)},
    )
