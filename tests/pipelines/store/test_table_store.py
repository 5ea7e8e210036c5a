"""Table-store behaviour on real Delta tables, for every engine available here."""

from __future__ import annotations

import datetime as dt
import os
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from pyspark.sql import Row

from pipelines.store import open_store
from pipelines.store.engine import Engine
from pipelines.store.pruning import AtLeast, In, Missing
from tests.support.engines import engine_store
from tests.support.tables import spark_jobs

UTC = dt.timezone.utc
pytestmark = pytest.mark.usefixtures("small_input")  # a few rows per table: run as a small input


@pytest.fixture
def any_store(engine, spark, warehouse):
    return engine_store(spark, warehouse, engine)


def _rows(spark, items):
    return spark.createDataFrame(
        [
            Row(id=i, name=n, day=d, ts=dt.datetime(2024, 1, 1, 12, 0, i, 123456, tzinfo=UTC))
            for i, n, d in items
        ]
    )


def _sorted(df, *cols):
    return [tuple(r) for r in df.select(*cols).orderBy(*cols).collect()]


def test_append_creates_then_adds(any_store, spark):
    any_store.append(_rows(spark, [(1, "a", "2024-01-01")]), "silver.t")
    any_store.append(_rows(spark, [(2, "b", "2024-01-02")]), "silver.t")
    assert _sorted(any_store.read("silver.t"), "id", "name") == [(1, "a"), (2, "b")]
    assert any_store.version("silver.t") == 1


def test_timestamps_keep_microseconds_in_utc(any_store, spark):
    any_store.append(_rows(spark, [(7, "a", "2024-01-01")]), "silver.t")
    value = any_store.read("silver.t").first()["ts"]
    assert value.replace(tzinfo=None) == dt.datetime(2024, 1, 1, 12, 0, 7, 123456)


def test_overwrite_replaces_everything(any_store, spark):
    any_store.append(_rows(spark, [(1, "a", "d1"), (2, "b", "d2")]), "gold.t")
    any_store.overwrite(_rows(spark, [(3, "c", "d3")]), "gold.t")
    assert _sorted(any_store.read("gold.t"), "id") == [(3,)]


def test_partitioned_overwrite_touches_only_named_partitions(any_store, spark):
    any_store.append(_rows(spark, [(1, "a", "d1"), (2, "b", "d2")]), "gold.p", partition_by=["day"])
    any_store.overwrite(_rows(spark, [(3, "c", "d2")]), "gold.p", partitions=[{"day": "d2"}])
    assert _sorted(any_store.read("gold.p"), "id", "day") == [(1, "d1"), (3, "d2")]


def test_reads_keep_the_tables_column_order_partitioned_or_not(any_store, spark):
    """Spark's parquet reader puts partition columns last; readers must get the table's order."""
    any_store.append(_rows(spark, [(1, "a", "d1")]), "silver.p", partition_by=["day"])
    any_store.append(_rows(spark, [(2, "b", "d2")]), "silver.p", partition_by=["day"])
    any_store.append(_rows(spark, [(1, "a", "d1")]), "gold.u")
    for table in ("silver.p", "gold.u"):
        assert any_store.read(table).columns == ["id", "name", "day", "ts"]
    assert any_store.read_added_since("silver.p", 0).columns == ["id", "name", "day", "ts"]
    assert _sorted(any_store.read_added_since("silver.p", 0), "id", "day") == [(2, "d2")]


def test_partition_columns_survive_with_odd_values(any_store, spark):
    any_store.append(_rows(spark, [(1, "a", "x/y = z"), (2, "b", None)]), "gold.p", partition_by=["day"])
    assert _sorted(any_store.read("gold.p"), "id", "day") == [(1, "x/y = z"), (2, None)]


@pytest.mark.parametrize("counted", [None, 4], ids=["spark-written-source", "counted-source-by-arrow"])
def test_merge_upserts_and_deletes(any_store, spark, counted):
    any_store.append(_rows(spark, [(1, "a", "d"), (2, "b", "d"), (3, "c", "d")]), "gold.m")
    changes = spark.createDataFrame(
        [
            Row(id=2, name="B", day="d", ts=dt.datetime(2024, 2, 1, tzinfo=UTC), _delete=False),
            Row(id=3, name="c", day="d", ts=dt.datetime(2024, 2, 1, tzinfo=UTC), _delete=True),
            Row(id=4, name="d", day="d", ts=dt.datetime(2024, 2, 1, tzinfo=UTC), _delete=False),
            Row(id=5, name="e", day="d", ts=dt.datetime(2024, 2, 1, tzinfo=UTC), _delete=True),
        ]
    )
    any_store.merge(changes, "gold.m", keys=["id"], delete_flag="_delete", rows=counted)
    assert _sorted(any_store.read("gold.m"), "id", "name") == [(1, "a"), (2, "B"), (4, "d")]
    updated = any_store.read("gold.m").where("id = 2").first()["ts"]
    assert updated.replace(tzinfo=None) == dt.datetime(2024, 2, 1)


def _grouped(spark, items, **extra):
    return spark.createDataFrame([Row(id=i, grp=g, name=n, **extra) for i, g, n in items])


def test_replace_groups_deletes_updates_and_inserts_like_a_merge(any_store, spark):
    any_store.append(_grouped(spark, [(1, "a", "x"), (2, "a", "x"), (3, "b", "x"), (4, "c", "x")]), "gold.g")
    rebuilt = _grouped(spark, [(1, "a", "new"), (4, "a", "moved"), (5, "a", "new")])
    touched = spark.createDataFrame([Row(grp="a"), Row(grp="z")])
    written = any_store.replace_groups(rebuilt, "gold.g", "grp", touched, keys=["id"], metadata={"w": 1})
    assert written == 3
    # 2: its group was replaced without it; 4: its key moved it from group c to a; 3: untouched
    rows = _sorted(any_store.read("gold.g"), "id", "grp", "name")
    assert rows == [(1, "a", "new"), (3, "b", "x"), (4, "a", "moved"), (5, "a", "new")]
    assert any_store.last_metadata("gold.g", "w") == 1


def test_rows_added_since_a_group_replacement_are_the_replacing_rows_alone(any_store, spark):
    """Rows the replacement copied unchanged out of the files it rewrote are no new rows: a table
    reading this one incrementally sees the touched groups only."""
    any_store.append(_grouped(spark, [(1, "a", "x"), (2, "b", "x"), (3, "c", "x")]).coalesce(1), "gold.r")
    before = any_store.version("gold.r")
    touched = spark.createDataFrame([Row(grp="b")])
    any_store.replace_groups(_grouped(spark, [(2, "b", "y")]), "gold.r", "grp", touched, keys=["id"])
    added = any_store.read_added_since("gold.r", before)
    assert _sorted(added, "id", "name") == [(2, "y")]
    assert any_store.count_added_since("gold.r", before) == 1
    assert _sorted(any_store.read("gold.r"), "id", "name") == [(1, "x"), (2, "y"), (3, "x")]


def test_replace_groups_with_no_rows_empties_the_groups_and_creates_missing_tables(any_store, spark):
    any_store.append(_grouped(spark, [(1, "a", "x"), (2, "b", "x")]), "gold.e")
    nothing = spark.createDataFrame([], "id long, grp string, name string")
    touched = spark.createDataFrame([Row(grp="a")])
    assert any_store.replace_groups(nothing, "gold.e", "grp", touched, keys=["id"], metadata={"w": 2}) == 0
    assert _sorted(any_store.read("gold.e"), "id") == [(2,)]
    assert any_store.last_metadata("gold.e", "w") == 2
    created = any_store.replace_groups(
        _grouped(spark, [(7, "q", "y")]), "gold.n", "grp", touched, keys=["id"]
    )
    assert created == 1 and _sorted(any_store.read("gold.n"), "id", "grp") == [(7, "q")]


def test_the_default_replace_groups_merge_gives_the_same_rows(store, spark):
    """Engines without their own `replace_groups` (delta-spark) take the Engine default: a merge."""
    store.append(_grouped(spark, [(1, "a", "x"), (2, "a", "x"), (3, "b", "x"), (4, "c", "x")]), "gold.d")
    rebuilt = _grouped(spark, [(1, "a", "new"), (4, "a", "moved"), (5, "a", "new")])
    touched = spark.createDataFrame([Row(grp="a")])
    ref = store.ref("gold.d")
    assert Engine.replace_groups(store.engine, rebuilt, ref, "grp", touched, ["id"], None) == 3
    rows = _sorted(store.read("gold.d"), "id", "grp", "name")
    assert rows == [(1, "a", "new"), (3, "b", "x"), (4, "a", "moved"), (5, "a", "new")]


def test_replace_groups_rewrites_only_the_files_holding_affected_rows(store, spark):
    store.append(_grouped(spark, [(1, "a", "x")]).coalesce(1), "gold.f")
    store.append(_grouped(spark, [(2, "b", "x")]).coalesce(1), "gold.f")
    store.append(_grouped(spark, [(3, "c", "x")]).coalesce(1), "gold.f")
    before = set(DeltaTable(store.path("gold.f")).file_uris())
    touched = spark.createDataFrame([Row(grp="b")])
    store.replace_groups(_grouped(spark, [(2, "b", "y"), (1, "a", "y")]), "gold.f", "grp", touched, ["id"])
    after = set(DeltaTable(store.path("gold.f")).file_uris())
    assert len(before - after) == 2, "the files of row 1 (key match) and group b are replaced"
    assert len(before & after) == 1, "the file of group c is kept as it is"
    assert _sorted(store.read("gold.f"), "id", "name") == [(1, "y"), (2, "y"), (3, "x")]


def _intervals(spark, items):
    """Rows of an interval table: (id, group, is_current, valid_to day of January or None)."""
    return spark.createDataFrame(
        [
            Row(
                id=i, grp=g, is_current=c, valid_to=None if d is None else dt.datetime(2024, 1, d, tzinfo=UTC)
            )
            for i, g, c, d in items
        ],
        "id long, grp string, is_current boolean, valid_to timestamp",
    )


def test_replace_where_replaces_the_selected_rows_and_keeps_the_layout(any_store, spark):
    rows = [
        (1, "a", False, 2),
        (2, "a", False, 20),
        (3, "a", True, None),
        (4, "b", True, None),
        (5, "b", False, 3),
    ]
    any_store.overwrite(_intervals(spark, rows), "gold.i", partition_by=["is_current"])
    since = dt.datetime(2024, 1, 10, tzinfo=UTC)
    selections = [
        [In("grp", ["a"]), In("is_current", [True])],
        [In("grp", ["a"]), In("is_current", [False]), AtLeast("valid_to", since)],
    ]
    assert _sorted(any_store.read_any("gold.i", selections), "id") == [(2,), (3,)]
    new = _intervals(spark, [(2, "a", False, 25), (6, "a", True, None)])
    assert any_store.replace_where(new, "gold.i", selections, metadata={"w": 3}) == 2
    assert _sorted(any_store.read("gold.i"), "id", "is_current") == [
        (1, False),
        (2, False),
        (4, True),
        (5, False),
        (6, True),
    ]
    assert any_store.read("gold.i").where("id = 2").first()["valid_to"].day == 25
    assert any_store.last_metadata("gold.i", "w") == 3
    assert any_store.replace_where(new.limit(0), "gold.i", [[In("grp", ["nothing"])]]) == 0
    assert any_store.read("gold.i").count() == 5


def test_bounded_reads_and_replacements_skip_files_that_cannot_match(store, spark):
    """delta-rs decides by each file's partition value and statistics which files to open: the
    other partition and the files of other days are neither read nor rewritten."""
    store.overwrite(_intervals(spark, [(1, "a", True, None)]), "gold.j", partition_by=["is_current"])
    for day in (1, 2, 3):
        store.append(_intervals(spark, [(10 + day, "a", False, day)]).coalesce(1), "gold.j")
    late = [In("is_current", [False]), AtLeast("valid_to", dt.datetime(2024, 1, 3, tzinfo=UTC))]
    assert len(store.read("gold.j", where=late).inputFiles()) == 1
    before = set(DeltaTable(store.path("gold.j")).file_uris())
    store.replace_where(_intervals(spark, [(13, "a", False, 4)]), "gold.j", [late])
    after = set(DeltaTable(store.path("gold.j")).file_uris())
    assert len(before - after) == 1, "only the file of the 3rd is rewritten"
    assert _sorted(store.read("gold.j"), "id") == [(1,), (11,), (12,), (13,)]
    assert all("is_current=" in uri for uri in after), "partitioned as created"


def test_replace_groups_with_collected_groups_finds_the_same_files_without_a_spark_job(spark, warehouse):
    """delta-rs looks up collected `group_values` and copies kept rows with pyarrow: the same rows
    (types intact) and the same files replaced as the Spark path, with fewer Spark jobs."""
    when = dt.datetime(2024, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)
    rebuilt = _grouped(spark, [(1, "a", "new"), (6, "a", "moved"), (7, "d", "new")], ts=when, tags=["n"])
    touched = spark.createDataFrame([Row(grp="a"), Row(grp=None), Row(grp="z")], "grp string")
    outcome = {}
    for how, values in (("spark", None), ("arrow", ["a", None, "z"])):
        store = open_store(spark, warehouse / how, "delta-rs")
        # the first file predates the group column: its rows have no group, row 6 moves by its key
        store.append(spark.createDataFrame([Row(id=6, name="x"), Row(id=8, name="x")]).coalesce(1), "gold.v")
        store.append(
            _grouped(spark, [(1, "a", "x"), (2, "a", "x"), (9, "e", "x")], ts=when, tags=["x", "y"]).coalesce(
                1
            ),
            "gold.v",
        )
        store.append(_grouped(spark, [(3, "b", "x")], ts=when, tags=["z"]).coalesce(1), "gold.v")
        no_group = spark.createDataFrame([(4, None, "x")], "id long, grp string, name string")
        store.append(no_group.coalesce(1), "gold.v")
        before = set(DeltaTable(store.path("gold.v")).file_uris())
        written, jobs = spark_jobs(
            spark,
            lambda store=store, values=values: store.replace_groups(
                rebuilt, "gold.v", "grp", touched, ["id"], group_values=values
            ),
        )
        after = set(DeltaTable(store.path("gold.v")).file_uris())
        rows = [
            (*row[:3], row[3] and row[3].replace(tzinfo=None), row[4])
            for row in _sorted(store.read("gold.v"), "id", "grp", "name", "ts", "tags")
        ]
        outcome[how] = (written, len(before - after), rows, jobs)
    assert outcome["arrow"][:3] == outcome["spark"][:3]
    written, replaced, rows, _ = outcome["arrow"]
    assert written == 3 and replaced == 2, "the file of group a and the file holding key 6"
    at = when.replace(tzinfo=None)
    new, old = (at, ["n"]), (at, ["x", "y"])
    assert rows == [
        (1, "a", "new", *new),
        (3, "b", "x", at, ["z"]),
        (4, None, "x", None, None),
        (6, "a", "moved", *new),
        (7, "d", "new", *new),
        (8, None, "x", None, None),
        (9, "e", "x", *old),
    ]
    assert outcome["arrow"][3] < outcome["spark"][3], "no Spark job finds or copies the kept rows"


def test_time_travel_and_history_with_metadata(any_store, spark):
    any_store.append(_rows(spark, [(1, "a", "d")]), "silver.h", metadata={"watermark": 5})
    any_store.overwrite(_rows(spark, [(2, "b", "d")]), "silver.h", metadata={"watermark": 9})
    assert _sorted(any_store.read("silver.h", version=0), "id") == [(1,)]
    assert _sorted(any_store.read("silver.h"), "id") == [(2,)]
    history = any_store.history("silver.h")
    assert [c["version"] for c in history] == [1, 0]
    assert any_store.last_metadata("silver.h", "watermark") == 9


def test_read_added_since_returns_only_new_rows(any_store, spark):
    any_store.append(_rows(spark, [(1, "a", "d")]), "bronze.b")
    any_store.append(_rows(spark, [(2, "b", "d"), (3, "c", "d")]), "bronze.b")
    assert _sorted(any_store.read_added_since("bronze.b", 0), "id") == [(2,), (3,)]
    assert _sorted(any_store.read_added_since("bronze.b", None), "id") == [(1,), (2,), (3,)]


def test_read_rows_filters_and_skips_columns_the_table_lacks(any_store, spark):
    any_store.append(_rows(spark, [(1, "a", "d1"), (2, "b", "d2")]), "ops.r")
    any_store.append(spark.createDataFrame([Row(id=3, name="a", day="d3", extra="x")]), "ops.r")
    rows = any_store.read_rows("ops.r", ["id", "day", "extra", "missing"], {"name": "a"})
    assert sorted((r["id"], r["day"], r["extra"]) for r in rows) == [(1, "d1", None), (3, "d3", "x")]
    assert all(set(r) == {"id", "day", "extra"} for r in rows)
    assert any_store.read_rows("ops.r", ["id"], {"name": "zzz"}) == []
    # the engines' shared Spark implementation answers the same
    through_spark = Engine.read_rows(
        any_store.engine, any_store.ref("ops.r"), ["id", "extra"], [[In("name", ["a"])]]
    )
    assert sorted((r["id"], r["extra"]) for r in through_spark) == [(1, None), (3, "x")]


def test_read_rows_of_selections_takes_rows_matching_any(any_store, spark):
    any_store.append(_rows(spark, [(1, "a", "d1"), (2, "b", "d2"), (3, None, "d3")]), "ops.r")
    selections = [[In("name", ["a", "b"]), AtLeast("id", 2)], [Missing("name")]]
    rows = any_store.read_rows("ops.r", ["id"], selections=selections)
    assert sorted(r["id"] for r in rows) == [2, 3]
    assert sorted(r["id"] for r in any_store.read_rows("ops.r", ["id"], selections=[[Missing("extra")]])) == [
        1,
        2,
        3,
    ]


@pytest.mark.parametrize("partition_by", [[], ["day"]], ids=["unpartitioned", "partitioned"])
def test_read_rows_finds_values_longer_than_the_statistics_keep(any_store, spark, partition_by):
    """A key such as an event id (64 hex digits) has no min/max in the log; its rows are found
    by that key all the same, alone or with a bound on another column."""
    long_a, long_b = "a" * 64, "b" * 64
    any_store.append(_rows(spark, [(1, long_a, "d1")]), "silver.k", partition_by=partition_by)
    any_store.append(_rows(spark, [(2, long_b, "d2"), (3, "c", "d2")]), "silver.k", partition_by=partition_by)
    assert [r["id"] for r in any_store.read_rows("silver.k", ["id"], {"name": long_a})] == [1]
    rows = any_store.read_rows(
        "silver.k", ["id"], selections=[[In("name", [long_a, long_b]), In("day", ["d2"])]]
    )
    assert [r["id"] for r in rows] == [2]


def test_read_rows_filters_strings_of_a_table_a_merge_wrote(store, spark):
    """delta-rs writes a merge's strings as string_view, which a filter on a string value does
    not compare with: the rows are found all the same."""
    store.append(_rows(spark, [(1, "a", "d1"), (2, "b", "d2")]), "ops.r")
    store.merge(_rows(spark, [(2, "c", "d2"), (4, "d", "d4")]), "ops.r", keys=["id"])
    assert sorted(r["id"] for r in store.read_rows("ops.r", ["id"], {"name": "c"})) == [2]
    rows = store.read_rows("ops.r", ["id"], selections=[[In("day", ["d1", "d4"])], [AtLeast("name", "d")]])
    assert sorted(r["id"] for r in rows) == [1, 4]


def test_tally_added_since_counts_rows_and_flagged_rows_per_value(any_store, spark):
    def landed(rows):
        return spark.createDataFrame(rows, "source_file string, is_corrupt boolean, n int")

    any_store.append(landed([("a", False, 1), ("a", True, 2), ("b", False, 3)]), "bronze.t")
    first = any_store.version("bronze.t")
    any_store.append(landed([("b", True, 4), ("c", None, 5), ("c", False, 6)]), "bronze.t")
    expected_all = {"a": (2, 1), "b": (2, 1), "c": (2, 0)}
    assert any_store.tally_added_since("bronze.t", None, "source_file", "is_corrupt") == expected_all
    assert any_store.tally_added_since("bronze.t", first, "source_file", "is_corrupt") == {
        "b": (1, 1),
        "c": (2, 0),
    }
    assert (
        any_store.tally_added_since("bronze.t", any_store.version("bronze.t"), "source_file", "is_corrupt")
        == {}
    )
    # the engines' shared Spark implementation answers the same
    ref = any_store.ref("bronze.t")
    assert Engine.tally_added_since(any_store.engine, ref, None, "source_file", "is_corrupt") == expected_all


def test_only_appended_since_tells_appends_from_rewrites(any_store, spark):
    any_store.append(_rows(spark, [(1, "a", "d")]), "silver.o")
    any_store.append(_rows(spark, [(2, "b", "d")]), "silver.o")
    any_store.commit_no_rows(_rows(spark, [(1, "a", "d")]).limit(0), "silver.o", metadata={"w": 1})
    assert any_store.only_appended_since("silver.o", 0)
    assert any_store.only_appended_since("silver.o", any_store.version("silver.o"))  # nothing since
    any_store.merge(_rows(spark, [(2, "B", "d")]), "silver.o", keys=["id"])
    merged = any_store.version("silver.o")
    any_store.append(_rows(spark, [(3, "c", "d")]), "silver.o")
    assert not any_store.only_appended_since("silver.o", 0)
    assert any_store.only_appended_since("silver.o", merged)
    any_store.overwrite(_rows(spark, [(4, "d", "d")]), "silver.o")
    assert not any_store.only_appended_since("silver.o", merged)


def test_rows_changed_since_ignores_commits_that_change_no_row(any_store, spark):
    any_store.append(_rows(spark, [(1, "a", "d")]), "silver.r")
    any_store.append(_rows(spark, [(2, "b", "d")]), "silver.r")
    read = any_store.version("silver.r")
    assert not any_store.rows_changed_since("silver.r", read)  # no commit since
    any_store.commit_no_rows(_rows(spark, [(1, "a", "d")]).limit(0), "silver.r", metadata={"w": 1})
    assert any_store.compact("silver.r", target_bytes=1 << 30).files_removed == 2
    assert any_store.version("silver.r") == read + 2
    assert not any_store.rows_changed_since("silver.r", read)  # an empty append, a compaction
    any_store.append(_rows(spark, [(3, "c", "d")]), "silver.r")
    assert any_store.rows_changed_since("silver.r", read)
    latest = any_store.version("silver.r")
    any_store.replace_where(_rows(spark, [(1, "a", "d")]).limit(0), "silver.r", [[In("id", [1])]])
    assert any_store.rows_changed_since("silver.r", latest)  # a row removed, none added


def test_only_appended_since_is_unsure_without_the_commits(store, spark):
    store.append(_rows(spark, [(1, "a", "d")]), "silver.x")
    store.append(_rows(spark, [(2, "b", "d")]), "silver.x")
    DeltaTable(store.path("silver.x")).create_checkpoint()
    os.remove(os.path.join(store.path("silver.x"), "_delta_log", f"{1:020d}.json"))
    assert store.version("silver.x") == 1
    assert not store.only_appended_since("silver.x", 0)


def test_new_columns_are_added_and_missing_ones_filled(any_store, spark):
    any_store.append(spark.createDataFrame([Row(id=1, a="x")]), "silver.e")
    any_store.append(spark.createDataFrame([Row(id=2, b="y")]), "silver.e")
    rows = _sorted(any_store.read("silver.e"), "id", "a", "b")
    assert rows == [(1, "x", None), (2, None, "y")]


def test_tables_written_are_valid_delta_for_delta_rs_itself(store, spark):
    store.append(_rows(spark, [(1, "a", "d1"), (2, "b", "d2")]), "gold.v", partition_by=["day"])
    table = DeltaTable(store.path("gold.v"))
    data = table.to_pyarrow_table().sort_by("id").to_pydict()
    assert data["id"] == [1, 2] and data["day"] == ["d1", "d2"]
    actions = pa.table(table.get_add_actions(flatten=True)).to_pydict()
    assert sorted(actions["num_records"]) == [1, 1]
    assert sorted(actions["min.id"]) == [1, 2]
    assert sorted(actions["max.name"]) == ["a", "b"]


def test_killed_write_leaves_no_visible_rows_and_vacuum_cleans_it(store, spark, tmp_path):
    store.append(_rows(spark, [(1, "a", "d")]), "bronze.k")
    engine = store.engine
    path = store.path("bronze.k")
    engine._stage(_rows(spark, [(2, "b", "d")]), path, [])  # files written, commit never made
    assert _sorted(store.read("bronze.k"), "id") == [(1,)]
    removed = store.vacuum("bronze.k", retention_hours=0)
    assert removed, "the orphaned Parquet file should be deleted"
    assert _sorted(store.read("bronze.k"), "id") == [(1,)]


def test_append_rows_writes_small_rows_readable_by_spark(any_store, spark):
    from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

    schema = StructType(
        [
            StructField("id", LongType(), False),
            StructField("note", StringType()),
            StructField("at", TimestampType(), False),
        ]
    )
    when = dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC)
    any_store.append_rows([(1, None, when)], schema, "ops.o")
    any_store.append_rows([(2, "x", when)], schema, "ops.o")
    rows = _sorted(any_store.read("ops.o"), "id", "note")
    assert rows == [(1, None), (2, "x")]
    assert any_store.read("ops.o").first()["at"].replace(tzinfo=None) == when.replace(tzinfo=None)


def _spark_wrote(path: str) -> list[bool]:
    """Per live data file of the table: does its footer carry Spark's schema (a Spark write)?"""
    files = DeltaTable(path).file_uris()
    return [
        b"org.apache.spark.sql.parquet.row.metadata" in (pq.read_metadata(f).metadata or {}) for f in files
    ]


def test_an_append_of_counted_rows_written_by_arrow_equals_a_spark_write(store, spark, monkeypatch):
    """The caller's row count lets the delta-rs engine collect a small frame and write it with
    pyarrow: the rows, types and file statistics are those of a Spark write."""
    # one file either way (coalesce), so the statistics compare file to file
    frame = (
        spark.createDataFrame(
            [
                (
                    1,
                    "a",
                    None,
                    dt.datetime(2024, 1, 1, 12, 0, 1, 123456, tzinfo=UTC),
                    dt.date(2024, 1, 1),
                    True,
                ),
                (2, None, 2.5, dt.datetime(2024, 3, 1, 0, 0, 0, 7, tzinfo=UTC), None, None),
            ],
            "id long, name string, score double, at timestamp, day date, flag boolean",
        )
        .selectExpr(
            "*",
            "map('k', name, 'n', cast(id as string)) AS tags",
            "array(named_struct('urn', name, 'at', at)) AS items",
        )
        .coalesce(1)
    )
    store.append(frame, "silver.by_spark")
    store.append(frame, "silver.by_arrow", rows=2)
    monkeypatch.setattr("pipelines.store.delta_rs.ARROW_WRITE_ROWS", 1)
    store.append(frame, "silver.too_many", rows=2)
    assert _spark_wrote(store.path("silver.by_arrow")) == [False]
    assert (
        set(_spark_wrote(store.path("silver.by_spark")))
        == set(_spark_wrote(store.path("silver.too_many")))
        == {True}
    )
    by_spark, by_arrow = store.read("silver.by_spark"), store.read("silver.by_arrow")
    assert by_arrow.schema == by_spark.schema
    assert by_arrow.orderBy("id").collect() == by_spark.orderBy("id").collect()
    assert store.max_micros("silver.by_arrow", "at") == store.max_micros("silver.by_spark", "at")
    assert _file_statistics(store.path("silver.by_arrow")) == _file_statistics(store.path("silver.by_spark"))


def _file_statistics(path: str) -> dict:
    """The Delta statistics of a table's one data file (rows, nulls, min and max per column)."""
    actions = pa.table(DeltaTable(path).get_add_actions(flatten=True)).to_pydict()
    kept = ("num_records", "null_count.", "min.", "max.")
    return {column: values for column, values in actions.items() if column.startswith(kept)}


def test_count_added_since_matches_the_rows_read(any_store, spark):
    any_store.append(_rows(spark, [(1, "a", "d1"), (2, "b", "d2")]), "bronze.c", partition_by=["day"])
    any_store.append(_rows(spark, [(3, "c", "d1")]), "bronze.c")
    assert any_store.count_added_since("bronze.c", None) == 3
    assert (
        any_store.count_added_since("bronze.c", 0) == 1 == any_store.read_added_since("bronze.c", 0).count()
    )


def _micros(value: dt.datetime) -> int:
    return (value - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(microseconds=1)


def test_max_micros_is_the_newest_timestamp_at_a_version(any_store, spark):
    newest = dt.datetime(2024, 1, 1, 12, 0, 5, 123456, tzinfo=UTC)
    any_store.append(_rows(spark, [(5, "a", "d1"), (2, "b", "d2")]), "silver.m", partition_by=["day"])
    any_store.append(_rows(spark, [(1, "c", "d1")]), "silver.m")
    no_time = spark.createDataFrame([Row(id=9, name="n", day="d3")]).selectExpr(
        "*", "cast(null as timestamp) ts"
    )
    any_store.append(no_time, "silver.m")
    assert any_store.max_micros("silver.m", "ts") == _micros(newest)
    assert any_store.max_micros("silver.m", "ts", version=0) == _micros(newest)
    assert any_store.max_micros("silver.m", "ts", version=2) == _micros(newest)
    any_store.commit_no_rows(no_time.limit(0), "silver.empty")
    assert any_store.max_micros("silver.empty", "ts") is None


def test_max_micros_reads_file_statistics_without_a_spark_job(store, spark):
    store.append(_rows(spark, [(3, "a", "d1")]), "silver.s")
    store.append(_rows(spark, [(8, "b", "d1")]), "silver.s")
    newest = _micros(dt.datetime(2024, 1, 1, 12, 0, 8, 123456, tzinfo=UTC))
    found, jobs = spark_jobs(spark, lambda: store.max_micros("silver.s", "ts"))
    assert (found, jobs) == (newest, 0)  # our own commits' statistics keep microseconds
    DeltaTable(store.path("silver.s")).optimize.compact()  # delta-rs writes these files' statistics
    found, jobs = spark_jobs(spark, lambda: store.max_micros("silver.s", "ts"))
    assert (found, jobs) == (newest - 456, 0)  # ...to the millisecond: at most 1 ms below


def test_vacuum_leftovers_removes_only_unfinished_writes_older_than_the_retention(store):
    def leftover(folder: str, age_hours: float):
        part = store.warehouse / folder / "part-00000.parquet"
        part.parent.mkdir(parents=True)
        part.write_bytes(b"PAR1")
        then = time.time() - age_hours * 3600
        os.utime(part, (then, then))
        os.utime(part.parent, (then, then))
        return str(part.parent)

    old_merge = leftover("_tmp/old", 3)
    young_merge = leftover("_tmp/young", 0)
    old_staging = leftover("silver/never_committed/_staging/old", 3)  # no Delta log: not a table
    assert sorted(store.vacuum_leftovers(retention_hours=1, dry_run=True)) == [old_merge, old_staging]
    assert os.path.isdir(old_merge)
    assert sorted(store.vacuum_leftovers(retention_hours=1)) == [old_merge, old_staging]
    assert not os.path.exists(old_merge) and not os.path.exists(old_staging)
    assert os.path.isdir(young_merge)


def test_files_rewritten_by_compaction_are_not_read_as_added(any_store, spark):
    """A compaction adds files with dataChange=false: they hold no new rows."""
    any_store.append(_rows(spark, [(1, "a", "d1")]), "bronze.r")
    any_store.append(_rows(spark, [(2, "b", "d1")]), "bronze.r")
    assert any_store.compact("bronze.r", target_bytes=1 << 30).files_removed == 2
    DeltaTable(
        any_store.path("bronze.r")
    ).create_checkpoint()  # incremental reads must not depend on the log being uncheckpointed
    compacted = any_store.version("bronze.r")
    assert any_store.count_added_since("bronze.r", compacted) == 0
    assert any_store.read_added_since("bronze.r", compacted).count() == 0
    assert any_store.only_appended_since("bronze.r", 0)  # rewritten rows live on: nothing removed

    any_store.append(_rows(spark, [(3, "c", "d1")]), "bronze.r")
    assert _sorted(any_store.read_added_since("bronze.r", compacted), "id") == [(3,)]
    assert any_store.count_added_since("bronze.r", compacted) == 1
    # row 2 was appended after version 0 and then rewritten: still new once, not twice, not lost
    assert _sorted(any_store.read_added_since("bronze.r", 0), "id") == [(2,), (3,)]
    assert any_store.count_added_since("bronze.r", 0) == 2


def test_compactable_files_are_the_small_ones_sharing_a_partition(any_store, spark):
    """Counted from the snapshot: files under the target size, in partitions holding two or more."""
    for i in range(3):
        any_store.append(_rows(spark, [(i, "a", "d1")]), "silver.flat", metadata={"source_version": i})
    assert any_store.compactable_files("silver.flat", target_bytes=1 << 30) == 3
    assert any_store.compactable_files("silver.flat", target_bytes=1) == 0  # none is small
    any_store.append(_rows(spark, [(1, "a", "d1")]), "silver.parted", partition_by=["day"])
    any_store.append(_rows(spark, [(2, "b", "d2")]), "silver.parted", partition_by=["day"])
    assert any_store.compactable_files("silver.parted", target_bytes=1 << 30) == 0  # one file a partition
    any_store.append(_rows(spark, [(3, "c", "d2")]), "silver.parted", partition_by=["day"])
    assert any_store.compactable_files("silver.parted", target_bytes=1 << 30) == 2


def test_compact_merges_small_files_and_changes_no_answer(any_store, spark):
    for i in range(3):
        any_store.append(_rows(spark, [(i, f"n{i}", "d1")]), "silver.c", metadata={"source_version": 10 + i})
    before = any_store.version("silver.c")
    done = any_store.compact("silver.c", target_bytes=1 << 30)
    assert (done.files_removed, done.files_added) == (3, 1)
    assert any_store.version("silver.c") == before + 1
    assert len(any_store.read("silver.c").inputFiles()) == 1
    assert _sorted(any_store.read("silver.c"), "id", "name", "ts") == _sorted(
        any_store.read("silver.c", before), "id", "name", "ts"
    )
    assert _sorted(any_store.read("silver.c"), "id", "name") == [(0, "n0"), (1, "n1"), (2, "n2")]
    assert _sorted(any_store.read("silver.c", version=1), "id") == [(0,), (1,)]  # time travel unchanged
    assert any_store.count_added_since("silver.c", before) == 0  # no reader sees new rows
    assert any_store.only_appended_since("silver.c", 0)
    assert any_store.last_metadata("silver.c", "source_version") == 12  # watermarks survive
    assert any_store.compactable_files("silver.c", target_bytes=1 << 30) == 0


def test_compact_keeps_rows_written_before_and_after_a_new_column(any_store, spark):
    """Schema drift adds columns to silver tables; files with and without them merge into one."""
    any_store.append(spark.createDataFrame([(1, "a")], "id long, name string"), "silver.drift")
    wider = "id long, name string, extra map<string,string>, codes array<int>"
    any_store.append(spark.createDataFrame([(2, "b", {"k": "v"}, [1, 2])], wider), "silver.drift")
    any_store.append(spark.createDataFrame([(3, "c")], "id long, name string"), "silver.drift")
    assert any_store.compact("silver.drift", target_bytes=1 << 30).files_removed == 3
    assert sorted(map(tuple, any_store.read("silver.drift").collect())) == [
        (1, "a", None, None),
        (2, "b", {"k": "v"}, [1, 2]),
        (3, "c", None, None),
    ]


def test_commit_no_rows_creates_the_table_then_only_records_metadata(any_store, spark):
    empty = _rows(spark, [(1, "a", "2024-01-01")]).limit(0)
    any_store.commit_no_rows(empty, "silver.t", partition_by=["day"], metadata={"source_version": 3})
    assert any_store.read("silver.t").count() == 0
    assert any_store.read("silver.t").columns == empty.columns
    assert any_store.last_metadata("silver.t", "source_version") == 3

    any_store.append(_rows(spark, [(1, "a", "2024-01-01")]), "silver.t")
    any_store.commit_no_rows(empty, "silver.t", partition_by=["day"], metadata={"source_version": 4})
    assert _sorted(any_store.read("silver.t"), "id", "day") == [(1, "2024-01-01")]
    assert any_store.last_metadata("silver.t", "source_version") == 4
    assert any_store.version("silver.t") == 2


def test_the_delta_rs_engine_allocates_arrow_buffers_with_the_system_pool(spark, warehouse):
    """Its pyarrow copies of gold files held ~2x the RSS in mimalloc, pyarrow's default."""
    open_store(spark, warehouse, "delta-rs")
    assert pa.default_memory_pool().backend_name == "system"
