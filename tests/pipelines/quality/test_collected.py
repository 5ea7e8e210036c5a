"""A suite counted on rows collected once gives what its aggregation gives, outcome for outcome."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from pipelines import quality
from pipelines.quality import checked_rows, measure_collected, measure_output, table_rows

RULES = [
    {
        "type": "expect_column_values_to_not_be_null",
        "kwargs": {"column": "entity_urn"},
        "meta": {"name": "entity_present", "severity": "fail", "example_columns": ["row_id", "tag"]},
    },
    {
        "type": "expect_column_values_to_be_in_set",
        "kwargs": {"column": "tag", "value_set": ["a", "b"]},
        "meta": {"name": "tag_known", "severity": "warn"},
    },
    {
        "type": "expect_column_pair_values_a_to_be_greater_than_b",
        "kwargs": {"column_A": "valid_to", "column_B": "valid_from", "or_equal": True},
        "meta": {"name": "ends_after_start", "severity": "warn"},
    },
    {
        "type": "expect_column_values_to_be_unique",
        "kwargs": {"column": "row_id"},
        "meta": {"name": "row_id_unique", "severity": "warn"},
    },
    {
        "type": "expect_compound_columns_to_be_unique",
        "kwargs": {"column_list": ["entity_urn", "tag", "valid_from"]},
        "meta": {"name": "one_interval_a_start", "severity": "warn"},
    },
    {
        "type": "expect_intervals_to_not_overlap_per_key",
        "kwargs": {
            "column_list": ["entity_urn", "tag"],
            "from_column": "valid_from",
            "to_column": "valid_to",
        },
        "meta": {"name": "no_overlap", "severity": "warn"},
    },
]
COLUMNS = "row_id string, entity_urn string, tag string, valid_from timestamp, valid_to timestamp"


def _at(day: int) -> dt.datetime:
    return dt.datetime(2024, 1, day)


ROWS = [
    ("1", "e1", "a", _at(1), _at(3)),
    ("2", "e1", "a", _at(2), None),  # overlaps the first
    ("3", "e1", "c", _at(1), _at(1)),  # an unknown tag
    ("3", "e2", "c", _at(5), _at(4)),  # the id again, the tag again, ends before it starts
    ("5", None, "b", _at(1), None),  # no entity
    ("6", "e3", "b", _at(1), _at(2)),
    ("7", "e3", "b", _at(1), _at(2)),  # the same start again
    ("8", "e3", "z", None, None),
]


@pytest.fixture
def suite(tmp_path):
    path = tmp_path / "gold.t.json"
    path.write_text(
        json.dumps(
            {"name": "gold.t", "meta": {"table": "gold.t", "row_key": "row_id"}, "expectations": RULES}
        )
    )
    return quality.parse_suite(path)


def test_the_collected_rows_give_the_aggregations_outcomes_and_the_rows_themselves(spark, suite):
    frame = spark.createDataFrame(ROWS, COLUMNS)
    checked, checks = checked_rows(frame, suite)

    collected = checked.toArrow()
    total, outcomes = measure_collected(collected, checks)

    assert (total, outcomes) == measure_output(frame, suite)
    assert {o.expectation.name: o.unexpected_count for o in outcomes} == {
        "entity_present": 1,
        "tag_known": 3,
        "ends_after_start": 3,  # two open intervals (the default ignores only both missing), one backwards
        "row_id_unique": 1,
        "one_interval_a_start": 2,
        "no_overlap": 2,
    }
    assert sorted(table_rows(collected, checks).to_pylist(), key=repr) == sorted(
        frame.toArrow().to_pylist(), key=repr
    )


def test_failing_values_come_most_frequent_first_with_the_row_keys_that_hold_them(spark, suite):
    frame = spark.createDataFrame(ROWS, COLUMNS)
    checked, checks = checked_rows(frame, suite)

    _, outcomes = measure_collected(checked.toArrow(), checks)

    tags = next(o for o in outcomes if o.expectation.name == "tag_known")
    assert tags.failing_values == (
        quality.FailingValue("c", 2, ("3",)),
        quality.FailingValue("z", 1, ("8",)),
    )
    assert tags.examples == ("c", "z")
    entity = next(o for o in outcomes if o.expectation.name == "entity_present")
    assert entity.failing_values == (quality.FailingValue("5|b", 1, ("5",)),)


def test_no_rows_and_no_suite(spark, suite):
    empty = spark.createDataFrame([], COLUMNS)
    checked, checks = checked_rows(empty, suite)
    assert measure_collected(checked.toArrow(), checks) == measure_output(empty, suite)

    frame = spark.createDataFrame(ROWS, COLUMNS)
    checked, checks = checked_rows(frame, None)
    assert checks.names == []
    assert measure_collected(checked.toArrow(), checks) == (len(ROWS), [])
