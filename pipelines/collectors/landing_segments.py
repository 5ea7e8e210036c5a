"""Open landing segments: many acknowledged batches of one source in one landing file.

Why: a landing file per request leaves bronze thousands of small files to list and open, and a
rename plus a folder fsync per request bounds how fast a sender that waits for every answer can
go. So the receiver keeps one open segment per source, `_open.<final name>` in the source's
landing folder, where bronze's discovery never looks (it skips `_` names). A batch is appended in
one write and fsynced (and a new segment's folder entry fsynced too): from then on its requests
may be answered. The segment is rolled, renamed to its final name and the folder fsynced, once
it holds `max_bytes` or its first batch is `max_seconds` old, and when the receiver stops; bronze
then reads it once, as any landing file.

A receiver that dies leaves its open segment behind, and what was acknowledged is in it. The
next receiver on the folder rolls it at its start (`recover`), cutting a torn last line: such a
line is part of a batch whose write never finished, so none of its requests was answered. Each
open segment is held under an exclusive `flock`, so a receiver never recovers a segment that
another live one on the same folder is still writing.

The first line of a segment is always a body that parses (bronze sniffs a file's format from
its first line): a batch of unparseable bodies only that would open a segment is written one
file per body instead, as `BatchFileWriter` does.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path

from pipelines.collectors.landing_writer import (
    IN_FLIGHT_PREFIX,
    fsync_folder,
    landing_file_name,
    parsed_first,
    write_atomically,
)

OPEN_PREFIX = f"{IN_FLIGHT_PREFIX}open."


def open_name(final_name: str) -> str:
    """The name a segment has while it is open (bronze's discovery skips it)."""
    return OPEN_PREFIX + final_name


def final_name(open_segment_name: str) -> str:
    return open_segment_name.removeprefix(OPEN_PREFIX)


def _locked(descriptor: int) -> bool:
    """Take the segment's exclusive lock; False when another process holds it."""
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def recover(folder: Path) -> list[Path]:
    """Roll every open segment in `folder` that no live receiver holds; returns the files made.

    Its content up to the last complete line is kept; a segment with no complete line is removed.
    """
    made, changed = [], False
    for path in sorted(folder.glob(OPEN_PREFIX + "*")):
        try:
            descriptor = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            continue  # rolled by its owner since the listing
        try:
            if not _locked(descriptor):
                continue
            size = os.fstat(descriptor).st_size
            kept = _complete_length(descriptor, size)
            if kept < size:
                os.ftruncate(descriptor, kept)
                os.fsync(descriptor)
            if kept == 0:
                path.unlink()
            else:
                final = path.with_name(final_name(path.name))
                os.rename(path, final)
                made.append(final)
            changed = True
        finally:
            os.close(descriptor)
    if changed:
        fsync_folder(folder)
    return made


def _complete_length(descriptor: int, size: int) -> int:
    """The length of the segment up to and including its last line break."""
    block = 1 << 16
    end = size
    while end > 0:
        start = max(0, end - block)
        chunk = os.pread(descriptor, end - start, start)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            return start + newline + 1
        end = start
    return 0


class SegmentWriter:
    """One source's open segment: `append` returns once a batch is durable, `roll_if_due` and
    `roll` make it a landing file. Not thread-safe: one writer task calls it."""

    def __init__(
        self,
        folder: Path,
        max_bytes: int,
        max_seconds: float,
        prefix: str = "received",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self.max_seconds = max_seconds
        self.prefix = prefix
        self.clock = clock
        self.files = 0  # landing files made (rolled segments, files of unparseable bodies)
        self.open_bytes = 0
        self._sequence = 0
        self._path: Path | None = None
        self._descriptor: int | None = None
        self._opened_at = 0.0

    def _next_name(self) -> str:
        self._sequence += 1
        return landing_file_name(self.prefix, self._sequence)

    def append(self, bodies: list[tuple[bytes, bool]]) -> None:
        """Append a batch ((body, parses as JSON) pairs), durably; on OSError nothing of it stays."""
        lines, broken = parsed_first(bodies)
        if self._descriptor is None and not lines:
            for line in broken:
                write_atomically(self.folder / self._next_name(), line)
                self.files += 1
            return
        data = b"".join(lines + broken)
        created = self._descriptor is None
        if created:
            self._open()
        try:
            _write_all(self._descriptor, data)
            os.fsync(self._descriptor)
            if created:
                fsync_folder(self.folder)
        except OSError:
            self._undo(created)
            raise
        self.open_bytes += len(data)

    def _open(self) -> None:
        path = self.folder / open_name(self._next_name())
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        _locked(descriptor)  # a new name: nobody else can hold it
        self._path, self._descriptor, self._opened_at, self.open_bytes = path, descriptor, self.clock(), 0

    def _undo(self, created: bool) -> None:
        """Take a failed append back out, so that what the segment holds was all acknowledged; a
        segment that cannot be cut back is left to `recover` at the next start (which keeps its
        complete lines) and a new one is opened for the next batch."""
        try:
            if not created:
                os.ftruncate(self._descriptor, self.open_bytes)
                return
            self._path.unlink()
        except OSError:
            pass
        os.close(self._descriptor)
        self._path = self._descriptor = None
        self.open_bytes = 0

    def seconds_until_due(self) -> float | None:
        """How long the open segment may stay open; None with no open segment."""
        if self._descriptor is None:
            return None
        return max(0.0, self._opened_at + self.max_seconds - self.clock())

    def is_due(self) -> bool:
        """Whether the open segment is full or old enough to be rolled."""
        left = self.seconds_until_due()
        return left is not None and (left == 0 or self.open_bytes >= self.max_bytes)

    def roll_if_due(self) -> Path | None:
        """Roll the open segment when it is due. A roll that fails is tried again `max_seconds`
        later (or after the next batch, when full), the segment staying open meanwhile."""
        if not self.is_due():
            return None
        try:
            return self.roll()
        except OSError:
            if self._descriptor is not None:
                self._opened_at = self.clock()
            return None

    def roll(self) -> Path | None:
        """Give the open segment its final name, durably; returns it (None with none open)."""
        if self._descriptor is None:
            return None
        final = self._path.with_name(final_name(self._path.name))
        os.rename(self._path, final)
        os.close(self._descriptor)
        self._path = self._descriptor = None
        self.open_bytes = 0
        self.files += 1
        fsync_folder(self.folder)
        return final
