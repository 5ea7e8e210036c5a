"""Finding and copying Parquet rows by value with pyarrow (the delta-rs engine's group replacement)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.store.arrow_rows import BATCH_ROWS, copy_rows_except, holds_any, value_sets

UTC = dt.timezone.utc


def _file(tmp_path, name, columns: dict) -> str:
    path = str(tmp_path / name)
    pq.write_table(pa.table(columns), path, row_group_size=2)  # several batches per file
    return path


def test_value_sets_drop_nulls_and_empty_sets():
    sets = value_sets({"grp": ["a", None], "id": pa.chunked_array([[None]], pa.int64()), "k": []})
    assert list(sets) == ["grp"]
    assert sets["grp"].to_pylist() == ["a"]


def test_holds_any_looks_at_every_batch_and_ignores_missing_columns(tmp_path):
    path = _file(tmp_path, "a.parquet", {"id": [1, 2, 3, 4, 5], "grp": ["a", "a", None, "b", "c"]})
    assert holds_any(path, value_sets({"grp": ["c"]})), "in the last batch"
    assert holds_any(path, value_sets({"grp": ["z"], "id": [3]}))
    assert not holds_any(path, value_sets({"grp": ["z"], "other": ["a"]}))
    assert not holds_any(path, value_sets({"grp": [None]})), "a null matches nothing"


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
        str(tmp_path / "s.parquet"), value_sets({"grp": ["a"], "id": [5]}), str(tmp_path / "out")
    )
    kept = pq.read_table(copied)
    assert kept.schema == source.schema
    assert kept.to_pylist() == [row for row in source.to_pylist() if row["id"] in (2, 3)]
    gone = copy_rows_except(
        str(tmp_path / "s.parquet"), value_sets({"id": [1, 2, 3, 4, 5]}), str(tmp_path / "out")
    )
    assert gone is None and len(list((tmp_path / "out").iterdir())) == 1, "no empty file is written"


def test_copy_reads_a_large_row_group_in_bounded_batches(tmp_path):
    """A Spark-written file is often one large row group; the copy must not decode it whole."""
    rows = 2 * BATCH_ROWS + 100
    path = str(tmp_path / "big.parquet")
    pq.write_table(pa.table({"id": pa.array(range(rows), pa.int64())}), path, row_group_size=rows)
    (tmp_path / "out").mkdir()
    copied = pq.ParquetFile(copy_rows_except(path, value_sets({"id": [0, rows - 1]}), str(tmp_path / "out")))
    sizes = [copied.metadata.row_group(i).num_rows for i in range(copied.metadata.num_row_groups)]
    assert max(sizes) <= BATCH_ROWS and sum(sizes) == rows - 2
    assert copied.read().column("id").to_pylist() == list(range(1, rows - 1))
