"""The suite's table comparison (`tests.support.tables.table_differences`), which many tests
trust to say two warehouses hold the same rows: it must find every kind of difference."""

from __future__ import annotations

from tests.support.tables import table_differences

COLUMNS = "urn string, tags map<string,string>, run_id string"
ROWS = [("a", {"x": "1", "y": "2"}, "run-1"), ("b", {}, "run-1"), ("b", {}, "run-1")]


def test_equal_multisets_differ_in_nothing_whatever_the_order_and_run_columns(spark):
    reordered = [("b", {}, "run-2"), ("a", {"y": "2", "x": "1"}, "run-2"), ("b", {}, "run-2")]
    assert (
        table_differences(spark.createDataFrame(ROWS, COLUMNS), spark.createDataFrame(reordered, COLUMNS))
        is None
    )


def test_a_changed_value_a_missing_duplicate_and_an_extra_row_are_each_reported(spark):
    other = [("a", {"x": "1", "y": "3"}, "run-1"), ("b", {}, "run-1"), ("c", None, "run-1")]
    found = table_differences(spark.createDataFrame(ROWS, COLUMNS), spark.createDataFrame(other, COLUMNS))
    assert found is not None
    lines = found.splitlines()
    assert lines[0] == "2 rows only on the left, 2 only on the right"
    removed = [line for line in lines[1:] if line.startswith("  - ")]
    added = [line for line in lines[1:] if line.startswith("  + ")]
    assert len(removed) == len(added) == 2 and len(lines) == 5
    assert any('"y","value":"2"' in line for line in removed) and any('"urn":"b"' in line for line in removed)
    assert any('"y","value":"3"' in line for line in added) and any('"urn":"c"' in line for line in added)


def test_a_row_repeated_more_often_on_one_side_says_how_often(spark):
    left = spark.createDataFrame(ROWS + [("b", {}, "run-1")], COLUMNS)
    found = table_differences(left, spark.createDataFrame(ROWS[:2], COLUMNS))
    assert found.splitlines() == [
        "2 rows only on the left, 0 only on the right",
        '  - {"tags":[],"urn":"b"} (x2)',
    ]
