"""Kept delta-rs handles: brought forward by later commits, never trusted for a table made anew."""

from __future__ import annotations

import shutil
import threading

import pyarrow as pa
from deltalake import write_deltalake

from pipelines.store.snapshots import LatestSnapshots


def _write(path, values, mode="append"):
    write_deltalake(str(path), pa.table({"n": pa.array(values, type=pa.int64())}), mode=mode)


def _values(table):
    return sorted(table.to_pyarrow_table().column("n").to_pylist())


def test_a_kept_handle_sees_commits_made_by_other_writers(tmp_path):
    path = tmp_path / "t"
    _write(path, [1])
    snapshots = LatestSnapshots()
    first = snapshots.latest(str(path))
    _write(path, [2])  # another writer: not through the handle
    _write(path, [3])
    again = snapshots.latest(str(path))
    assert again is first
    assert again.version() == 2
    assert _values(again) == [1, 2, 3]


def test_a_table_created_again_at_the_same_path_is_opened_afresh(tmp_path):
    path = tmp_path / "t"
    _write(path, [1])
    _write(path, [2])
    snapshots = LatestSnapshots()
    old = snapshots.latest(str(path))
    assert old.version() == 1
    shutil.rmtree(path)
    _write(path, [7])
    _write(path, [8])  # the same version number as the kept handle's, in a different file
    fresh = snapshots.latest(str(path))
    assert fresh is not old
    assert _values(fresh) == [7, 8]


def test_a_deleted_table_is_gone_and_its_handle_dropped(tmp_path):
    path = tmp_path / "t"
    _write(path, [1])
    snapshots = LatestSnapshots()
    assert snapshots.latest(str(path)) is not None
    shutil.rmtree(path)
    assert snapshots.latest(str(path)) is None
    assert snapshots.latest(str(tmp_path / "never")) is None


def test_each_thread_keeps_its_own_handle(tmp_path):
    path = tmp_path / "t"
    _write(path, [1])
    snapshots = LatestSnapshots()
    mine = snapshots.latest(str(path))
    theirs = []
    worker = threading.Thread(target=lambda: theirs.append(snapshots.latest(str(path))))
    worker.start()
    worker.join()
    assert theirs[0] is not mine
    assert theirs[0].version() == mine.version() == 0
