"""Group commit: the requests waiting for one source's segment land in one write and one fsync.

Why: a sender that waits for every answer (DataHub Actions, OpenMetadata's webhook) sends its
next event only after the last one is acknowledged, so the time to an answer is its whole pace,
and a timer that holds a batch open for more requests makes a lone sender wait for nothing.
Here a batch never waits: the writer takes every request pending when it is free and writes
them at once; requests that arrive while a write is in flight are the next batch. A lone request
is written as soon as it arrives; under load, batches grow by themselves to what arrived during
one write. Between batches the writer rolls the segment when it is due
(`SegmentWriter.roll_if_due`), waking for that even when no request comes.
"""

from __future__ import annotations

import asyncio

from pipelines.collectors.landing_segments import SegmentWriter
from pipelines.collectors.wire_forms import parses_as_json
from pipelines.runtime import faults

FAULT_AFTER_APPEND = "receiver_after_append"  # crash tests: a batch durable, its requests not answered


class GroupCommit:
    """Lands one source's requests in its open segment; `land` returns once they are durable.

    Created inside the running event loop; `close` lands what is pending, rolls the segment and
    stops the writer.
    """

    def __init__(self, segment: SegmentWriter) -> None:
        self.segment = segment
        self.bodies = 0  # records landed
        self._pending: list[tuple[list[bytes], asyncio.Future]] = []
        self._wake = asyncio.Event()
        self._closing = False
        self._writer = asyncio.get_running_loop().create_task(self._write_batches())

    async def land(self, records: list[bytes]) -> None:
        """Land the records of one request (in one batch), returning once they are durable;
        raises the OSError of a write that failed (nothing of the request is then landed)."""
        future = asyncio.get_running_loop().create_future()
        self._pending.append((records, future))
        self._wake.set()
        await future

    async def _write_batches(self) -> None:
        while True:
            if not self._pending and not self._closing:
                try:
                    await asyncio.wait_for(self._wake.wait(), self.segment.seconds_until_due())
                except asyncio.TimeoutError:
                    pass
            self._wake.clear()
            batch, self._pending = self._pending, []
            if batch:
                await self._write(batch)
            if self.segment.is_due():
                await asyncio.to_thread(self.segment.roll_if_due)
            if self._closing and not self._pending:
                await asyncio.to_thread(self._last_roll)
                return

    def _last_roll(self) -> None:
        try:
            self.segment.roll()
        except OSError:
            pass  # the segment stays open on disk: the next start recovers it (`landing_segments`)

    async def _write(self, batch: list[tuple[list[bytes], asyncio.Future]]) -> None:
        records = [record for request, _ in batch for record in request]
        try:
            await asyncio.to_thread(self._append, records)
        except Exception as exc:  # an OSError is a 503; anything else must not stop the writer either
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        self.bodies += len(records)
        for _, future in batch:
            if not future.done():
                future.set_result(None)

    def _append(self, records: list[bytes]) -> None:
        """In a worker thread: checking that each record parses costs as much as the write."""
        self.segment.append([(record, parses_as_json(record)) for record in records])
        faults.checkpoint(FAULT_AFTER_APPEND, self.segment.folder.name)

    async def close(self) -> None:
        """Land what is pending, roll the open segment, then stop."""
        self._closing = True
        self._wake.set()
        await self._writer
