"""Listing a landing folder: folders that kept their modification time since a settled listing
are not listed again, and any change to a folder's entries is noticed."""

from __future__ import annotations

import os
import time

from pipelines.landing.folder_marks import FolderMark
from pipelines.landing.listing import discover, folder_of, list_landing

HOUR_NS = 3600 * 10**9


def _write(path, text="{}\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _age(folder, seconds=3600):
    """Make a folder's last change `seconds` old, as a folder nothing touched since."""
    then = time.time() - seconds
    os.utime(folder, (then, then))


def _marks(listing):
    return {f.key: f.mark() for f in listing.listed}


def test_every_file_is_found_with_its_key_and_hidden_names_are_skipped(tmp_path):
    _write(tmp_path / "a.jsonl")
    _write(tmp_path / "2024" / "05" / "b.jsonl")
    _write(tmp_path / "_inflight.jsonl.part")
    _write(tmp_path / ".hidden" / "c.jsonl")
    _write(tmp_path / "_tmp" / "d.jsonl")
    listing = list_landing(tmp_path)
    assert [f.key for f in listing.files] == ["2024/05/b.jsonl", "a.jsonl"]
    assert {f.key for f in listing.listed} == {"", "2024", "2024/05"}
    assert discover(tmp_path) == listing.files
    assert all(os.path.isabs(f.path) and f.path.endswith(f.key) for f in listing.files)


def test_a_settled_unchanged_folder_is_not_listed_but_its_subfolders_are_visited(tmp_path):
    _write(tmp_path / "2024" / "old.jsonl")
    _write(tmp_path / "2025" / "new.jsonl")
    for folder in (tmp_path / "2024", tmp_path / "2025", tmp_path):
        _age(folder)
    first = list_landing(tmp_path, settle_seconds=60)
    assert all(f.quiet for f in first.listed)
    marks = _marks(first)

    _write(tmp_path / "2025" / "newer.jsonl")  # the 2025 folder changes; the others do not
    second = list_landing(tmp_path, marks, settle_seconds=60)
    assert [f.key for f in second.files] == ["2025/new.jsonl", "2025/newer.jsonl"]
    assert [f.key for f in second.listed] == ["2025"] and second.unchanged == 2
    assert not second.listed[0].quiet, "changed just now: not settled"


def test_a_new_subfolder_is_found_through_its_changed_parent(tmp_path):
    _write(tmp_path / "2024" / "a.jsonl")
    for folder in (tmp_path / "2024", tmp_path):
        _age(folder)
    marks = _marks(list_landing(tmp_path, settle_seconds=60))
    _write(tmp_path / "2025" / "b.jsonl")
    listing = list_landing(tmp_path, marks, settle_seconds=60)
    assert [f.key for f in listing.files] == ["2025/b.jsonl"]


def test_renamed_or_removed_entries_move_the_folder_so_it_is_listed_again(tmp_path):
    _write(tmp_path / "a.jsonl")
    _age(tmp_path)
    marks = _marks(list_landing(tmp_path, settle_seconds=60))
    (tmp_path / "a.jsonl").rename(tmp_path / "b.jsonl")
    assert [f.key for f in list_landing(tmp_path, marks, settle_seconds=60).files] == ["b.jsonl"]


def test_a_folder_that_changed_within_the_settle_time_is_not_quiet(tmp_path):
    _write(tmp_path / "a.jsonl")
    listing = list_landing(tmp_path, settle_seconds=60)
    assert not listing.listed[0].quiet
    now = os.stat(tmp_path).st_mtime_ns + 61 * 10**9
    assert list_landing(tmp_path, settle_seconds=60, now_ns=now).listed[0].quiet


def test_a_mark_of_another_time_does_not_skip_the_folder(tmp_path):
    _write(tmp_path / "a.jsonl")
    stale = {"": FolderMark("", os.stat(tmp_path).st_mtime_ns - HOUR_NS, ())}
    assert [f.key for f in list_landing(tmp_path, stale).files] == ["a.jsonl"]


def test_links_to_folders_are_not_followed(tmp_path):
    _write(tmp_path / "elsewhere" / "x.jsonl")
    landing = tmp_path / "landing"
    _write(landing / "a.jsonl")
    os.symlink(tmp_path / "elsewhere", landing / "linked")
    assert [f.key for f in list_landing(landing).files] == ["a.jsonl"]


def test_folder_of_a_key():
    assert folder_of("2024/05/a.jsonl") == "2024/05"
    assert folder_of("a.jsonl") == ""
