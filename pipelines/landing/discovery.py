"""Landing files: discovery, content hashes and format sniffing, on the driver.

Only metadata and one streaming read per *new* file happen here, so the cost
of a run follows the size of what arrived, not of the history. The streaming
read computes the sha256 and finds lines that are not valid UTF-8 (Spark's
text reader silently replaces such bytes, so bronze learns about them here).
"""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

LINES = "lines"  # JSON Lines: every non-blank line is a value
DOCUMENT = "document"  # the whole file is one JSON value
CORRUPT_DOCUMENT = "corrupt_document"  # one record, kept as is and marked corrupt
SNIFF_LINES = 20
BOM_BYTES = "\ufeff".encode("utf-8")


@dataclass(frozen=True)
class LandingFile:
    path: str
    size: int
    mtime_ms: int
    # the path below the source's landing folder: a file's identity (see `landing_key`)
    key: str | None = None

    @property
    def modified_at(self) -> dt.datetime:
        """The file's modification time (UTC): a property of the landed data, not of the run."""
        return dt.datetime.fromtimestamp(self.mtime_ms / 1000, dt.timezone.utc)


@dataclass
class FileScan:
    """What bronze needs to know about one new file before Spark reads it."""

    file: LandingFile
    sha256: str
    mode: str
    invalid_utf8_lines: dict[int, str] = field(default_factory=dict)  # line number -> original bytes, base64
    # JSON Lines where line i is record i: no blank line, no array, no wrapper. Spark can then
    # take records straight from the lines instead of the general (slower) per-file splitting.
    one_record_per_line: bool = False


def discover(folder: Path) -> list[LandingFile]:
    """Every regular file below `folder`, skipping hidden and `_`-prefixed names (in-flight uploads)."""
    found = []
    if not folder.is_dir():
        return found
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for name in sorted(files):
            if name.startswith((".", "_")):
                continue
            path = os.path.abspath(os.path.join(root, name))
            info = os.stat(path)
            found.append(
                LandingFile(path, info.st_size, int(info.st_mtime * 1000), landing_key(path, folder))
            )
    return found


def landing_key(path: str, folder: Path) -> str:
    """A landed file's identity: its path below the source folder, `/`-separated.

    Why not the absolute path: a landing folder that moves (a renamed project, another mount
    point, a copy on a new machine) still holds the same files, and must not be ingested again.
    Paths logged before keys existed are absolute; below a folder named like the source's
    (`.../datahub_ece/sub/f.jsonl` -> `sub/f.jsonl`) they get the same key.
    """
    folder = Path(os.path.abspath(folder))
    absolute = Path(path)
    if absolute.is_relative_to(folder):
        return absolute.relative_to(folder).as_posix()
    parts = absolute.parts
    for index in range(len(parts) - 2, -1, -1):
        if parts[index] == folder.name:
            return Path(*parts[index + 1 :]).as_posix()
    return absolute.as_posix()


def _open(path: str):
    return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")


def file_sha256(path: str) -> str:
    """sha256 of the stored bytes (cheap change detection for known paths)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _may_hold_other_than_one_record(line: bytes, wrappers: tuple[bytes, ...]) -> bool:
    """True unless `line` surely is exactly one record: not blank, not a JSON array, no wrapper
    field (a wrapper's name could also be spelled with a \\u escape). Erring towards True only
    costs speed."""
    stripped = line.strip().removeprefix(BOM_BYTES).lstrip()
    if not stripped or stripped.startswith(b"["):
        return True
    return bool(wrappers) and (b"\\u" in line or any(name in line for name in wrappers))


def scan(file: LandingFile, wrappers: tuple[str, ...] = ()) -> FileScan:
    """Hash, invalid-UTF-8 lines and the format of one file, in one streaming pass (two for .gz).

    `wrappers` are the field names that make a value hold records (e.g. `usageEvents`).
    """
    compressed = file.path.endswith(".gz")
    digest = hashlib.sha256()
    if compressed:  # the hash is of the stored bytes, the lines of the decompressed ones
        digest = hashlib.sha256(bytes.fromhex(file_sha256(file.path)))
    markers = tuple(name.encode("utf-8") for name in wrappers)
    invalid: dict[int, str] = {}
    head: list[bytes] = []
    irregular = False
    with _open(file.path) as handle:
        for number, line in enumerate(handle):
            if not compressed:
                digest.update(line)
            if len(head) < SNIFF_LINES and line.strip():
                head.append(line)
            if not irregular:
                irregular = _may_hold_other_than_one_record(line, markers)
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                invalid[number] = base64.b64encode(line.rstrip(b"\r\n")).decode("ascii")
    mode = _sniff(file.path, head)
    if mode != LINES and invalid:
        with _open(file.path) as handle:
            invalid = {0: base64.b64encode(handle.read()).decode("ascii")}
        mode = CORRUPT_DOCUMENT
    sha = file_sha256(file.path) if compressed else digest.hexdigest()
    return FileScan(file, sha, mode, invalid, one_record_per_line=mode == LINES and not irregular)


def _parses(text: bytes, want_object: bool = False) -> bool:
    try:
        value = json.loads(text.decode("utf-8", errors="replace").lstrip("\ufeff"))
    except (ValueError, RecursionError):  # deep nesting overflows Python's parser
        return False
    return isinstance(value, dict) or not want_object


def _sniff(path: str, head: list[bytes]) -> str:
    """JSON Lines when the first non-blank line is JSON by itself, else a document.

    A document that does not parse is still one record (kept, marked corrupt),
    unless some early line is a JSON object: then it is JSON Lines whose first
    line is damaged.
    """
    if not head:
        return LINES
    if _parses(head[0]):
        return LINES
    with _open(path) as handle:
        if _parses(handle.read()):
            return DOCUMENT
    if any(_parses(line, want_object=True) for line in head[1:]):
        return LINES
    return CORRUPT_DOCUMENT
