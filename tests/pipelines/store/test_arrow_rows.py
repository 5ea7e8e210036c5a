"""Finding and copying Parquet rows that match a selection with pyarrow (the delta-rs engine's
replacement of groups and rows)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.store.arrow_rows import BATCH_ROWS, RowMatch, copy_rows_except, holds_any
from pipelines.store.pruning import AtLeast, In

UTC = dt.timezone.utc


def _file(tmp_path, name, columns: dict) -> str:
    path = str(tmp_path / name)
    pq.write_table(pa.table(columns), path, row_group_size=2)  # several batches per file
    return path


def _any(*selections) -> RowMatch:
    return RowMatch.any_of([list(s) for s in selections])


def test_holds_any_looks_at_every_batch_and_ignores_missing_columns(tmp_path):
    path = _file(tmp_path, "a.parquet", {"id": [1, 2, 3, 4, 5], "grp": ["a", "a", None, "b", "c"]})
    assert holds_any(path, _any([In("grp", ["c"])])), "in the last batch"
    assert holds_any(path, _any([In("grp", ["z"])], [In("id", [3])]))
    assert not holds_any(path, _any([In("grp", ["z"])], [In("other", ["a"])]))
    assert not holds_any(path, _any([In("grp", [None])])), "a null matches nothing"
    assert not holds_any(path, _any([In("grp", ["a"]), In("id", [3])])), (
        "every bound of a selection must hold"
    )


def test_a_selection_mixes_sets_and_lower_bounds(tmp_path):
    times = [dt.datetime(2024, 1, d, tzinfo=UTC) for d in (1, 2, 3)]
    path = _file(
        tmp_path, "t.parquet", {"grp": ["a", "a", "b"], "t": pa.array(times, pa.timestamp("us", tz="UTC"))}
    )
    later = AtLeast("t", dt.datetime(2024, 1, 2, tzinfo=UTC))
    assert holds_any(path, _any([In("grp", ["a"]), later]))
    assert not holds_any(path, _any([In("grp", ["a"]), AtLeast("t", dt.datetime(2024, 1, 3))])), (
        "a naive bound is UTC"
    )


def test_partition_values_decide_their_bounds_per_file(tmp_path):
    path = _file(tmp_path, "p.parquet", {"grp": ["a", "b"]})
    match = _any([In("grp", ["a"]), In("is_current", [True])])
    assert holds_any(path, match.for_file({"is_current": "true"}))
    assert not holds_any(path, match.for_file({"is_current": "false"}))
    assert match.for_file({"is_current": "false"}).nothing


def test_copy_rows_except_keeps_the_other_rows_and_the_schema(tmp_path):
    when = dt.datetime(2024, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)
    columns = {
        "id": pa.array([1, 2, 3, 4, 5], pa.int64()),
        "grp": ["a", "b", None, "a", "c"],
        "ts": pa.array([when] * 5, pa.timestamp("us", tz="UTC")),
        "tags": [["x"], [], None, ["y", "z"], ["w"]],
    }
    source = pq.read_table(_file(tmp_path, "s.parquet", columns))
    (tmp_path / "out").mkdir()
    copied = copy_rows_except(
        str(tmp_path / "s.parquet"), _any([In("grp", ["a"])], [In("id", [5])]), str(tmp_path / "out")
    )
    kept = pq.read_table(copied)
    assert kept.schema == source.schema
    assert kept.to_pylist() == [row for row in source.to_pylist() if row["id"] in (2, 3)]
    gone = copy_rows_except(
        str(tmp_path / "s.parquet"), _any([In("id", [1, 2, 3, 4, 5])]), str(tmp_path / "out")
    )
    assert gone is None and len(list((tmp_path / "out").iterdir())) == 1, "no empty file is written"


def test_copy_reads_a_large_row_group_in_bounded_batches(tmp_path):
    """A Spark-written file is often one large row group; the copy must not decode it whole."""
    rows = 2 * BATCH_ROWS + 100
    path = str(tmp_path / "big.parquet")
    pq.write_table(pa.table({"id": pa.array(range(rows), pa.int64())}), path, row_group_size=rows)
    (tmp_path / "out").mkdir()
    copied = pq.ParquetFile(copy_rows_except(path, _any([In("id", [0, rows - 1])]), str(tmp_path / "out")))
    sizes = [copied.metadata.row_group(i).num_rows for i in range(copied.metadata.num_row_groups)]
    assert max(sizes) <= BATCH_ROWS and sum(sizes) == rows - 2
    assert copied.read().column("id").to_pylist() == list(range(1, rows - 1))
