"""Durable, atomic landing files: the only way the collectors write into `<landing>/`.

A file is written under a `_`-prefixed name (landing discovery skips those, so bronze never
reads a half-written file), flushed and fsynced, renamed to its final name in one step, and the
folder is fsynced so the rename itself survives a power cut. After `write_atomically` returns,
the file is complete under its final name or, after a crash before that, absent (a leftover
`_` file is ignored by bronze and replaced by the next attempt).
"""

from __future__ import annotations

import os
from pathlib import Path

IN_FLIGHT_PREFIX = "_"


def fsync_folder(folder: Path) -> None:
    """Make a rename or a new file in `folder` durable (POSIX: the entry lives in the folder)."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def in_flight_path(final: Path) -> Path:
    """Where `final` is written before its rename: same folder, `_`-prefixed, unique per process."""
    return final.with_name(f"{IN_FLIGHT_PREFIX}{final.name}.{os.getpid()}.part")


def write_atomically(final: Path, data: bytes) -> Path:
    """Write `data` as `final`, all or nothing, durably; returns `final`.

    An existing `final` is replaced (the same content written again after a crash is harmless).
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    temporary = in_flight_path(final)
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, final)
    fsync_folder(final.parent)
    return final


def landing_file_name(prefix: str, sequence: int) -> str:
    """A landing file name no other writer picks: its time, the writing process and a sequence
    number (`received-20261202T101500123456-4242-000001.jsonl`)."""
    import datetime as dt

    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S%f")
    return f"{prefix}-{stamp}-{os.getpid()}-{sequence:06d}.jsonl"


def one_line(body: bytes) -> bytes:
    """A body as one JSON Lines line: its line breaks, which valid JSON only has as whitespace,
    become spaces."""
    return body.replace(b"\r", b" ").replace(b"\n", b" ").strip() + b"\n"


def parsed_first(bodies: list[tuple[bytes, bool]]) -> tuple[list[bytes], list[bytes]]:
    """`bodies` ((body, parses as JSON) pairs) as lines: those that parse, and those that do not.

    Why apart: bronze sniffs a file's format from its first line, so a file of received bodies
    starts with one that parses; a line that does not is then read as one corrupt record.
    """
    parsed = [one_line(body) for body, parses in bodies if parses]
    return parsed, [one_line(body) for body, parses in bodies if not parses]


class BatchFileWriter:
    """Writes batches of received bodies as JSON Lines files in one landing folder, atomically.

    A body becomes one line (`one_line`). Bodies that parse come first (`parsed_first`); a batch
    of unparseable bodies only is written one file per body, so each stays one record (bronze
    keeps it, marked corrupt, for the quarantine).
    """

    def __init__(self, folder: Path, prefix: str = "received") -> None:
        self.folder = folder
        self.prefix = prefix
        self._sequence = 0

    def _next_name(self) -> str:
        self._sequence += 1
        return landing_file_name(self.prefix, self._sequence)

    def write(self, bodies: list[tuple[bytes, bool]]) -> list[Path]:
        """`bodies`: (body, parses as JSON) pairs; returns the files written."""
        lines, broken = parsed_first(bodies)
        groups = [lines + broken] if lines else [[line] for line in broken]
        return [write_atomically(self.folder / self._next_name(), b"".join(group)) for group in groups]
