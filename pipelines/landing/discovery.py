"""Landing files: what one file is (`LandingFile`), its content hash and format, on the driver.

Only one streaming read per *new* file happens here (`pipelines.landing.listing` finds them),
so the cost of a run follows the size of what arrived, not of the history. The streaming
read computes the sha256 and finds lines that are not valid UTF-8 (Spark's
text reader silently replaces such bytes, so bronze learns about them here).
"""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import hashlib
import io
import json
import os
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

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
    # a compressed file whose data is damaged (truncated, corrupt): what is wrong, and the bytes
    # it gave before the damage (Spark cannot read such a file, so bronze takes these instead)
    damage: str | None = None
    salvaged: bytes | None = None


def changed_since_discovery(file: LandingFile) -> str | None:
    """Why `file` is no longer as it was discovered (it is still being written), else None.

    Raises FileNotFoundError when it has gone meanwhile."""
    info = os.stat(file.path)
    mtime_ms = int(info.st_mtime * 1000)
    if info.st_size == file.size and mtime_ms == file.mtime_ms:
        return None
    return f"still being written: {file.size} bytes when found, {info.st_size} after reading"


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


Stored = Callable[[], BinaryIO]  # opens a landing file's stored bytes


def stored_on_disk(path: str) -> Stored:
    return lambda: open(path, "rb")


def stored_in_memory(data: bytes) -> Stored:
    """A file's bytes fetched already (through Spark, where the driver cannot see the landing)."""
    return lambda: io.BytesIO(data)


def _decoded(path: str, stored: Stored):
    return gzip.open(stored(), "rb") if path.endswith(".gz") else stored()


def file_sha256(stored: Stored) -> str:
    """sha256 of the stored bytes (cheap change detection for known paths)."""
    digest = hashlib.sha256()
    with stored() as handle:
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


def scan(file: LandingFile, wrappers: tuple[str, ...] = (), stored: Stored | None = None) -> FileScan:
    """Hash, invalid-UTF-8 lines and the format of one file, in one streaming pass (two for .gz).

    `wrappers` are the field names that make a value hold records (e.g. `usageEvents`).
    `stored` opens the file's bytes (by default from its path).
    A compressed file whose data is damaged is scanned as far as it decompresses, and says
    what is wrong in `damage`: one bad upload must not stop every later run.
    """
    stored = stored or stored_on_disk(file.path)
    try:
        return _scan(file, wrappers, lambda: _decoded(file.path, stored), stored)
    except (EOFError, zlib.error, gzip.BadGzipFile):
        if not file.path.endswith(".gz"):
            raise
    salvaged, damage = gzip_prefix(stored)
    found = _scan(file, wrappers, stored_in_memory(salvaged), stored)
    found.damage, found.salvaged = damage, salvaged
    return found


def _scan(file: LandingFile, wrappers: tuple[str, ...], opened, stored: Stored) -> FileScan:
    """`scan` over the bytes `opened()` gives (the file's, or the part of it that could be read)."""
    compressed = file.path.endswith(".gz")
    digest = hashlib.sha256()
    markers = tuple(name.encode("utf-8") for name in wrappers)
    invalid: dict[int, str] = {}
    head: list[bytes] = []
    irregular = False
    with opened() as handle:
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
    mode = _sniff(opened, head)
    if mode != LINES and invalid:
        with opened() as handle:
            invalid = {0: base64.b64encode(handle.read()).decode("ascii")}
        mode = CORRUPT_DOCUMENT
    sha = file_sha256(stored) if compressed else digest.hexdigest()
    return FileScan(file, sha, mode, invalid, one_record_per_line=mode == LINES and not irregular)


def gzip_prefix(stored: Stored) -> tuple[bytes, str]:
    """What a damaged gzip file decompresses to before the damage, and what the damage is.

    Streams member by member (a gzip file may hold several), keeping every byte the data
    yields up to the point where it stops making sense.
    """
    out = bytearray()
    inflater = zlib.decompressobj(wbits=31)
    fed = False  # whether the current member has had any input
    with stored() as handle:
        for chunk in iter(lambda: handle.read(1 << 16), b""):
            while chunk:
                try:
                    out += inflater.decompress(chunk)
                except zlib.error as exc:
                    return bytes(out), f"damaged gzip data after {len(out)} bytes ({exc})"
                fed = True
                if not inflater.eof:
                    break
                chunk, inflater, fed = inflater.unused_data, zlib.decompressobj(wbits=31), False
    if fed:
        return bytes(out), f"gzip data ends before its end marker (truncated) after {len(out)} bytes"
    return bytes(out), "gzip data damaged"


def _parses(text: bytes, want_object: bool = False) -> bool:
    try:
        value = json.loads(text.decode("utf-8", errors="replace").lstrip("\ufeff"))
    except (ValueError, RecursionError):  # deep nesting overflows Python's parser
        return False
    return isinstance(value, dict) or not want_object


def _sniff(opened, head: list[bytes]) -> str:
    """JSON Lines when the first non-blank line is JSON by itself, else a document.

    A document that does not parse is still one record (kept, marked corrupt),
    unless some early line is a JSON object: then it is JSON Lines whose first
    line is damaged.
    """
    if not head:
        return LINES
    if _parses(head[0]):
        return LINES
    with opened() as handle:
        if _parses(handle.read()):
            return DOCUMENT
    if any(_parses(line, want_object=True) for line in head[1:]):
        return LINES
    return CORRUPT_DOCUMENT
