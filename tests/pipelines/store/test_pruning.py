"""Which files a bounded read may skip: only those whose partition values or statistics rule out
every wanted row; a file without statistics is always read."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa

from pipelines.store.pruning import AtLeast, In, Missing, files_that_may_match, selections_sql

UTC = dt.timezone.utc
D = dt.date


def _files(**columns) -> pa.Table:
    rows = len(next(iter(columns.values())))
    return pa.table({"num_records": [10] * rows, **columns})


def _kept(files, bounds, partitions=()):
    return files_that_may_match(files, bounds, list(partitions)).to_pylist()


def test_statistics_skip_files_whose_range_holds_no_wanted_value():
    files = _files(
        **{
            "min.event_date": pa.array([D(2024, 1, 1), D(2024, 2, 1), None], pa.date32()),
            "max.event_date": pa.array([D(2024, 1, 31), D(2024, 2, 29), None], pa.date32()),
        }
    )
    assert _kept(files, [In("event_date", [D(2024, 2, 5)])]) == [False, True, True], "no statistics: read"
    assert _kept(files, [In("event_date", [D(2023, 5, 1), D(2024, 1, 31)])]) == [True, False, True]
    assert _kept(files, [AtLeast("event_date", D(2024, 2, 1))]) == [False, True, True]
    assert _kept(files, [In("event_date", [])]) == [False, False, False], "nothing wanted"


def test_timestamp_maxima_truncated_to_the_millisecond_still_match():
    files = _files(
        **{
            "min.t": pa.array([dt.datetime(2024, 1, 1, tzinfo=UTC)], pa.timestamp("us", tz="UTC")),
            "max.t": pa.array(
                [dt.datetime(2024, 1, 1, 0, 0, 0, 5000, tzinfo=UTC)], pa.timestamp("us", tz="UTC")
            ),
        }
    )
    assert _kept(files, [AtLeast("t", dt.datetime(2024, 1, 1, 0, 0, 0, 5500, tzinfo=UTC))]) == [True]
    assert _kept(files, [AtLeast("t", dt.datetime(2024, 1, 1, 0, 0, 0, 6001))]) == [False], "naive is UTC"


def test_partition_values_decide_as_the_log_writes_them():
    files = _files(**{"partition.is_current": pa.array(["true", "false", None])})
    assert _kept(files, [In("is_current", [True])], ["is_current"]) == [True, False, False]
    assert _kept(files, [Missing("is_current")], ["is_current"]) == [False, False, True]


def test_a_column_of_nulls_only_matches_no_value_but_may_match_missing():
    files = _files(**{"null_count.k": [10, 0], "min.k": ["a", "a"], "max.k": ["z", "z"]})
    assert _kept(files, [In("k", ["m"])]) == [False, True]
    assert _kept(files, [Missing("k")]) == [True, False]


def test_every_bound_of_a_selection_must_hold():
    files = _files(**{"min.a": [1, 5], "max.a": [3, 9], "min.b": ["x", "x"], "max.b": ["y", "y"]})
    assert _kept(files, [In("a", [2]), In("b", ["z"])]) == [False, False]
    assert _kept(files, [In("a", [2]), In("b", ["x"])]) == [True, False]


def test_selections_as_sql_quote_every_value():
    text = selections_sql([[In("k", ["it's"]), AtLeast("d", D(2024, 1, 1))], [Missing("k")], []])
    assert text == "(`k` IN ('it\\'s') AND `d` >= DATE'2024-01-01') OR (`k` IS NULL) OR true"
    assert selections_sql([]) == "false"
