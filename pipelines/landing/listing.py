"""Listing a source's landing folder: only the folders that may hold something new.

Why: the landing only grows. Listing and `stat`-ing every file ever landed on every run made
each run pay for the whole history of the landing (about a millisecond a file). A folder whose
modification time is the one it had when a run last listed it, settled (`FolderMark`), holds
the same entries: it is not listed again, only its sub-folders are visited (their names are in
its mark). So a run looks at the folders that changed, not at the files that were already
there: with files landed into dated folders, as the collectors do, at today's files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.landing.discovery import LandingFile
from pipelines.landing.folder_marks import FolderMark

IGNORED_PREFIXES = (".", "_")  # uploads in flight, hidden files


@dataclass(frozen=True)
class ListedFolder:
    """A folder this run listed: its key below the source folder, its modification time and
    sub-folders, and whether it had not changed for the settle time when it was listed."""

    key: str
    modified_ns: int
    subfolders: tuple[str, ...]
    quiet: bool

    def mark(self) -> FolderMark:
        return FolderMark(self.key, self.modified_ns, self.subfolders)


@dataclass
class Listing:
    """What a listing found: the files of the folders it listed (sorted by key), those folders,
    and how many settled folders it did not list."""

    files: list[LandingFile] = field(default_factory=list)
    listed: list[ListedFolder] = field(default_factory=list)
    unchanged: int = 0


def folder_of(key: str) -> str:
    """The folder key of a file key (`2024/05/a.jsonl` -> `2024/05`; `a.jsonl` -> ``)."""
    return key.rpartition("/")[0]


def _joined(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def list_landing(
    folder: Path,
    marks: dict[str, FolderMark] | None = None,
    settle_seconds: float = 0.0,
    now_ns: int | None = None,
) -> Listing:
    """The files below `folder` in folders that changed since their mark (every folder without
    `marks`), skipping names that start with `.` or `_` (uploads in flight) and not following
    links to folders. A folder counts as quiet when its last change is `settle_seconds` old."""
    listing = Listing()
    root = Path(os.path.abspath(folder))
    if not root.is_dir():
        return listing
    marks = marks or {}
    now_ns = now_ns if now_ns is not None else _now_ns()
    settle_ns = int(settle_seconds * 1e9)
    pending = [""]
    while pending:
        key = pending.pop()
        path = os.path.join(root, key) if key else str(root)
        try:
            modified_ns = os.stat(path).st_mtime_ns
        except OSError:
            continue  # gone since its parent was listed
        mark = marks.get(key)
        if mark is not None and mark.modified_ns == modified_ns:
            listing.unchanged += 1
            pending.extend(_joined(key, name) for name in mark.subfolders)
            continue
        subfolders = _list_folder(path, key, listing.files)
        listing.listed.append(ListedFolder(key, modified_ns, subfolders, now_ns - modified_ns >= settle_ns))
        pending.extend(_joined(key, name) for name in subfolders)
    listing.files.sort(key=lambda f: f.key)
    return listing


def _list_folder(path: str, key: str, files: list[LandingFile]) -> tuple[str, ...]:
    """Append the files of one folder to `files`; returns its sub-folders' names."""
    subfolders = []
    try:
        entries = list(os.scandir(path))
    except OSError:
        return ()
    for entry in entries:
        name = entry.name
        if name.startswith(IGNORED_PREFIXES):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                subfolders.append(name)
                continue
            if entry.is_symlink() and entry.is_dir():
                continue  # a link to a folder: not followed
        except OSError:
            pass
        info = _stat_or_none(entry.path)
        if info is not None:
            files.append(LandingFile(entry.path, info.st_size, int(info.st_mtime * 1000), _joined(key, name)))
    return tuple(sorted(subfolders))


def _stat_or_none(path: str) -> os.stat_result | None:
    """The file's stat; its own (link) stat when it cannot be followed, so that a file bronze
    cannot read is still seen and logged; None when it is gone since it was listed."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return os.lstat(path)


def _now_ns() -> int:
    import time

    return time.time_ns()


def discover(folder: Path) -> list[LandingFile]:
    """Every file below `folder` (every folder listed), by key."""
    return list_landing(folder).files
