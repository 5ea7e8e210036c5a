"""The generic SCD2 interval builder: every timeline rule on one association key."""

from __future__ import annotations

import pytest

from gold.intervals import build_intervals, interval_columns
from tests.support.gold import frame, rows

SCHEMA = (
    "source string, entity_urn string, parent_urn string, tag_urn string, action string, "
    "event_time timestamp, actor string, event_id string"
)
DS = "urn:li:dataset:orders"
FIELD = "urn:li:schemaField:(urn:li:dataset:orders,id)"
PII = "urn:li:tag:PII"
GOLD = "urn:li:tag:Gold"
OUT = (
    "entity_urn",
    "tag_urn",
    "valid_from",
    "valid_to",
    "is_current",
    "added_by",
    "removed_by",
    "end_reason",
)


def event(action: str, time: str, event_id: str, tag: str | None = PII, entity: str = DS, actor: str = "ann"):
    parent = DS if entity == FIELD else None
    return dict(
        source="datahub",
        entity_urn=entity,
        parent_urn=parent,
        tag_urn=tag,
        action=action,
        event_time=time,
        actor=actor,
        event_id=event_id,
    )


@pytest.fixture
def build(spark):
    def run(*events):
        return build_intervals(frame(spark, SCHEMA, events), ["tag_urn"])

    return run


def test_output_columns(build):
    assert build(event("ADD", "10:00", "e1")).columns == interval_columns(["tag_urn"])


def test_event_time_order_not_row_order(build):
    shuffled = build(event("REMOVE", "11:00", "e2", actor="bob"), event("ADD", "10:00", "e1"))
    assert rows(shuffled, *OUT) == [(DS, PII, "10:00", "11:00", False, "ann", "bob", "REMOVED")]


def test_duplicate_counts_once(build):
    out = build(event("ADD", "10:00", "e1"), event("ADD", "10:00", "e1"), event("ADD", "10:00", "e1-copy"))
    assert rows(out, "valid_from", "is_current", "valid_from_event_id") == [("10:00", True, "e1")]


def test_add_when_open_opens_nothing(build):
    out = build(
        event("ADD", "10:00", "e1"), event("ADD", "10:30", "e2", actor="bob"), event("REMOVE", "11:00", "e3")
    )
    assert rows(out, "valid_from", "valid_to", "added_by") == [("10:00", "11:00", "ann")]


def test_remove_without_add_closes_nothing(build):
    out = build(event("REMOVE", "09:00", "e0"), event("ADD", "10:00", "e1"), event("REMOVE", "11:00", "e2"))
    assert rows(out, "valid_from", "valid_to") == [("10:00", "11:00")]
    assert build(event("REMOVE", "09:00", "e0")).count() == 0


def test_reopen_gives_second_interval(build):
    out = build(event("ADD", "10:00", "e1"), event("REMOVE", "11:00", "e2"), event("ADD", "12:00", "e3"))
    assert rows(out, "valid_from", "valid_to", "is_current") == [
        ("10:00", "11:00", False),
        ("12:00", None, True),
    ]


def test_equal_time_processes_add_before_remove(build):
    out = build(event("REMOVE", "10:00", "a"), event("ADD", "10:00", "b"))
    assert rows(out, "valid_from", "valid_to", "end_reason") == [("10:00", "10:00", "REMOVED")]


def test_hard_delete_closes_entity_and_field_associations(build):
    out = build(
        event("ADD", "10:00", "e1"),
        event("ADD", "10:05", "e2", tag=GOLD),
        event("REMOVE", "10:10", "e3", tag=GOLD),
        event("ADD", "10:20", "e4", entity=FIELD),
        event("ENTITY_DELETED", "11:00", "del", tag=None, actor="admin"),
        event("ADD", "12:00", "e5"),  # the dataset is re-created and tagged again
    )
    assert rows(out, *OUT) == [
        (DS, GOLD, "10:05", "10:10", False, "ann", "ann", "REMOVED"),
        (DS, PII, "10:00", "11:00", False, "ann", "admin", "ENTITY_DELETED"),
        (DS, PII, "12:00", None, True, "ann", None, None),
        (FIELD, PII, "10:20", "11:00", False, "ann", "admin", "ENTITY_DELETED"),
    ]
    assert rows(out.filter("entity_urn = '" + FIELD + "'"), "parent_urn", "root_urn") == [(DS, DS)]


def test_delete_of_a_field_leaves_the_dataset_open(build):
    out = build(
        event("ADD", "10:00", "e1"),
        event("ADD", "10:00", "e2", entity=FIELD),
        event("ENTITY_DELETED", "11:00", "d", tag=None, entity=FIELD),
    )
    assert rows(out, "entity_urn", "is_current", "end_reason") == [
        (DS, True, None),
        (FIELD, False, "ENTITY_DELETED"),
    ]


def test_deletion_of_another_source_is_ignored(build):
    om_delete = {**event("ENTITY_DELETED", "11:00", "d", tag=None), "source": "openmetadata"}
    out = build(event("ADD", "10:00", "e1"), om_delete)
    assert rows(out, "is_current") == [(True,)]


def test_late_event_gives_in_order_answer(build):
    in_order = [event("ADD", "10:00", "e1"), event("REMOVE", "12:00", "e3"), event("ADD", "13:00", "e4")]
    late = event("REMOVE", "11:00", "e2", actor="late")
    expected = build(in_order[0], late, *in_order[1:])
    assert rows(build(*in_order, late), *OUT) == rows(expected, *OUT)
    assert rows(expected, "valid_from", "valid_to", "removed_by") == [
        ("10:00", "11:00", "late"),
        ("13:00", None, None),
    ]


def test_row_keys_are_unique_and_stable(build):
    events = [event("ADD", "10:00", "e1"), event("REMOVE", "11:00", "e2"), event("ADD", "12:00", "e3")]
    first = rows(build(*events), "timeline_id")
    assert len(set(first)) == 2 and first == rows(build(*reversed(events)), "timeline_id")
